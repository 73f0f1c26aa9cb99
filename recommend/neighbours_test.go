package recommend

import (
	"slices"
	"testing"
)

// The index's neighbours of a user are users other than it and those
// skipped, at most NeighbourCandidates, by descending cosine of the
// sketches; they hold most of the exact top by that cosine over every
// user, and the users nearest in the combined kernel: communities
// plants friends in groups of 8, whose members are each other's nearest.
func TestNeighbourIndex(t *testing.T) {
	m := trainT(t, communities(t), Options{}).WithCandidates()
	ix := m.candidates.near
	if ix == nil {
		t.Fatal("no index: nothing sketched")
	}
	n := m.ds.N()
	cos := func(u, v int) float64 {
		s := 0.0
		for j := range sketchDims {
			s += float64(ix.z[u*sketchDims+j]) * float64(ix.z[v*sketchDims+j])
		}
		return s
	}
	const k = 10
	hits, community := 0, 0
	for u := range n {
		skip := func(v int) bool { return v%7 == 0 }
		got := ix.near(u, m.userTie, skip)
		if len(got) > NeighbourCandidates || slices.ContainsFunc(got, func(v int) bool { return v == u || skip(v) }) {
			t.Fatalf("user %d: neighbours %v", u, got)
		}
		for r := 1; r < len(got); r++ {
			if cos(u, got[r]) > cos(u, got[r-1]) {
				t.Fatalf("user %d: neighbours not by descending cosine: %v", u, got)
			}
		}
		score := make([]float64, n)
		for v := range n {
			score[v] = cos(u, v)
		}
		exact := topK(score, m.userTie, k, func(v int) bool { return v == u || skip(v) })
		for _, v := range exact {
			if slices.Contains(got, v) {
				hits++
			}
			if v/8 == u/8 {
				community++
			}
		}
	}
	recall := float64(hits) / float64(k*n)
	t.Logf("the index holds %.3f of the exact top %d by the sketches' cosine; %.3f of that top share the user's community", recall, k, float64(community)/float64(k*n))
	if recall < 0.75 {
		t.Errorf("recall %.3f of the exact top %d", recall, k)
	}
}
