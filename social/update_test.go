package social

import (
	"iter"
	"maps"
	"slices"
	"strings"
	"testing"
)

// records is a Lookup over Records, for tests.
type records struct {
	users   map[string]*User
	friends map[string][]string
	groups  map[string][]string
}

func (r records) User(id string) (*User, bool)       { u, ok := r.users[id]; return u, ok }
func (r records) Friends(id string) iter.Seq[string] { return slices.Values(r.friends[id]) }
func (r records) Groups(id string) iter.Seq[string]  { return slices.Values(r.groups[id]) }
func (r records) HasGroup(name string) bool          { return name == "g" }
func (r records) Comments(author, owner string) int  { return 0 }
func (r records) ids() []string                      { return slices.Sorted(maps.Keys(r.users)) }

func TestUpdate(t *testing.T) {
	ds, err := Build(Records{Users: []User{{ID: "u10"}, {ID: "u2"}, {ID: "u3"}}, Friends: [][2]string{{"u2", "u10"}}, Memberships: [][2]string{{"u3", "g"}}})
	if err != nil {
		t.Fatal(err)
	}
	after := records{users: map[string]*User{"u2": {ID: "u2"}, "u3": {ID: "u3"}, "u4": {ID: "u4", Tags: []string{"x"}}},
		friends: map[string][]string{"u4": {"u3"}, "u3": {"u4"}}, groups: map[string][]string{"u3": {"g"}}}
	// u10 deleted, u4 added between u3 and (formerly) u10, friends with u3.
	got, err := ds.Update(Change{Users: []string{"u10", "u2", "u3", "u4"}, Friends: true, After: after})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Build(Records{Users: []User{{ID: "u2"}, {ID: "u3"}, {ID: "u4", Tags: []string{"x"}}}, Friends: [][2]string{{"u3", "u4"}}, Memberships: [][2]string{{"u3", "g"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Friends, [][2]int{{1, 2}}) || !slices.Equal(got.Memberships, [][2]int{{1, 0}}) || got.Users[2].ID != "u4" {
		t.Fatalf("derived %+v", got)
	}
	if got.Version() != want.Version() || got.Version() == ds.Version() {
		t.Fatalf("versions: derived %s, built %s, before %s", got.Version(), want.Version(), ds.Version())
	}
	// A lookup that does not fit the change is refused.
	after.friends["u4"] = []string{"u9"}
	if _, err := ds.Update(Change{Users: after.ids(), Friends: true, After: after}); err == nil || !strings.Contains(err.Error(), `unknown user "u9"`) {
		t.Fatalf("a friend that is no user: %v", err)
	}
	after.friends["u4"], after.groups["u4"] = nil, []string{"h"}
	if _, err := ds.Update(Change{Users: after.ids(), Memberships: true, After: after}); err == nil || !strings.Contains(err.Error(), `unknown group "h"`) {
		t.Fatalf("a group that is not declared: %v", err)
	}
}
