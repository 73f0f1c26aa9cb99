// Package live is the social data as a store that changes while it is
// served: users, friendships, group memberships and comments, changed by
// operations (Op) that are applied in order, each entry of them all or
// nothing, to an in-memory state. Every applied entry makes a new immutable
// social.Dataset, handed with the ids of the users it changed to the
// recommender.
//
// With Redis the entries are a change log shared by every server and
// worker (internal/changelog, under the hash tag {kr-social}); each process
// follows it, so a change reaches all of them, and bootstraps from the
// newest snapshot plus the log's tail. Without Redis the entries go to a
// file log with a snapshot file under the cache directory, fsynced before a
// write is acknowledged, so a restart keeps every write.
//
// A directory of social data is imported in bulk as the difference between
// it and the store, and only when its content differs from the last one
// imported: the same directory twice changes nothing, and a restart with
// the same --social keeps the writes made since.
package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kernelrank/kernelrank/social"
)

// The kinds of Op. The first six are the write API's; the others rebuild
// a state (imports, snapshots).
const (
	PutUser      = "put_user"      // create or replace User's profile; its relations stay
	DeleteUser   = "delete_user"   // remove User from every friendship, group and comment
	PutFriend    = "put_friend"    // User and Friend are friends (undirected)
	DeleteFriend = "delete_friend" // they are not
	PutMember    = "put_member"    // User is in Group
	DeleteMember = "delete_member" // User is not

	declareGroup = "declare_group" // Group exists, with members or not
	dropGroup    = "drop_group"    // Group and its memberships are gone
	setComments  = "set_comments"  // User wrote Count comments on Friend's photos (0: none)
	setSource    = "set_source"    // the data's Format and the version of the directory imported last
)

// Limits of the write API (Check).
const (
	MaxOps      = 10000 // operations in a batch
	MaxIDBytes  = 256   // bytes of a user id or group name
	MaxList     = 10000 // tags, places, attrs, faves of a profile; tags of a photo
	MaxPhotos   = 10000 // photos of a profile
	MaxVisual   = 4096  // values of a photo's visual vector
	maxEntryOps = 5000  // operations of one log entry an import writes
)

// Op is one change.
type Op struct {
	Op      string   `json:"op"`
	User    string   `json:"user,omitempty"`
	Friend  string   `json:"friend,omitempty"`
	Group   string   `json:"group,omitempty"`
	Profile *Profile `json:"profile,omitempty"`
	Count   int      `json:"count,omitempty"`
	Format  string   `json:"format,omitempty"`
	Source  string   `json:"source,omitempty"`
}

// Profile is what PutUser sets: a social.User's fields but its id.
type Profile struct {
	Tags   []string       `json:"tags,omitempty"`
	Places []string       `json:"places,omitempty"`
	Attrs  []string       `json:"attrs,omitempty"`
	Faves  []string       `json:"faves,omitempty"`
	Photos []social.Photo `json:"photos,omitempty"`
}

// user is the social.User of id with profile p.
func (p *Profile) user(id string) social.User {
	return social.User{ID: id, Tags: p.Tags, Places: p.Places, Attrs: p.Attrs, Faves: p.Faves, Photos: p.Photos}
}

// profileOf is u's profile.
func profileOf(u *social.User) *Profile {
	return &Profile{Tags: u.Tags, Places: u.Places, Attrs: u.Attrs, Faves: u.Faves, Photos: u.Photos}
}

// Entry is what one log entry holds: operations applied all or none.
type Entry struct {
	Ops []Op `json:"ops"`
}

// ErrInvalid marks an operation that can never apply (a bad id, a
// friendship with oneself, a wrong visual dimension); ErrNotFound one that
// names a user, friendship or membership the store does not hold.
var (
	ErrInvalid  = errors.New("invalid")
	ErrNotFound = errors.New("not found")
)

// OpError is why an entry was refused: its operation Item (0-based) and
// the reason, which wraps ErrInvalid or ErrNotFound.
type OpError struct {
	Item int
	Op   string
	Err  error
}

