package recommend

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

// Nearest users in the combined kernel's feature space, approximately:
// the base kernels with a factored feature map (kernelmath.Sketch: the
// friends, Adamic-Adar and groups Grams, tags, the visual kernel's random
// features) are sketched together into sketchDims dimensions, and
// random-hyperplane hashing (SimHash: two users share a bit with
// probability 1 - angle/pi) over neighbourTables tables finds, for a
// user, the users of its buckets with the largest cosine. Written here
// rather than taken from a library: the one maintained Go HNSW found
// (github.com/coder/hnsw) last released in June 2024, brings
// assembly-backed vector code, and builds a graph insert by insert,
// where these hashes cost O(n) flops to build and a bounded scan to ask.
const (
	sketchDims      = 32
	neighbourTables = 8
	// neighbourScan bounds the users read from one bucket (the first in
	// tie order), and NeighbourCandidates the neighbours a user's friend
	// candidates gain: a query costs at most neighbourTables x
	// neighbourScan cosines of sketchDims.
	neighbourScan       = 256
	NeighbourCandidates = 50
)

// neighbourIndex holds the sketch and the tables.
type neighbourIndex struct {
	z      []float32 // n x sketchDims, rows of unit length (0: not indexed)
	planes []float64 // neighbourTables x bits hyperplanes of sketchDims
	bits   int
	tables []hashTable
}

// hashTable lists the indexed users by their key, in tie order within a
// key.
type hashTable struct {
	keys  []uint32
	users []int32
}

// newNeighbourIndex sketches the model's base kernels (those with a
// factored feature map, weighted by their combination weights) and hashes
// every user with a non-zero sketch; nil when no kernel can be sketched.
func (m *Model) newNeighbourIndex(seed uint64) *neighbourIndex {
	n := m.ds.N()
	rng := rand.New(rand.NewPCG(seed, 0x6e6e))
	z := make([]float64, n*sketchDims)
	sketched := false
	for t, k := range m.kernels {
		sketched = kernelmath.Sketch(z, sketchDims, k.K, m.weights[t], rng) || sketched
	}
	if !sketched {
		return nil
	}
	// About 32 users a bucket: 2^bits buckets.
	ix := &neighbourIndex{z: make([]float32, len(z)), bits: min(24, max(4, bits.Len(uint(n/32))))}
	ix.planes = make([]float64, neighbourTables*ix.bits*sketchDims)
	for i := range ix.planes {
		ix.planes[i] = rng.NormFloat64()
	}
	var indexed []int32
	for u := range n {
		row := z[u*sketchDims : (u+1)*sketchDims]
		norm := math.Sqrt(floats.Dot(row, row))
		if norm == 0 {
			continue
		}
		for j, x := range row {
			ix.z[u*sketchDims+j] = float32(x / norm)
		}
		indexed = append(indexed, int32(u))
	}
	slices.SortFunc(indexed, func(a, b int32) int { return m.userTie[a] - m.userTie[b] })
	for t := range neighbourTables {
		tab := hashTable{keys: make([]uint32, len(indexed)), users: slices.Clone(indexed)}
		for i, u := range tab.users {
			tab.keys[i] = ix.key(t, int(u))
		}
		order := make([]int, len(indexed))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return int(tab.keys[a]) - int(tab.keys[b]) })
		keys, users := make([]uint32, len(order)), make([]int32, len(order))
		for i, o := range order {
			keys[i], users[i] = tab.keys[o], tab.users[o]
		}
		ix.tables = append(ix.tables, hashTable{keys, users})
	}
	return ix
}

// key returns u's bucket in table t: the signs of its sketch against the
// table's hyperplanes.
func (ix *neighbourIndex) key(t, u int) uint32 {
	zu := ix.z[u*sketchDims : (u+1)*sketchDims]
	var k uint32
	for b := range ix.bits {
		p := ix.planes[(t*ix.bits+b)*sketchDims : (t*ix.bits+b+1)*sketchDims]
		s := 0.0
		for j, x := range zu {
			s += float64(x) * p[j]
		}
		if s > 0 {
			k |= 1 << b
		}
	}
	return k
}

// near returns up to NeighbourCandidates users that share a bucket with
// u, largest cosine first (ties in tie order), none of them u or with
// skip; none for a user that is not indexed.
func (ix *neighbourIndex) near(u int, tie []int, skip func(v int) bool) []int {
	zu := ix.z[u*sketchDims : (u+1)*sketchDims]
	if !slices.ContainsFunc(zu, func(x float32) bool { return x != 0 }) {
		return nil
	}
	var cand []int
	for t, tab := range ix.tables {
		k := ix.key(t, u)
		lo, _ := slices.BinarySearch(tab.keys, k)
		for i := lo; i < len(tab.keys) && tab.keys[i] == k && i < lo+neighbourScan; i++ {
			if v := int(tab.users[i]); v != u && !skip(v) {
				cand = append(cand, v)
			}
		}
	}
	slices.Sort(cand)
	cand = slices.Compact(cand)
	score := make([]float64, len(cand))
	for i, v := range cand {
		for j, x := range ix.z[v*sketchDims : (v+1)*sketchDims] {
			score[i] += float64(x) * float64(zu[j])
		}
	}
	out, _ := pickTop(cand, score, tie, NeighbourCandidates)
	return out
}
