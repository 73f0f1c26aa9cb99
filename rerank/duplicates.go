package rerank

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Near-duplicates do not vote for one another. Candidates that are the
// same image (the same bytes, one drawing filed in two folders or uploaded
// twice) or whose visual feature vectors are identical or nearly so (within
// NearDuplicateDistance) form a cluster, and VisualRank runs over the
// clusters instead of the candidates:
//
//   - a cluster is one node: its affinity to another node is the mean of
//     the kernel between their members, its prior the mean of its members'
//     priors (text scores), so a cluster casts one vote and draws one
//     share of the teleport however many copies it holds;
//   - the stationary distribution over the nodes is split equally among a
//     node's members: each gets its node's score over its size, so the
//     scores still sum to 1, and a cluster's copies tie, in text order.
//
// A learner fits the nodes too (kernels.go): one point a cluster (its
// first member's features), with the mean of its members' tag kernel as its
// target, and each copy gets its node's row of the kernel learned.
// Identical vectors are each other's nearest neighbours at distance 0,
// constraints that the learner's dual closes slowly (38 iterations instead
// of 15 on a window of 50 vectors each repeated four times), and a window
// of m distinct vectors costs what m candidates do.
//
// Without near-duplicates in the window nothing changes.

// NearDuplicateDistance is the relative Euclidean distance up to which two
// visual vectors are near-duplicates: ||x - y|| <= NearDuplicateDistance *
// max(||x||, ||y||). It joins the vectors of the same pixels computed apart
// (float32 storage, another decoder: differences near 1e-7) and keeps apart
// distinct drawings of one series, the closest distinct pairs of the demo
// (5e-4 and up; Corel5k has none within 0.1). A re-encoded image moves
// further (a JPEG or a 90% resize of a demo drawing: 0.04-0.15), as far as
// unrelated drawings: it is found by its bytes or not at all
// (docs/evaluation.md, Near-duplicates).
const NearDuplicateDistance = 1e-4

// clusters are the candidates' near-duplicate clusters: node[i] is
// candidate i's cluster, members[c] the candidates of cluster c in text
// order (clusters numbered by their first member).
type clusters struct {
	node    []int
	members [][]int
}

// duplicates finds the near-duplicate clusters among cands: candidates
// with the same ImageHash, or with visual vectors within
// NearDuplicateDistance of each other, and what links them transitively (a
// candidate with neither is its own cluster); ok is false when every
// cluster has one member.
func duplicates(cands []Candidate) (cl clusters, ok bool) {
	n := len(cands)
	u := make(unionFind, n)
	for i := range u {
		u[i] = i
	}
	byHash := make(map[string]int)
	for i, c := range cands {
		if c.ImageHash == "" {
			continue
		}
		if f, seen := byHash[c.ImageHash]; seen {
			u.union(f, i)
		} else {
			byHash[c.ImageHash] = i
		}
	}
	nearVectors(cands, u)
	cl.node = make([]int, n)
	for i := range cands {
		r := u.find(i)
		if r == i {
			cl.node[i] = len(cl.members)
			cl.members = append(cl.members, []int{i})
			continue
		}
		ok = true
		cl.node[i] = cl.node[r] // r < i: numbered already
		cl.members[cl.node[r]] = append(cl.members[cl.node[r]], i)
	}
	return cl, ok
}

// unionFind holds disjoint sets of indices, each represented by its
// smallest index (its first member in text order).
type unionFind []int

func (u unionFind) find(i int) int {
	for u[i] != i {
		u[i] = u[u[i]]
		i = u[i]
	}
	return i
}

func (u unionFind) union(i, j int) {
	a, b := u.find(i), u.find(j)
	u[max(a, b)] = min(a, b)
}

// projections is how many block sums of a vector nearVectors compares
// before computing a distance.
const projections = 8

// nearVectors joins in u the candidates whose visual vectors are within
// NearDuplicateDistance. It sweeps the vectors in order of their
// projection on a fixed unit direction (two vectors are no nearer than
// their projections' difference, and than their norms') and compares
// first their projections on projections orthonormal block indicators (no
// longer than the vectors' difference), so that the exact distance is
// computed for a few pairs, and not for two already joined (a window of
// one vector repeated costs one distance a candidate). The direction's
// weights are spread out, so that vectors of one norm, such as the 0/1
// vectors of Corel5k whose norms take a few values, still fall apart.
func nearVectors(cands []Candidate, u unionFind) {
	type vec struct {
		i         int
		key, norm float64
		proj      [projections]float64
	}
	dims := 0
	for _, c := range cands {
		dims = max(dims, len(c.Visual))
	}
	dir := make([]float64, dims)
	dn := 0.0
	for k := range dir {
		// Fractional parts of multiples of the golden ratio: distinct,
		// and no small integer combination of them cancels.
		_, f := math.Modf(float64(k+1) * 0.6180339887498949)
		dir[k] = f - 0.5
		dn += dir[k] * dir[k]
	}
	for k := range dir {
		dir[k] /= math.Sqrt(dn)
	}
	vs := make([]vec, 0, len(cands))
	top := 0.0 // the largest norm
	for i, c := range cands {
		if len(c.Visual) == 0 {
			continue
		}
		v := vec{i: i}
		d := len(c.Visual)
		// Block b holds the features k with k * projections / d = b,
		// from ceil(b d / projections) on: bounds, not a division per
		// feature.
		for b := range projections {
			lo, hi := (b*d+projections-1)/projections, ((b+1)*d+projections-1)/projections
			for k, x := range c.Visual[lo:hi] {
				if x == 0 {
					continue // adds nothing: sparse features skip most
				}
				v.norm += x * x
				v.proj[b] += x
				v.key += x * dir[lo+k]
			}
			if hi > lo {
				v.proj[b] /= math.Sqrt(float64(hi - lo))
			}
		}
		v.norm = math.Sqrt(v.norm)
		top = math.Max(top, v.norm)
		vs = append(vs, v)
	}
	slices.SortFunc(vs, func(a, b vec) int { return cmp.Compare(a.key, b.key) })
	tol := NearDuplicateDistance
	// Two near-duplicates' keys differ by at most tol times the larger
	// norm, so by at most reach (with a margin for the keys' rounding).
	reach := tol * top * (1 + 1e-9)
	for a := range vs {
		for b := a + 1; b < len(vs); b++ {
			x, y := &vs[a], &vs[b]
			if y.key-x.key > reach {
				break
			}
			if u.find(x.i) == u.find(y.i) {
				continue
			}
			lim := tol * math.Max(x.norm, y.norm)
			lim2 := lim * lim
			if math.Abs(y.norm-x.norm) > lim || sqDist(x.proj[:], y.proj[:], lim2) > lim2 ||
				len(cands[x.i].Visual) != len(cands[y.i].Visual) ||
				sqDist(cands[x.i].Visual, cands[y.i].Visual, lim2) > lim2 {
				continue
			}
			u.union(x.i, y.i)
		}
	}
}

// sqDist is the squared distance of x and y, or a number above limit once
// the partial sum exceeds it.
func sqDist(x, y []float64, limit float64) float64 {
	s := 0.0
	for k := range x {
		d := x[k] - y[k]
		s += d * d
		if s > limit {
			return s
		}
	}
	return s
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
