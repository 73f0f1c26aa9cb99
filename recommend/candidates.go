package recommend

import (
	"cmp"
	"math"
	"slices"
)

const (
	// CandidateGroupMax is the largest group whose members are friend
	// candidates of each other: larger groups add many users and little
	// signal (docs/scaling.md measured the recall with it).
	CandidateGroupMax = 2000
	// FriendCandidateMax bounds a user's friend candidates, and so the
	// scoring a ranking on demand does: a user with a friend of high
	// degree has thousands of users two hops away, of which the ones
	// with the largest weight are kept (friendCandidates) (docs/scaling.md measured
	// the recall with it).
	FriendCandidateMax = 2000
)

// candidates ranks friends and groups over candidate sets instead of
// every user and every group: friendCandidates and groupCandidates.
type candidates struct {
	popular []int           // every user, most friends first (ties in userTie order)
	largest []int           // every group, most members first (ties in groupTie order)
	near    *neighbourIndex // nil: no kernel has a feature map to sketch
}

// WithCandidates returns a copy of the model whose rankings computed on
// demand score only the friend candidates (friendCandidates) rather than
// every user and the candidate groups (groupCandidates) rather than every
// group: O(candidates) rather than O(n) a request. Precomputed lists are
// unchanged.
func (m *Model) WithCandidates() *Model {
	c := *m
	c.candidates = &candidates{
		popular: byDescending(m.ds.N(), func(u int) int { return len(m.friends[u]) }, m.userTie),
		largest: byDescending(len(m.members), func(g int) int { return len(m.members[g]) }, m.groupTie),
		near:    m.newNeighbourIndex(m.settings.Seed),
	}
	return &c
}

// byDescending returns 0..n-1 by size descending, ties by tie ascending.
func byDescending(n int, size func(int) int, tie []int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	slices.SortFunc(out, func(a, b int) int {
		if c := cmp.Compare(size(b), size(a)); c != 0 {
			return c
		}
		return cmp.Compare(tie[a], tie[b])
	})
	return out
}

