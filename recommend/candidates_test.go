package recommend

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/social"
)

// twoHop returns the users within two friendship hops of u or sharing a
// group of at most maxGroup members with u, but u and u's friends: the
// candidate set a ranking that does not look at every user would score.
func (m *Model) twoHop(u, maxGroup int) []int {
	var out []int
	for _, w := range m.friends[u] {
		out = append(out, m.friends[w]...)
	}
	for _, g := range m.groups[u] {
		if len(m.members[g]) <= maxGroup {
			out = append(out, m.members[g]...)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(out, func(v int) bool { return v == u || contains(m.friends[u], v) })
}

// How much of the exact top 50 (every user ranked by the served friend
// scorer) the users within two hops or sharing a group hold on
// BlogCatalog: the recall a candidate-generating ranking would start from
// (docs/scaling.md).
func TestTwoHopCandidateRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data test skipped with -short")
	}
	root, ok := dataset.DataDir()
	if !ok {
		t.Skipf("shared data not found (set %s)", dataset.EnvDataDir)
	}
	ds, _, err := social.LoadDir(filepath.Join(root, "social", "blogcatalog"), social.ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Train(context.Background(), ds, ds.FullView(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const k, users = 50, 500
	for _, scorer := range Scorers {
		hits, total, size := 0, 0, 0
		score := make([]float64, ds.N())
		for range users {
			u := rng.IntN(ds.N())
			m.friendScores(scorer, u, score, nil)
			top := topK(score, m.userTie, k, func(v int) bool { return v == u || contains(m.friends[u], v) })
			cand := m.twoHop(u, 2000)
			size += len(cand)
			for _, v := range top {
				if _, ok := slices.BinarySearch(cand, v); ok {
					hits++
				}
			}
			total += len(top)
		}
		recall := float64(hits) / float64(total)
		t.Logf("%s: two-hop and group candidates hold %.4f of the exact top %d (%d users, %.0f candidates a user of %d)", scorer, recall, k, users, float64(size)/users, ds.N())
		if recall < 0.5 {
			t.Errorf("%s: recall %.3f", scorer, recall)
		}
	}
}

// Over its candidates, a user's friend ranking is the exact one whenever
// the candidates hold the exact top k, under every scorer; the candidates
// never hold u or u's friends, are padded to k, and the scratch is left
// clear. communities: friends live in groups of 8 and tags are noise, so
// two hops often miss the exact top k; pairedGroups: group co-members
// cover most users.
func TestCandidateRankingMatchesExact(t *testing.T) {
	const k = 10
	covered := map[string]int{}
	for _, ds := range []*social.Dataset{communities(t), pairedGroups(t)} {
		m := trainT(t, ds, Options{}).WithCandidates()
		n := m.ds.N()
		seen, acc := make([]bool, n), make([]float64, n)
		for _, scorer := range Scorers {
			c := *m
			c.scorer = scorer
			for u := range n {
				cand := c.friendCandidates(u, k, seen, acc)
				if len(cand) < min(k, n-1-len(c.friends[u])) {
					t.Fatalf("%s: user %d has %d candidates, want at least %d", scorer, u, len(cand), k)
				}
				for _, v := range cand {
					if v == u || contains(c.friends[u], v) {
						t.Fatalf("%s: user %d: candidate %d is the user or a friend", scorer, u, v)
					}
				}
				exact, exactScores := c.rankFriends(u, k, make([]float64, n), nil)
				got, scores := c.rankCandidates(u, k, seen, acc)
				if slices.Contains(seen, true) || slices.ContainsFunc(acc, func(x float64) bool { return x != 0 }) {
					t.Fatalf("%s: user %d: scratch left dirty", scorer, u)
				}
				if len(got) != k {
					t.Fatalf("%s: user %d: %d ranked, want %d", scorer, u, len(got), k)
				}
				if slices.ContainsFunc(exact, func(v int) bool { return !slices.Contains(cand, v) }) {
					continue
				}
				covered[scorer]++
				if !slices.Equal(got, exact) {
					t.Fatalf("%s: user %d: candidate ranking %v, exact %v", scorer, u, got, exact)
				}
				for r := range got {
					// Adamic-Adar tie-breaks differ, by at most 2e-9 of its top score.
					if math.Abs(scores[r]-exactScores[r]) > 1e-8*math.Max(1, math.Abs(exactScores[0])) {
						t.Fatalf("%s: user %d: score %d is %v, exact %v", scorer, u, r, scores[r], exactScores[r])
					}
				}
			}
		}
	}
	for _, scorer := range Scorers {
		t.Logf("%s: candidates cover the exact top %d of %d of 320 users", scorer, k, covered[scorer])
		if covered[scorer] < 10 {
			t.Errorf("%s: candidates cover the exact top %d of only %d users", scorer, k, covered[scorer])
		}
	}
}
