package social

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// File names of the kernelrank import format (README.md).
const (
	kernelrankUsers       = "users.jsonl"
	kernelrankFriends     = "friends.csv"
	kernelrankMemberships = "memberships.csv"
	kernelrankComments    = "comments.csv"
)

// loadKernelrank reads users.jsonl, then the optional friends.csv,
// memberships.csv and comments.csv.
func (b *builder) loadKernelrank() error {
	var users []User
	defined := map[string]int{}    // user id -> line
	photoOwner := map[string]int{} // photo id -> index into users (before sorting)
	visualDim := 0
	err := b.eachLine(kernelrankUsers, func(fr *FileReport, line int, text string) error {
		u, err := parseUser(text)
		if err != nil {
			return b.problem(fr, line, "%v", err)
		}
		if first, dup := defined[u.ID]; dup {
			return b.problem(fr, line, "user %q already defined at line %d", u.ID, first)
		}
		seen := map[string]bool{}
		for k, p := range u.Photos {
			if p.ID != "" {
				if _, dup := photoOwner[p.ID]; dup || seen[p.ID] {
					return b.problem(fr, line, "photo %q already defined", p.ID)
				}
				seen[p.ID] = true
			}
			if len(p.Visual) > 0 {
				if visualDim == 0 {
					visualDim = len(p.Visual)
				} else if len(p.Visual) != visualDim {
					return b.problem(fr, line, "photos[%d].visual has %d values, earlier photos %d", k, len(p.Visual), visualDim)
				}
			}
		}
		defined[u.ID] = line
		for id := range seen {
			photoOwner[id] = len(users)
		}
		users = append(users, u)
		fr.Records++
		return nil
	})
	if err != nil {
		return err
	}
	photoUser := make(map[string]string, len(photoOwner))
	for photo, k := range photoOwner {
		photoUser[photo] = users[k].ID
	}
	b.setUsers(users)
	b.implicitGroups = true
	for _, f := range []struct {
		name string
		read func(fr *FileReport, line int, fields []string) error
	}{
		{kernelrankFriends, func(fr *FileReport, line int, f []string) error { return b.addFriend(fr, line, f[0], f[1]) }},
		{kernelrankMemberships, func(fr *FileReport, line int, f []string) error {
			i, ok, err := b.user(fr, line, "user", f[0])
			if !ok {
				return err
			}
			return b.addMembership(fr, line, i, f[1])
		}},
		{kernelrankComments, func(fr *FileReport, line int, f []string) error {
			author, ok, err := b.user(fr, line, "author", f[0])
			if !ok {
				return err
			}
			owner, ok := photoUser[f[1]]
			if !ok {
				return b.problem(fr, line, "unknown photo %q", f[1])
			}
			b.comments[[2]int{author, b.ds.userIndex[owner]}]++
			fr.Records++
			return nil
		}},
	} {
		if _, err := os.Stat(filepath.Join(b.dir, f.name)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := b.eachLine(f.name, func(fr *FileReport, line int, text string) error {
			fields, err := csvFields(text, 2)
			if err != nil {
				return b.problem(fr, line, "%v", err)
			}
			return f.read(fr, line, fields)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// parseUser decodes and checks one line of users.jsonl.
func parseUser(text string) (User, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	var u User
	if err := dec.Decode(&u); err != nil {
		return u, jsonError(err, text)
	}
	if _, err := dec.Token(); err != io.EOF {
		return u, errors.New("data after the JSON object")
	}
	if u.ID == "" || u.ID != strings.TrimSpace(u.ID) || strings.Contains(u.ID, ",") {
		return u, fmt.Errorf("id %q: want a non-empty id without commas or surrounding space", u.ID)
	}
	lists := []namedList{{"tags", u.Tags}, {"places", u.Places}, {"attrs", u.Attrs}, {"faves", u.Faves}}
	for k, p := range u.Photos {
		lists = append(lists, namedList{fmt.Sprintf("photos[%d].tags", k), p.Tags})
	}
	for _, l := range lists {
		for k, s := range l.list {
			if strings.TrimSpace(s) == "" {
				return u, fmt.Errorf("%s[%d] is empty", l.name, k)
			}
		}
	}
	for k, p := range u.Photos {
		if strings.Contains(p.ID, ",") {
			return u, fmt.Errorf("photos[%d].id %q contains a comma", k, p.ID)
		}
		if g := p.Geo; g != nil && (g.Lat < -90 || g.Lat > 90 || g.Lon < -180 || g.Lon > 180) {
			return u, fmt.Errorf("photos[%d].geo (%g, %g) outside [-90, 90] x [-180, 180]", k, g.Lat, g.Lon)
		}
	}
	return u, nil
}

type namedList struct {
	name string
	list []string
}

// jsonError explains a decoding error; JSON has no NaN or Infinity, so a
// non-finite number in a visual vector shows up as a syntax error there.
func jsonError(err error, text string) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		for _, at := range []int64{syn.Offset - 1, syn.Offset - 2} {
			if at < 0 || at >= int64(len(text)) {
				continue
			}
			rest := strings.ToLower(text[at:])
			if strings.HasPrefix(rest, "nan") || strings.HasPrefix(rest, "inf") {
				return fmt.Errorf("non-finite number at byte %d: visual vectors and coordinates must be finite JSON numbers (%v)", at+1, err)
			}
		}
	}
	return fmt.Errorf("invalid user record: %w", err)
}
