package recommend

import (
	"cmp"
	"math"
	"slices"
)

// CandidateGroupMax is the largest group whose members are friend
// candidates of each other: larger groups add many users and little
// signal (docs/scaling.md measured the recall with it).
const CandidateGroupMax = 2000

// candidates ranks friends over a candidate set instead of every user:
// the users within two friendship hops of u, the co-members of u's groups
// of at most CandidateGroupMax members, and, when these are fewer than k,
// the users with the most friends.
type candidates struct {
	popular []int // every user, most friends first (ties in userTie order)
}

// WithCandidates returns a copy of the model whose rankings computed on
// demand score only the friend candidates (candidates) rather than every
// user: O(candidates) rather than O(n) a request. Precomputed lists are
// unchanged.
func (m *Model) WithCandidates() *Model {
	popular := make([]int, m.ds.N())
	for u := range popular {
		popular[u] = u
	}
	slices.SortFunc(popular, func(a, b int) int {
		if c := cmp.Compare(len(m.friends[b]), len(m.friends[a])); c != 0 {
			return c
		}
		return cmp.Compare(m.userTie[a], m.userTie[b])
	})
	c := *m
	c.candidates = &candidates{popular: popular}
	return &c
}

// friendCandidates returns u's friend candidates (neither u nor u's
// friends), at least k of them when there are; seen is scratch of length
// N, all false, and is left so.
func (m *Model) friendCandidates(u, k int, seen []bool) []int {
	var out []int
	add := func(v int) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	seen[u] = true
	for _, w := range m.friends[u] {
		seen[w] = true
	}
	for _, w := range m.friends[u] {
		for _, v := range m.friends[w] {
			add(v)
		}
	}
	for _, g := range m.groups[u] {
		if len(m.members[g]) <= CandidateGroupMax {
			for _, v := range m.members[g] {
				add(v)
			}
		}
	}
	for _, v := range m.candidates.popular {
		if len(out) >= k {
			break
		}
		add(v)
	}
	seen[u] = false
	for _, w := range m.friends[u] {
		seen[w] = false
	}
	for _, v := range out {
		seen[v] = false
	}
	return out
}

// rankCandidates is rankFriends over u's friend candidates: score and acc
// are scratch of length N (acc all zero, and left so).
func (m *Model) rankCandidates(u, k int, seen []bool, acc []float64) ([]int, []float64) {
	cand := m.friendCandidates(u, k, seen)
	score := make([]float64, len(cand))
	switch m.scorer {
	case ScorerKernel:
		for i, v := range cand {
			score[i] = m.combined.At(u, v)
		}
	case ScorerAdamicAdar:
		m.adamicAdarOf(u, cand, score, acc)
	default:
		for i, v := range cand {
			score[i] = m.strength.Score(u, v)
		}
	}
	tie := make([]int, len(cand))
	for i, v := range cand {
		tie[i] = m.userTie[v]
	}
	top := topK(score, tie, k, func(int) bool { return false })
	items := make([]int, len(top))
	for r, i := range top {
		items[r] = cand[i]
	}
	return items, pick(score, top)
}

// adamicAdarOf is adamicAdar for the users in cand (score[i] for cand[i]),
// accumulated in acc (all zero, and left so); its tie-break scales the
// combined kernel by its largest magnitude over cand, not over every
// user, which orders the candidates the same way.
func (m *Model) adamicAdarOf(u int, cand []int, score, acc []float64) {
	for _, w := range m.friends[u] {
		x := 1 / math.Log(math.Max(2, float64(len(m.friends[w]))))
		for _, v := range m.friends[w] {
			acc[v] += x
		}
	}
	row := make([]float64, len(cand))
	for i, v := range cand {
		score[i] = acc[v]
		row[i] = m.combined.At(u, v)
	}
	for _, w := range m.friends[u] {
		for _, v := range m.friends[w] {
			acc[v] = 0
		}
	}
	addTieBreak(score, row)
}
