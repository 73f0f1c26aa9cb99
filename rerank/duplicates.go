package rerank

import (
	"hash/maphash"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Near-duplicates do not vote for one another. Candidates whose visual
// feature vectors are identical (one drawing filed in two folders, the
// same image bytes uploaded twice) form a cluster, and VisualRank runs over
// the clusters instead of the candidates:
//
//   - a cluster is one node: its affinity to another node is the mean of
//     the kernel between their members, its prior the mean of its members'
//     priors (text scores), so a cluster casts one vote and draws one
//     share of the teleport however many copies it holds;
//   - the stationary distribution over the nodes is split equally among a
//     node's members: each gets its node's score over its size, so the
//     scores still sum to 1, and a cluster's copies tie, in text order.
//
// A learner fits the nodes too (kernels.go): one point a cluster, with the
// mean of its members' tag kernel as its target, and each copy gets its
// node's row of the kernel learned. Identical vectors are each other's
// nearest neighbours at distance 0, constraints that the learner's dual
// closes slowly (38 iterations instead of 15 on a window of 50 vectors
// each repeated four times), and a window of m distinct vectors costs what
// m candidates do.
//
// Without two identical vectors in the window nothing changes: the usual
// case costs one hash of each vector.

// clusters are the candidates' near-duplicate clusters: node[i] is
// candidate i's cluster, members[c] the candidates of cluster c in text
// order (clusters numbered by their first member).
type clusters struct {
	node    []int
	members [][]int
}

// duplicates finds the clusters of identical visual vectors among cands
// (a candidate without one is its own); ok is false when every cluster
// has one member.
func duplicates(cands []Candidate) (cl clusters, ok bool) {
	seed := maphash.MakeSeed()
	first := make(map[uint64][]int, len(cands)) // hash -> the clusters' first members
	cl.node = make([]int, len(cands))
	for i, c := range cands {
		cl.node[i] = -1
		if len(c.Visual) > 0 {
			h := hashVector(seed, c.Visual)
			for _, f := range first[h] {
				if slices.Equal(cands[f].Visual, c.Visual) {
					cl.node[i] = cl.node[f]
					cl.members[cl.node[f]] = append(cl.members[cl.node[f]], i)
					ok = true
					break
				}
			}
			if cl.node[i] < 0 {
				first[h] = append(first[h], i)
			}
		}
		if cl.node[i] < 0 {
			cl.node[i] = len(cl.members)
			cl.members = append(cl.members, []int{i})
		}
	}
	return cl, ok
}

func hashVector(seed maphash.Seed, v []float64) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	var b [8]byte
	for _, x := range v {
		bits := math.Float64bits(x + 0) // -0 and +0 alike, as slices.Equal sees them
		for i := range b {
			b[i] = byte(bits >> (8 * i))
		}
		h.Write(b[:])
	}
	return h.Sum64()
}

// collapse returns the kernel between cl's nodes (meanKernel) and one
// candidate a node, its first member with the mean text score of its
// members.
func (cl clusters) collapse(k *mat.SymDense, cands []Candidate) (*mat.SymDense, []Candidate) {
	nodes := cl.firsts(cands)
	for a, ms := range cl.members {
		s := 0.0
		for _, i := range ms {
			s += cands[i].TextScore
		}
		nodes[a].TextScore = s / float64(len(ms))
	}
	return cl.meanKernel(k, mat.NewSymDense(len(cl.members), nil)), nodes
}

// firsts is the first member of each node.
func (cl clusters) firsts(cands []Candidate) []Candidate {
	out := make([]Candidate, len(cl.members))
	for a, ms := range cl.members {
		out[a] = cands[ms[0]]
	}
	return out
}

// meanKernel writes into dst (m x m, m the nodes) the kernel between the
// nodes: the mean of k over their members' pairs.
func (cl clusters) meanKernel(k, dst *mat.SymDense) *mat.SymDense {
	m := len(cl.members)
	for a := 0; a < m; a++ {
		for b := a; b < m; b++ {
			s := 0.0
			for _, i := range cl.members[a] {
				for _, j := range cl.members[b] {
					s += k.At(i, j)
				}
			}
			dst.SetSym(a, b, s/float64(len(cl.members[a])*len(cl.members[b])))
		}
	}
	return dst
}

// expand is the kernel over the candidates of kc over the nodes: a
// candidate has its node's row.
func (cl clusters) expand(kc *mat.SymDense) *mat.SymDense {
	n := len(cl.node)
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			k.SetSym(i, j, kc.At(cl.node[i], cl.node[j]))
		}
	}
	return k
}

// split gives each candidate its node's score over the node's size.
func (cl clusters) split(nodeVR []float64) []float64 {
	vr := make([]float64, len(cl.node))
	for i, c := range cl.node {
		vr[i] = nodeVR[c] / float64(len(cl.members[c]))
	}
	return vr
}
