package social

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHoldOutMemberships: the target is met when it can be, every user
// keeps a visible membership (a user with one never loses it), the two
// lists partition the input in its order, and the draw is the seed's.
func TestHoldOutMemberships(t *testing.T) {
	// User u is in u%4 + 1 groups: 0, 1, ..., u%4.
	var ms [][2]int
	for u := range 40 {
		for g := range u%4 + 1 {
			ms = append(ms, [2]int{u, g})
		}
	}
	// 100 memberships, 60 of them holdable (each user but its first).
	for _, c := range []struct{ target, want int }{{15, 15}, {60, 60}, {80, 60}} {
		visible, held := HoldOutMemberships(40, ms, c.target, rand.New(rand.NewPCG(3, 4)))
		if len(held) != c.want || len(visible)+len(held) != len(ms) {
			t.Errorf("target %d: %d held, %d visible; want %d held", c.target, len(held), len(visible), c.want)
		}
		kept := make([]int, 40)
		for _, e := range visible {
			kept[e[0]]++
		}
		for u, k := range kept {
			if k == 0 {
				t.Errorf("target %d: user %d keeps no membership", c.target, u)
			}
		}
		merged := slices.Concat(visible, held)
		slices.SortFunc(merged, func(a, b [2]int) int { return a[0]*10 + a[1] - b[0]*10 - b[1] })
		if !slices.Equal(merged, ms) || !slices.IsSortedFunc(held, func(a, b [2]int) int { return a[0]*10 + a[1] - b[0]*10 - b[1] }) {
			t.Errorf("target %d: the lists do not partition the memberships in order", c.target)
		}
	}
	_, a := HoldOutMemberships(40, ms, 15, rand.New(rand.NewPCG(3, 4)))
	_, b := HoldOutMemberships(40, ms, 15, rand.New(rand.NewPCG(3, 4)))
	_, c := HoldOutMemberships(40, ms, 15, rand.New(rand.NewPCG(5, 4)))
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Errorf("seeded draws: %v, %v, other seed %v", a, b, c)
	}
}