func (e *OpError) Error() string {
	return fmt.Sprintf("ops[%d] (%s): %v", e.Item, e.Op, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

func notFound(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrNotFound, fmt.Sprintf(format, a...))
}

// DecodeBatch reads a batch, {"ops": [...]}, and checks it (Check).
// Unknown fields and data after the object are errors.
func DecodeBatch(r io.Reader) ([]Op, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var e Entry
	if err := dec.Decode(&e); err != nil {
		return nil, invalid("the body is not a batch {\"ops\": [...]}: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalid("data after the batch object")
	}
	return e.Ops, Check(e.Ops)
}

// DecodeProfile reads a PutUser body (a Profile) for user id and returns
// its operation, checked.
func DecodeProfile(id string, body []byte) (Op, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var p Profile
	if len(bytes.TrimSpace(body)) > 0 {
		if err := dec.Decode(&p); err != nil {
			return Op{}, invalid("the body is not a profile: %v", err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return Op{}, invalid("data after the profile object")
		}
	}
	op := Op{Op: PutUser, User: id, Profile: &p}
	return op, Check([]Op{op})
}

// Check validates operations of the write API without the store: known
// kinds with the fields they take, ids, limits, finite features, no
// friendship with oneself and no operation twice. Its error is an
// *OpError wrapping ErrInvalid.
func Check(ops []Op) error {
	if len(ops) == 0 {
		return invalid("no operation")
	}
	if len(ops) > MaxOps {
		return invalid("%d operations, the limit is %d", len(ops), MaxOps)
	}
	seen := make(map[Op]int, len(ops))
	for i, op := range ops {
		if err := checkOp(op); err != nil {
			return &OpError{Item: i, Op: op.Op, Err: err}
		}
		key := op
		key.Profile = nil
		if op.Op == PutFriend || op.Op == DeleteFriend {
			key.User, key.Friend = min(op.User, op.Friend), max(op.User, op.Friend)
		}
		if first, dup := seen[key]; dup {
			return &OpError{Item: i, Op: op.Op, Err: invalid("repeats ops[%d]", first)}
		}
		seen[key] = i
	}
	return nil
}

func checkOp(op Op) error {
	if err := checkID("user", op.User); err != nil {
		return err
	}
	if op.Count != 0 || op.Format != "" || op.Source != "" {
		return invalid("count, format and source are not fields of a %s", op.Op)
	}
	friend, group, profile := op.Friend != "", op.Group != "", op.Profile != nil
	switch op.Op {
	case PutUser:
		if friend || group {
			return invalid("put_user takes user and profile")
		}
		if !profile {
			return invalid("put_user needs a profile")
		}
		return checkProfile(op.Profile)
	case DeleteUser:
		if friend || group || profile {
			return invalid("delete_user takes user only")
		}
	case PutFriend, DeleteFriend:
		if group || profile {
			return invalid("%s takes user and friend", op.Op)
		}
		if err := checkID("friend", op.Friend); err != nil {
			return err
		}
		if op.Friend == op.User {
			return invalid("user %q cannot be its own friend", op.User)
		}
	case PutMember, DeleteMember:
		if friend || profile {
			return invalid("%s takes user and group", op.Op)
		}
		return checkID("group", op.Group)
	default:
		return invalid("unknown op %q (want %s, %s, %s, %s, %s or %s)", op.Op, PutUser, DeleteUser, PutFriend, DeleteFriend, PutMember, DeleteMember)
	}
	return nil
}

// checkID: ids are what the import format allows (no commas, no
// surrounding space), printable UTF-8 of at most MaxIDBytes bytes; a user
// id has no / ? # either (group names may: ego-Facebook's are "0/circle2").
func checkID(what, id string) error {
	switch {
	case id == "":
		return invalid("%s is missing", what)
	case len(id) > MaxIDBytes:
		return invalid("%s is %d bytes long, the limit is %d", what, len(id), MaxIDBytes)
	case !utf8.ValidString(id):
		return invalid("%s %q is not UTF-8", what, id)
	case strings.TrimSpace(id) != id || strings.Contains(id, ","):
		return invalid("%s %q: want no commas and no surrounding space", what, id)
	case strings.ContainsFunc(id, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }):
		return invalid("%s %q holds a control character", what, id)
	case what != "group" && strings.ContainsAny(id, "/?#"):
		return invalid("%s %q holds one of / ? # (user ids go in URL paths)", what, id)
	}
	return nil
}

func checkProfile(p *Profile) error {
	for _, l := range []struct {
		name string
		list []string
	}{{"tags", p.Tags}, {"places", p.Places}, {"attrs", p.Attrs}, {"faves", p.Faves}} {
		if err := checkList(l.name, l.list); err != nil {
			return err
		}
	}
	if len(p.Photos) > MaxPhotos {
		return invalid("%d photos, the limit is %d", len(p.Photos), MaxPhotos)
	}
	ids := map[string]int{}
	dim := 0
	for k, ph := range p.Photos {
		if ph.ID != "" {
			if err := checkID(fmt.Sprintf("photos[%d].id", k), ph.ID); err != nil {
				return err
			}
			if first, dup := ids[ph.ID]; dup {
				return invalid("photos[%d].id %q repeats photos[%d]", k, ph.ID, first)
			}
			ids[ph.ID] = k
		}
		if err := checkList(fmt.Sprintf("photos[%d].tags", k), ph.Tags); err != nil {
			return err
		}
		if len(ph.Visual) > MaxVisual {
			return invalid("photos[%d].visual has %d values, the limit is %d", k, len(ph.Visual), MaxVisual)
		}
		if len(ph.Visual) > 0 {
			if dim != 0 && len(ph.Visual) != dim {
				return invalid("photos[%d].visual has %d values, the profile's first visual %d", k, len(ph.Visual), dim)
			}
			dim = len(ph.Visual)
		}
		for j, x := range ph.Visual {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return invalid("photos[%d].visual[%d] is not finite", k, j)
			}
		}
		if g := ph.Geo; g != nil && !(g.Lat >= -90 && g.Lat <= 90 && g.Lon >= -180 && g.Lon <= 180) {
			return invalid("photos[%d].geo (%g, %g) outside [-90, 90] x [-180, 180]", k, g.Lat, g.Lon)
		}
	}
	return nil
}

// checkList: at most MaxList items, none empty, none repeated.
func checkList(name string, list []string) error {
	if len(list) > MaxList {
		return invalid("%s has %d items, the limit is %d", name, len(list), MaxList)
	}
	seen := make(map[string]int, len(list))
	for k, s := range list {
		if strings.TrimSpace(s) == "" {
			return invalid("%s[%d] is empty", name, k)
		}
		if len(s) > MaxIDBytes {
			return invalid("%s[%d] is %d bytes long, the limit is %d", name, k, len(s), MaxIDBytes)
		}
		if first, dup := seen[s]; dup {
			return invalid("%s[%d] %q repeats %s[%d]", name, k, s, name, first)
		}
		seen[s] = k
	}
	return nil
}
