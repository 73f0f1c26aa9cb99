package eval

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/internal/demo"
	_ "github.com/kernelrank/kernelrank/learners/all"
)

func TestHideFriends(t *testing.T) {
	// A 6-cycle with chords: degrees 3 or 4.
	edges := [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {0, 5}, {0, 3}, {1, 4}, {2, 5}}
	for seed := uint64(0); seed < 20; seed++ {
		visible, hidden := hideFriends(6, edges, 0.34, rand.New(rand.NewPCG(seed, 1)))
		if len(hidden) != 3 || len(visible) != 6 {
			t.Fatalf("seed %d: %d hidden, %d visible; want int(0.34*9) = 3 and 6", seed, len(hidden), len(visible))
		}
		deg := make([]int, 6)
		for _, e := range visible {
			deg[e[0]]++
			deg[e[1]]++
		}
		for u, d := range deg {
			if d < 2 {
				t.Fatalf("seed %d: user %d keeps %d visible friends, want >= 2", seed, u, d)
			}
		}
	}
	a, _ := hideFriends(6, edges, 0.34, rand.New(rand.NewPCG(7, 1)))
	b, _ := hideFriends(6, edges, 0.34, rand.New(rand.NewPCG(7, 1)))
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different edges hidden")
	}
	// Degree-2 users can never lose a friend.
	path := [][2]int{{0, 1}, {1, 2}, {2, 0}}
	if _, hidden := hideFriends(3, path, 1, rand.New(rand.NewPCG(1, 1))); len(hidden) != 0 {
		t.Fatalf("hid %v from a triangle", hidden)
	}
}

func TestRankCandidatesBreaksTiesBySeededOrder(t *testing.T) {
	score := []float64{1, 5, 5, 5, 0}
	tie := []int{4, 2, 0, 1, 3} // item 2 first among the tied, then 3, then 1
	ranked := rankCandidates(5, score, tie, func(v int) bool { return v == 0 }, func(v int) bool { return v == 1 })
	if want := []bool{false, false, true, false}; !slices.Equal(ranked, want) {
		t.Fatalf("ranked = %v, want %v (2, 3, 1, 4)", ranked, want)
	}
}

// TestSocialOnTheDemoNetwork runs the whole protocol on the generated demo
// network: neighbourhood baselines must beat the textual kernel alone on
// friends (the generator links friends mostly through shared friends), and
// friend-vote must find hidden groups.
func TestSocialOnTheDemoNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the social protocol")
	}
	gen, err := demo.GenerateSocial(demo.DefaultSocialSeed, demo.SocialOptions{Users: 300})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "net")
	if err := gen.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	rep, err := Social(context.Background(), SocialConfig{Data: dir, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Users != 300 || rep.HiddenFriends != int(0.1*float64(rep.Friendships)) || rep.FriendTestUsers == 0 || rep.GroupTestUsers == 0 {
		t.Fatalf("report %+v", rep)
	}
	get := func(task, method, metric string) float64 {
		for _, r := range rep.Rows {
			if r.Task == task && r.Method == method && r.Metric == metric {
				return r.Value
			}
		}
		t.Fatalf("no row %s %s %s", task, method, metric)
		return 0
	}
	for _, r := range rep.Rows {
		if r.Value < 0 || r.Value > 1 {
			t.Fatalf("%+v out of [0, 1]", r)
		}
	}
	if aa, txt := get("friends", "adamic-adar", "MAP"), get("friends", "kernel/textual", "MAP"); aa <= txt {
		t.Errorf("adamic-adar MAP %.3f <= textual kernel %.3f", aa, txt)
	}
	if fv := get("groups", "friend-vote", "R@10"); fv < 0.3 {
		t.Errorf("friend-vote R@10 = %.3f, want >= 0.3 of the hidden groups in the top 10 of 30", fv)
	}
	for _, m := range []string{"uniform+mklr", "kernel/visual", "kernel/comments", "kernel/faves"} {
		get("friends", m, "P@10")
	}
}
