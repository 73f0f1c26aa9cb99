package recommend

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/social"
)

// The one-array relations of a data set are newRelations'.
func TestDatasetRelations(t *testing.T) {
	gen, err := demo.GenerateSocial(demo.DefaultSocialSeed, demo.SocialOptions{Users: 120, Groups: 12})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := gen.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	ds, _, err := social.LoadDir(dir, social.ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	got, want := datasetRelations(ds), newRelations(ds, ds.FullView())
	for name, pair := range map[string][2][][]int{"friends": {got.friends, want.friends}, "groups": {got.groups, want.groups}, "members": {got.members, want.members}} {
		if len(pair[0]) != len(pair[1]) {
			t.Fatalf("%s: %d lists, want %d", name, len(pair[0]), len(pair[1]))
		}
		for i := range pair[0] {
			if len(pair[0][i])+len(pair[1][i]) > 0 && !reflect.DeepEqual(pair[0][i], pair[1][i]) {
				t.Errorf("%s %d: %v, want %v", name, i, pair[0][i], pair[1][i])
			}
		}
	}
}

// Relations derived from the previous ones after random changes (groups
// coming and going among them) equal those of the data set made anew.
func TestRelationsAfterEqualDatasetRelations(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const n, groups = 30, 12
	users := make([]social.User, n)
	for i := range users {
		users[i].ID = fmt.Sprint("u", i)
	}
	friends, members := map[[2]int]bool{}, map[[2]int]bool{}
	build := func() *social.Dataset {
		// Groups are those with members: they come and go.
		r := social.Records{Users: slices.Clone(users)}
		for p := range friends {
			r.Friends = append(r.Friends, [2]string{users[p[0]].ID, users[p[1]].ID})
		}
		for m := range members {
			r.Memberships = append(r.Memberships, [2]string{users[m[0]].ID, fmt.Sprint("g", m[1])})
		}
		ds, err := social.Build(r)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	ds := build()
	prev := &data{ds: ds, all: datasetRelations(ds)}
	derived, renumbered := 0, 0
	for step := range 300 {
		changed := map[string]bool{}
		for range 1 + rng.IntN(3) {
			i, j := rng.IntN(n), rng.IntN(n)
			if rng.IntN(2) == 0 {
				m := [2]int{i, rng.IntN(groups)}
				members[m] = !members[m]
				if !members[m] {
					delete(members, m)
				}
				changed[users[i].ID] = true
			} else if i != j {
				p := [2]int{min(i, j), max(i, j)}
				friends[p] = !friends[p]
				if !friends[p] {
					delete(friends, p)
				}
				changed[users[i].ID], changed[users[j].ID] = true, true
			}
		}
		ds := build()
		got, ok := relationsAfter(prev, ds, slices.Sorted(maps.Keys(changed)))
		if !ok {
			t.Fatalf("step %d: not derived, though no user or group came or went", step)
		}
		derived++
		want := datasetRelations(ds)
		for name, pair := range map[string][2][][]int{"friends": {got.friends, want.friends}, "groups": {got.groups, want.groups}, "members": {got.members, want.members}} {
			for i := range pair[1] {
				if !slices.Equal(pair[0][i], pair[1][i]) {
					t.Fatalf("step %d: %s[%d] = %v, want %v", step, name, i, pair[0][i], pair[1][i])
				}
			}
		}
		if !slices.Equal(prev.ds.Groups, ds.Groups) {
			renumbered++
		}
		prev = &data{ds: ds, all: got}
	}
	if renumbered < 5 {
		t.Fatalf("groups came or went %d times: too few", renumbered)
	}
	// A user added moves the indices: made anew.
	users = append(users, social.User{ID: "u100"})
	if _, ok := relationsAfter(prev, build(), []string{"u100"}); ok || derived != 300 {
		t.Fatalf("a new user: derived %v (after %d derived)", ok, derived)
	}
}
