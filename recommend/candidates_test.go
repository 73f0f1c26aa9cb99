package recommend

import (
	"context"
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
