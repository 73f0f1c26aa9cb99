package recommend_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

// TS-MKL combines the kernels of ego-Facebook's 4,039 users from the
// friendships alone (a link target: implicit kernels, sampled pairs). Its
// weights are non-negative and not all 0, and the model ranks 10% of the
// friendships held out of training above the popularity baseline (score:
// a user's number of visible friends), computed on the same split.
func TestTSMKLEgoFacebook(t *testing.T) {
	ds := egoFacebook(t)
	if !slices.Contains(recommend.Learners(), "tsmkl") {
		t.Fatalf("tsmkl is not among the usable learners %v", recommend.Learners())
	}
	n := ds.N()
	rng := rand.New(rand.NewPCG(1, 2))
	visible, held := social.HoldOut(n, ds.Friends, len(ds.Friends)/10, rng)
	view := social.View{Friends: visible, Memberships: ds.Memberships}
	m, err := recommend.Train(t.Context(), ds, view, recommend.Options{Learner: "tsmkl",
		Select: recommend.SelectOptions{Scorer: recommend.ScorerMKLR, GroupScorer: recommend.GroupMKLR}})
	if err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	t.Logf("weights %+v, combine %v", st.Weights, st.Combine)
	positive := false
	for _, w := range st.Weights {
		if w.Weight < 0 {
			t.Errorf("kernel %s has weight %v < 0", w.Kernel, w.Weight)
		}
		positive = positive || w.Weight > 0
	}
	if !positive {
		t.Fatalf("every weight is 0: %+v", st.Weights)
	}

	friends, hidden := adjacencyOf(n, visible), adjacencyOf(n, held)
	degree := make([]float64, n)
	for v, f := range friends {
		degree[v] = float64(len(f))
	}
	tie := rng.Perm(n)
	var users []int
	for u, h := range hidden {
		if len(h) > 0 {
			users = append(users, u)
		}
	}
	users = sampleOf(users, 300, rng)
	score := make([]float64, n)
	var model, popularity float64
	for _, u := range users {
		m.ScoreAll(u, score)
		model += averagePrecision(u, score, friends[u], hidden[u], tie)
		popularity += averagePrecision(u, degree, friends[u], hidden[u], tie)
	}
	model /= float64(len(users))
	popularity /= float64(len(users))
	t.Logf("MAP of the held-out friends of %d users: tsmkl+mklr %.4f, popularity %.4f", len(users), model, popularity)
	if !(model > popularity) {
		t.Errorf("tsmkl+mklr MAP %.4f, not above the popularity baseline's %.4f", model, popularity)
	}
}

func adjacencyOf(n int, edges [][2]int) [][]int {
	adj := make([][]int, n)
	for _, e := range edges {
		adj[e[0]] = append(adj[e[0]], e[1])
		adj[e[1]] = append(adj[e[1]], e[0])
	}
	return adj
}

func sampleOf(xs []int, k int, rng *rand.Rand) []int {
	if len(xs) <= k {
		return xs
	}
	out := make([]int, k)
	for i, p := range rng.Perm(len(xs))[:k] {
		out[i] = xs[p]
	}
	return out
}

// averagePrecision of the hidden friends of u when every user but u and
// its visible friends is ranked by score (ties by tie).
func averagePrecision(u int, score []float64, visible, hidden []int, tie []int) float64 {
	ranked := metrics.Rank(len(score), score, tie,
		func(v int) bool { return v == u || slices.Contains(visible, v) },
		func(v int) bool { return slices.Contains(hidden, v) })
	return metrics.AveragePrecision(ranked, len(hidden))
}

// On the demo network (200 users: every pair enumerated) TS-MKL learns
// from either target, friendships or common groups.
func TestTSMKLTargets(t *testing.T) {
	ds := demoData(t)
	for _, target := range []recommend.Target{recommend.TargetFriends, recommend.TargetGroups} {
		st := train(t, ds, recommend.Options{Learner: "tsmkl", Target: target,
			MKLR:   json.RawMessage(`{"max_import":10}`), // the strength model is not what is tested
			Select: recommend.SelectOptions{Scorer: recommend.ScorerMKLR, GroupScorer: recommend.GroupMKLR}}).Stats()
		sum := 0.0
		for _, w := range st.Weights {
			if w.Weight < 0 {
				t.Errorf("%s target: kernel %s has weight %v < 0", target, w.Kernel, w.Weight)
			}
			sum += w.Weight
		}
		if sum == 0 || st.Learner != "tsmkl" {
			t.Errorf("%s target: stats %+v", target, st)
		}
	}
}