// friendCandidates returns u's friend candidates (neither u nor u's
// friends): the users within two friendship hops of u and the co-members
// of u's groups of at most CandidateGroupMax members, the
// FriendCandidateMax of them with the largest weight when there are
// more, then u's NeighbourCandidates nearest users in the combined
// kernel's feature space (neighbourIndex) that are not among them, so at
// most FriendCandidateMax + NeighbourCandidates users; padded with the users with the most friends to k when there are
// fewer. A candidate's weight is its Adamic-Adar score with u's small
// groups counted as common neighbours too (hubWeight summed over u's
// friends and small groups it is in): kept are the users tied to u
// through many, or through small, hubs; for the Adamic-Adar scorer and a
// user without groups, exactly its top FriendCandidateMax. seen (length N, all false) and acc (length N, all zero) are
// scratch, and are left so. The cost is the walk, O(sum of u's friends'
// degrees and of u's small groups' sizes), not the scoring.
func (m *Model) friendCandidates(u, k int, seen []bool, acc []float64) []int {
	out := m.nearUsers(u, seen, acc)
	if ix := m.candidates.near; ix != nil {
		for _, v := range ix.near(u, m.userTie, func(v int) bool { return seen[v] }) {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, v := range m.candidates.popular {
		if len(out) >= k {
			break
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	m.unmark(u, out, seen)
	return out
}

// nearUsers returns the first part of u's friend candidates: the users
// within two friendship hops of u and the co-members of u's groups of at
// most CandidateGroupMax members, the FriendCandidateMax of them with the
// largest weight when there are more (friendCandidates). It leaves u,
// u's friends and the users returned marked in seen (unmark clears
// them); acc is left all zero.
func (m *Model) nearUsers(u int, seen []bool, acc []float64) []int {
	var out []int
	seen[u] = true
	for _, w := range m.friends[u] {
		seen[w] = true
	}
	// add credits v with x > 0; u and u's friends are seen with no credit.
	add := func(v int, x float64) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		} else if acc[v] == 0 {
			return
		}
		acc[v] += x
	}
	for _, w := range m.friends[u] {
		x := hubWeight(len(m.friends[w]))
		for _, v := range m.friends[w] {
			add(v, x)
		}
	}
	for _, g := range m.groups[u] {
		if len(m.members[g]) <= CandidateGroupMax {
			x := hubWeight(len(m.members[g]))
			for _, v := range m.members[g] {
				add(v, x)
			}
		}
	}
	if len(out) > FriendCandidateMax {
		weight, tie := make([]float64, len(out)), make([]int, len(out))
		for i, v := range out {
			weight[i], tie[i] = acc[v], m.userTie[v]
		}
		top := topK(weight, tie, FriendCandidateMax, func(int) bool { return false })
		for _, v := range out {
			seen[v], acc[v] = false, 0
		}
		kept := make([]int, len(top))
		for r, i := range top {
			kept[r] = out[i]
			seen[kept[r]] = true
		}
		out = kept
	}
	for _, v := range out {
		acc[v] = 0
	}
	return out
}

// unmark clears in seen what nearUsers marked for u, with the users out.
func (m *Model) unmark(u int, out []int, seen []bool) {
	seen[u] = false
	for _, w := range m.friends[u] {
		seen[w] = false
	}
	for _, v := range out {
		seen[v] = false
	}
}

// hubWeight is what a common neighbour of size (a friend's degree, a
// group's members) adds to candidateWeight: 1/ln(size), as Adamic-Adar
// counts a common friend (size < 2 counts as 2).
func hubWeight(size int) float64 { return 1 / math.Log(math.Max(2, float64(size))) }

// groupCandidates returns u's candidate groups, sorted: the groups u is
// not in of u's friends and of u's friend candidates (friendCandidates,
// unpadded), padded with the largest groups to k when they are fewer.
// seen and acc are friendCandidates' scratch.
func (m *Model) groupCandidates(u, k int, seen []bool, acc []float64) []int {
	var out []int
	for _, users := range [][]int{m.friends[u], m.friendCandidates(u, 0, seen, acc)} {
		for _, v := range users {
			out = append(out, m.groups[v]...)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	out = slices.DeleteFunc(out, func(g int) bool { return contains(m.groups[u], g) })
	if len(out) < k {
		extra := make([]int, 0, k-len(out))
		for _, g := range m.candidates.largest {
			if len(out)+len(extra) >= k {
				break
			}
			if _, in := slices.BinarySearch(out, g); !in && !contains(m.groups[u], g) {
				extra = append(extra, g)
			}
		}
		out = append(out, extra...)
		slices.Sort(out)
	}
	return out
}

// rankCandidates is rankFriends over u's friend candidates: score and acc
// are scratch of length N (acc all zero, and left so).
func (m *Model) rankCandidates(u, k int, seen []bool, acc []float64) ([]int, []float64) {
	cand := m.friendCandidates(u, k, seen, acc)
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
	return pickTop(cand, score, m.userTie, k)
}

// pickTop returns the k best of items by score (score[i] is items[i]'s),
// ties by tie[item] ascending, and their scores.
func pickTop(items []int, score []float64, tie []int, k int) ([]int, []float64) {
	t := make([]int, len(items))
	for i, v := range items {
		t[i] = tie[v]
	}
	top := topK(score, t, k, func(int) bool { return false })
	out := make([]int, len(top))
	for r, i := range top {
		out[r] = items[i]
	}
	return out, pick(score, top)
}

// adamicAdarOf is adamicAdar for the users in cand (score[i] for cand[i]),
// accumulated in acc (all zero, and left so); its tie-break scales the
// combined kernel by its largest magnitude over cand, not over every
// user, which orders the candidates the same way.
func (m *Model) adamicAdarOf(u int, cand []int, score, acc []float64) {
	for _, w := range m.friends[u] {
		x := hubWeight(len(m.friends[w]))
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
