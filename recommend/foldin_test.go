package recommend_test

import (
	"math"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/recommend"
)

// A user the model was trained on, folded in with its own data, gets the
// scores, friends and groups the model gives it: the fold-in repeats the
// training's kernels, weights and strength model exactly.
func TestFoldInTrainedUserIsExact(t *testing.T) {
	ds := demoData(t)
	friends, groups := ds.Adjacency()
	for _, opts := range []recommend.Options{{}, {Select: recommend.SelectOptions{Scorer: recommend.ScorerAdamicAdar, GroupScorer: recommend.GroupRegLaplacian}}} {
		m := train(t, ds, opts)
		want := make([]float64, ds.N())
		for u := 0; u < ds.N(); u += 3 { // a third of the users: the test's time is CI's
			fo, err := m.FoldIn(ds.Users[u].ID, ds.FoldUser(u, friends[u], groups[u], ds), nil)
			if err != nil {
				t.Fatal(err)
			}
			m.ScoreAll(u, want)
			for v, f := range fo.Scores() {
				if math.Abs(f-want[v]) > 1e-9 {
					t.Fatalf("f(%d, %d): folded %.15g, trained %.15g", u, v, f, want[v])
				}
			}
			gotF, err := fo.RecommendFriends(10)
			if err != nil {
				t.Fatal(err)
			}
			wantF, err := m.RecommendFriends(u, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(gotF.Items) != len(wantF.Items) || gotF.Reason != wantF.Reason {
				t.Fatalf("user %d: %d friends (%q), model %d (%q)", u, len(gotF.Items), gotF.Reason, len(wantF.Items), wantF.Reason)
			}
			for r, it := range gotF.Items {
				w := wantF.Items[r]
				if it.User != w.User || math.Abs(it.Score-w.Score) > 1e-9 || math.Abs(it.Strength-w.Strength) > 1e-9 || math.Abs(it.Kernel-w.Kernel) > 1e-9 || math.Abs(it.PairsRelative-w.PairsRelative) > 1e-9 {
					t.Fatalf("user %d rank %d (%s): folded %+v, model %+v", u, r, m.FriendScorer(), it, w)
				}
			}
			gotG, err := fo.RecommendGroups(5)
			if err != nil {
				t.Fatal(err)
			}
			wantG, err := m.RecommendGroups(u, 5)
			if err != nil {
				t.Fatal(err)
			}
			for r := range min(len(gotG.Items), len(wantG.Items)) {
				g, w := gotG.Items[r], wantG.Items[r]
				// The regularised Laplacian's signal comes through its
				// solver (tolerance 1e-8) on one side only.
				if g.Group != w.Group || math.Abs(g.Score-w.Score) > 1e-6 || g.FriendCount != w.FriendCount {
					t.Fatalf("user %d group rank %d (%s): folded %+v, model %+v", u, r, m.GroupScorer(), g, w)
				}
			}
			if len(gotG.Items) != len(wantG.Items) {
				t.Fatalf("user %d: %d groups, model %d", u, len(gotG.Items), len(wantG.Items))
			}
		}
	}
}

// A user added after training is ranked against the model's users from
// its own relations: its friends and absent users are never candidates,
// and a planted neighbourhood shows through.
func TestFoldInNewUser(t *testing.T) {
	ds := demoData(t)
	const hidden = 17
	trainDS := ds.Filter(func(i int) bool { return i != hidden }, func(int, int) bool { return true })
	m := train(t, trainDS, recommend.Options{})
	friends, groups := ds.Adjacency()
	fu := ds.FoldUser(hidden, friends[hidden][:len(friends[hidden])/2], groups[hidden], trainDS)
	if fu.Index != -1 || len(fu.Friends) != len(friends[hidden])/2 {
		t.Fatalf("fold-in user %+v", fu)
	}
	absent := make([]bool, trainDS.N())
	absent[3] = true
	fo, err := m.FoldIn(ds.Users[hidden].ID, fu, absent)
	if err != nil {
		t.Fatal(err)
	}
	top, _ := fo.FriendRanking(trainDS.N())
	if len(top) != trainDS.N()-1-len(fu.Friends) {
		t.Errorf("%d candidates of %d users less itself and %d friends and one absent", len(top), trainDS.N(), len(fu.Friends))
	}
	for _, v := range top {
		if v == 3 || slices.Contains(fu.Friends, v) {
			t.Errorf("user %d ranked: absent or a friend", v)
		}
	}
	// The hidden friendships rank far above a random candidate's rank.
	var ranks []float64
	for _, v := range friends[hidden][len(friends[hidden])/2:] {
		if i, ok := trainDS.UserIndex(ds.Users[v].ID); ok {
			ranks = append(ranks, float64(slices.Index(top, i))/float64(len(top)))
		}
	}
	if len(ranks) == 0 {
		t.Fatal("no hidden friendship to rank")
	}
	mean := meanOf(ranks)
	t.Logf("%d hidden friends, mean relative rank %.3f", len(ranks), mean)
	if mean > 0.25 {
		t.Errorf("the hidden friends' mean relative rank is %.3f, random is 0.5", mean)
	}
}

func meanOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
