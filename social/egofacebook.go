package social

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// egoCombined is the friendship file of SNAP ego-Facebook: the union of the
// ten ego networks, each ego linked to all of its friends (N.edges adds
// nothing to it and is not read).
const egoCombined = "facebook_combined.txt"

// Feature categories of ego-Facebook (the part of a feature name before the
// first ';') that play the role of tags and of places.
var (
	egoTagCategories   = []string{"education", "work", "languages"}
	egoPlaceCategories = []string{"location", "hometown"}
)

// loadEgoFacebook reads facebook_combined.txt (which defines the users) and,
// for every ego N with an N.featnames, N.feat, N.egofeat and N.circles.
//
// Feature indices are local to an ego network: N.featnames maps them to
// global names "category;...;anonymized feature K" (K alone is not unique:
// "first_name;anonymized feature 110" and "last_name;anonymized feature 110"
// are different features). A user's features are the union over the ego
// networks it appears in (and N.egofeat for ego N); each becomes an Attr,
// and those of egoTagCategories also Tags, of egoPlaceCategories also Places.
// Circle K of ego N becomes the group "N/circleK".
func (b *builder) loadEgoFacebook() error {
	type edge struct {
		line int
		a, b string
	}
	var edges []edge
	var combined *FileReport
	ids := map[string]struct{}{}
	err := b.eachLine(egoCombined, func(fr *FileReport, line int, text string) error {
		combined = fr
		f := strings.Fields(text)
		if len(f) != 2 {
			return b.problem(fr, line, "%d fields, want 2 user ids", len(f))
		}
		ids[f[0]], ids[f[1]] = struct{}{}, struct{}{}
		edges = append(edges, edge{line, f[0], f[1]})
		return nil
	})
	if err != nil {
		return err
	}
	b.setUsers(usersFromIDs(ids))
	for _, e := range edges {
		if err := b.addFriend(combined, e.line, e.a, e.b); err != nil {
			return err
		}
	}

	paths, err := filepath.Glob(filepath.Join(b.dir, "*.featnames"))
	if err != nil {
		return fmt.Errorf("social: %w", err)
	}
	egos := make([]string, len(paths))
	for k, p := range paths {
		egos[k] = strings.TrimSuffix(filepath.Base(p), ".featnames")
	}
	slices.SortFunc(egos, naturalOrder)
	features := make([]map[string]struct{}, len(b.ds.Users))
	for _, ego := range egos {
		if err := b.loadEgo(ego, features); err != nil {
			return err
		}
	}
	for i, set := range features {
		u := &b.ds.Users[i]
		for name := range set {
			u.Attrs = append(u.Attrs, name)
		}
		slices.SortFunc(u.Attrs, naturalOrder)
		for _, name := range u.Attrs {
			category, _, _ := strings.Cut(name, ";")
			switch {
			case slices.Contains(egoTagCategories, category):
				u.Tags = append(u.Tags, name)
			case slices.Contains(egoPlaceCategories, category):
				u.Places = append(u.Places, name)
			}
		}
	}
	return nil
}

// loadEgo reads the feature names, features and circles of one ego network,
// adding each user's global feature names to features[user].
func (b *builder) loadEgo(ego string, features []map[string]struct{}) error {
	names := map[int]string{}
	var width int
	err := b.eachLine(ego+".featnames", func(fr *FileReport, line int, text string) error {
		width = fr.Lines
		idx, name, ok := strings.Cut(text, " ")
		k, err := strconv.Atoi(idx)
		if !ok || err != nil || k < 0 || strings.TrimSpace(name) == "" {
			return b.problem(fr, line, "want \"index name\", got %q", text)
		}
		if _, dup := names[k]; dup {
			return b.problem(fr, line, "feature index %d named twice", k)
		}
		names[k] = strings.TrimSpace(name)
		fr.Records++
		return nil
	})
	if err != nil {
		return err
	}
	// addRow adds the features set in the 0/1 values to user i.
	addRow := func(fr *FileReport, line, i int, values []string) error {
		if len(values) != width {
			return b.problem(fr, line, "%d feature values, want %d (the lines of %s.featnames)", len(values), width, ego)
		}
		var set []string
		for k, v := range values {
			switch v {
			case "0":
			case "1":
				name, ok := names[k]
				if !ok {
					return b.problem(fr, line, "feature %d is set but has no name in %s.featnames", k, ego)
				}
				set = append(set, name)
			default:
				return b.problem(fr, line, "feature value %q at column %d, want 0 or 1", v, k+1)
			}
		}
		if features[i] == nil {
			features[i] = map[string]struct{}{}
		}
		for _, name := range set {
			features[i][name] = struct{}{}
		}
		fr.Records++
		return nil
	}
	err = b.eachLine(ego+".feat", func(fr *FileReport, line int, text string) error {
		f := strings.Fields(text)
		i, ok, err := b.user(fr, line, "node", f[0])
		if !ok {
			return err
		}
		return addRow(fr, line, i, f[1:])
	})
	if err != nil {
		return err
	}
	err = b.eachLine(ego+".egofeat", func(fr *FileReport, line int, text string) error {
		if fr.Lines > 1 {
			return b.problem(fr, line, "more than one line of ego features")
		}
		i, ok, err := b.user(fr, line, "ego "+ego, ego)
		if !ok {
			return err
		}
		return addRow(fr, line, i, strings.Fields(text))
	})
	if err != nil {
		return err
	}
	return b.eachLine(ego+".circles", func(fr *FileReport, line int, text string) error {
		f := strings.Fields(text)
		group := ego + "/" + f[0]
		if ok, err := b.declareGroup(fr, line, group); !ok {
			return err
		}
		for _, id := range f[1:] {
			i, ok, err := b.user(fr, line, "member of "+group, id)
			if !ok {
				if err != nil {
					return err
				}
				continue
			}
			if err := b.addMembership(fr, line, i, group); err != nil {
				return err
			}
		}
		return nil
	})
}
