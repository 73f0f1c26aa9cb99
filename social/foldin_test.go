package social

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
)

// A user of the data set folded into its own kernels gets its own row, in
// every mode that folds in and with the random visual features.
func TestFoldInOwnUserIsItsRow(t *testing.T) {
	ds := loadTiny(t)
	friends, groups := ds.Adjacency()
	for _, opts := range []KernelOptions{{}, {Mode: ModeCosine}, {VisualDenseMax: 4, VisualFeatures: 64, Seed: 3}} {
		ks, err := BuildKernels(context.Background(), ds, ds.FullView(), opts)
		if err != nil {
			t.Fatal(err)
		}
		got, want := make([]float64, ds.N()), make([]float64, ds.N())
		for _, k := range ks {
			if k.Name == KernelRegLaplacian {
				if err := k.FoldIn(&FoldUser{}, got); !errors.Is(err, ErrNoFoldIn) {
					t.Errorf("reg-laplacian folds in: %v", err)
				}
				continue
			}
			for u := range ds.N() {
				if err := k.FoldIn(ds.FoldUser(u, friends[u], groups[u], ds), got); err != nil {
					t.Fatalf("%s: %v", k.Name, err)
				}
				k.K.Row(u, want)
				for v := range want {
					if math.Abs(got[v]-want[v]) > 1e-9 {
						t.Errorf("mode %q %s(u%d, u%d): folded %.15g, built %.15g", opts.Mode, k.Name, u+1, v+1, got[v], want[v])
					}
				}
			}
		}
	}
}

// A user the data set lacks gets its entries against the data set's
// users from its own relations and the data set's preprocessing, worked
// out by hand on tinySocial (default mode: each set kernel times n / tr).
func TestFoldInNewUserByHand(t *testing.T) {
	ds := loadTiny(t)
	ks, err := BuildKernels(context.Background(), ds, ds.FullView(), KernelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// u6: friends u1 and u3, group g1, fave x, profile tag jazz, no photos,
	// 2 comments exchanged with u2.
	u6 := &FoldUser{Profile: &User{ID: "u6", Tags: []string{"jazz"}, Faves: []string{"x", "new"}},
		Friends: []int{0, 2}, Groups: []int{0}, Comments: map[int]int{1: 2}, Index: -1}
	l2, l3 := 1/math.Ln2, 1/math.Log(3)
	ln5, ln25 := math.Log(5), math.Log(2.5)
	trAA := 2*(l2+l3) + 3*l2 + l3
	want := map[string][]float64{
		// Common friends with {u1, u3}: u1 {u3}, u2 {u1, u3}, u3 {u1},
		// u4 {u3}; trace 8.
		KernelFriends: {5. / 8, 10. / 8, 5. / 8, 5. / 8, 0},
		// The same friends weighted 1/ln(deg): u1 (deg 2), u3 (deg 3).
		KernelAdamicAdar: {5 * l3 / trAA, 5 * (l2 + l3) / trAA, 5 * l2 / trAA, 5 * l3 / trAA, 0},
		// g1's members u1 and u5; trace 8.
		KernelGroups: {5. / 8, 0, 0, 0, 5. / 8},
		// x is u1's and u5's (new is no one's); trace 5.
		KernelFaves: {1, 0, 0, 0, 1},
		// Comments exchanged; trace 3+4+1+1.
		KernelComments: {0, 10. / 9, 0, 0, 0},
		// jazz is u1's alone: u6's vector is jazz, u1's (jazz ln 5, sea ln 2.5).
		KernelTextual: {ln5 / math.Hypot(ln5, ln25), 0, 0, 0, 0},
		KernelVisual:  {0, 0, 0, 0, 0},
	}
	row := make([]float64, ds.N())
	for _, k := range ks {
		w, ok := want[k.Name]
		if !ok {
			continue
		}
		delete(want, k.Name)
		if err := k.FoldIn(u6, row); err != nil {
			t.Fatal(err)
		}
		for v := range w {
			near(t, k.Name+" u6", row[v], w[v], 1e-12)
		}
	}
	if len(want) > 0 {
		t.Errorf("kernels not built: %v", want)
	}
	thesis, err := BuildKernels(context.Background(), ds, ds.FullView(), KernelOptions{Mode: ModeThesis})
	if err != nil {
		t.Fatal(err)
	}
	if err := thesis[0].FoldIn(u6, row); !errors.Is(err, ErrNoFoldIn) {
		t.Errorf("thesis mode folds in: %v", err)
	}
}

// Filter drops users with every relation of theirs, and the friendships
// it is told to, renumbering the rest in order.
func TestFilter(t *testing.T) {
	ds := loadTiny(t)
	out := ds.Filter(func(i int) bool { return i != 2 }, func(i, j int) bool { return [2]int{i, j} != [2]int{0, 1} })
	if out.N() != 4 || out.Users[2].ID != "u4" {
		t.Fatalf("users %v", out.Users)
	}
	if i, ok := out.UserIndex("u4"); !ok || i != 2 {
		t.Errorf("u4 at %d, %v", i, ok)
	}
	if _, ok := out.UserIndex("u3"); ok {
		t.Error("u3 kept")
	}
	// u1-u2 dropped, u1-u3, u2-u3 and u3-u4 went with u3.
	if len(out.Friends) != 0 {
		t.Errorf("friends %v", out.Friends)
	}
	// u3's g3 membership and self-comment go; u1 (0), u2 (1), u4 (2), u5 (3).
	if want := [][2]int{{0, 0}, {1, 1}, {2, 3}, {3, 0}, {3, 1}, {3, 2}, {3, 3}}; !slices.Equal(out.Memberships, want) {
		t.Errorf("memberships %v, want %v", out.Memberships, want)
	}
	if want := []Comment{{0, 1, 2}, {1, 0, 1}, {2, 1, 1}}; !slices.Equal(out.Comments, want) {
		t.Errorf("comments %v, want %v", out.Comments, want)
	}
	friends, groups := ds.Adjacency()
	if !slices.Equal(friends[2], []int{0, 1, 3}) || !slices.Equal(groups[4], []int{0, 1, 2, 3}) {
		t.Errorf("adjacency of u3 %v, groups of u5 %v", friends[2], groups[4])
	}
}
