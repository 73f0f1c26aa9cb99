package eval

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/internal/metrics"
	_ "github.com/kernelrank/kernelrank/learners/kit/all"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
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

// TestSocialOnTheDemoNetwork runs the whole protocol on the generated demo
// network: neighbourhood baselines must beat the textual kernel alone on
// friends (the generator links friends mostly through shared friends), and
// friend-vote must find hidden groups.
// demoNetwork writes a generated demo network of the given size and
// returns its directory.
func demoNetwork(t *testing.T, users int) string {
	t.Helper()
	gen, err := demo.GenerateSocial(demo.DefaultSocialSeed, demo.SocialOptions{Users: users})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "net")
	if err := gen.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSocialOnTheDemoNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the social protocol")
	}
	dir := demoNetwork(t, 300)
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
	// Friends' groups say more than the groups' sizes alone.
	if fv, pop := get("groups", "friend-vote", "MAP"), get("groups", "popularity", "MAP"); fv <= pop {
		t.Errorf("friend-vote MAP %.3f <= popularity %.3f", fv, pop)
	}
	for _, m := range []string{"uniform+mklr", "kernel/visual", "kernel/comments", "kernel/faves"} {
		get("friends", m, "P@10")
	}

	// The served row is what a model trained with the default options on
	// the visible friendships answers through RecommendFriends.
	ds, _, err := social.LoadDir(dir, social.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := ds.N()
	rng := rand.New(rand.NewPCG(1, 0x50c1a1))
	visible, hidden := hideFriends(n, ds.Friends, 0.1, rng)
	hiddenAdj := adjacency(n, hidden)
	m, err := recommend.Train(context.Background(), ds, social.View{Friends: visible, Memberships: ds.Memberships}, recommend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sel := m.Stats().Selection; sel.Scorer != rep.Served.Scorer || !slices.Equal(sel.Candidates, rep.Served.Candidates) || sel.Reason != "" {
		t.Errorf("served selection %+v, direct %+v", rep.Served, sel)
	}
	users := testUsers(hiddenAdj, 0, rng)
	var p1, p10, ap []float64
	for _, u := range users {
		got, err := m.RecommendFriends(u, n)
		if err != nil {
			t.Fatal(err)
		}
		ranked := make([]bool, len(got.Items))
		for r, it := range got.Items {
			v, _ := ds.UserIndex(it.User)
			ranked[r] = slices.Contains(hiddenAdj[u], v)
		}
		p1 = append(p1, metrics.PrecisionAt(ranked, 1))
		p10 = append(p10, metrics.PrecisionAt(ranked, 10))
		ap = append(ap, metrics.AveragePrecision(ranked, len(hiddenAdj[u])))
	}
	for metric, vals := range map[string][]float64{"P@1": p1, "P@10": p10, "MAP": ap} {
		if got, want := get("friends", "served", metric), metrics.Mean(vals); math.Abs(got-want) > 1e-12 {
			t.Errorf("served %s = %v, direct Train+RecommendFriends %v", metric, got, want)
		}
	}

	// The groups' served row is what a model trained with the default
	// options on every friendship and the visible memberships answers
	// through RecommendGroups; the group task alone has the same split.
	rng.Perm(n) // the friend task's order among equal scores
	visibleM, _, _, hiddenGroups := hideMemberships(ds, rng)
	gm, err := recommend.Train(context.Background(), ds, social.View{Friends: ds.Friends, Memberships: visibleM}, recommend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sel := gm.Stats().GroupSelection; sel.Scorer != rep.ServedGroups.Scorer || !slices.Equal(sel.Candidates, rep.ServedGroups.Candidates) || sel.Reason != "" {
		t.Errorf("served group selection %+v, direct %+v", rep.ServedGroups, sel)
	}
	p1, ap = nil, nil
	for _, u := range testUsers(hiddenGroups, 0, rng) {
		got, err := gm.RecommendGroups(u, len(ds.Groups))
		if err != nil {
			t.Fatal(err)
		}
		ranked := make([]bool, len(got.Items))
		for r, it := range got.Items {
			g, _ := ds.GroupIndex(it.Group)
			ranked[r] = slices.Contains(hiddenGroups[u], g)
		}
		p1 = append(p1, metrics.PrecisionAt(ranked, 1))
		ap = append(ap, metrics.AveragePrecision(ranked, len(hiddenGroups[u])))
	}
	for metric, vals := range map[string][]float64{"P@1": p1, "MAP": ap} {
		if got, want := get("groups", "served", metric), metrics.Mean(vals); math.Abs(got-want) > 1e-12 {
			t.Errorf("groups served %s = %v, direct Train+RecommendGroups %v", metric, got, want)
		}
	}
	alone, err := Social(context.Background(), SocialConfig{Data: dir, Seed: 1, Tasks: []string{"groups"}})
	if err != nil {
		t.Fatal(err)
	}
	var groupRows []SocialRow
	for _, r := range rep.Rows {
		if r.Task == "groups" {
			groupRows = append(groupRows, r)
		}
	}
	if !slices.Equal(alone.Rows, groupRows) {
		t.Errorf("the group task alone gives\n%v\nthe whole protocol\n%v", alone.Rows, groupRows)
	}
}

// TestTagsFaves: the variant keeps the friendships, tags and faves, turns
// places into faves, drops the rest, and turns the groups of a data set
// without content into tags and faves.
func TestTagsFaves(t *testing.T) {
	ds := &social.Dataset{Format: "x", Groups: []string{"g0", "g1"}, Friends: [][2]int{{0, 1}}, Memberships: [][2]int{{0, 0}, {1, 1}},
		Users:    []social.User{{ID: "a", Tags: []string{"t"}, Places: []string{"p"}, Photos: []social.Photo{{ID: "x"}}}, {ID: "b", Faves: []string{"f"}}},
		Comments: []social.Comment{{Author: 0, Owner: 1, Count: 1}}}
	v := TagsFaves(ds)
	if len(v.Groups)+len(v.Memberships)+len(v.Comments) != 0 || !slices.Equal(v.Friends, ds.Friends) || len(v.Users[0].Photos) != 0 ||
		!slices.Equal(v.Users[0].Tags, []string{"t"}) || !slices.Equal(v.Users[0].Faves, []string{"p"}) || len(v.Users[0].Places) != 0 ||
		!slices.Equal(v.Users[1].Faves, []string{"f"}) {
		t.Errorf("variant %+v", v)
	}
	bare := &social.Dataset{Groups: ds.Groups, Friends: ds.Friends, Memberships: ds.Memberships, Users: []social.User{{ID: "a"}, {ID: "b"}}}
	v = TagsFaves(bare)
	if len(v.Memberships) != 0 || !slices.Equal(v.Users[0].Tags, []string{"g0"}) || !slices.Equal(v.Users[1].Faves, []string{"g1"}) {
		t.Errorf("variant of a data set without content %+v", v)
	}
}
