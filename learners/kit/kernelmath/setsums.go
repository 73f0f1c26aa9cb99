package kernelmath

import "math"

// SetSums answers sum_{j in S} K(i, j) for fixed sets S of users of a
// kernel with a factored feature map (a Gram D X X' D or a low-rank
// D Z Z' D, factorOf) without reading the sets' members: the sum is
// d_i x_i . sum_{j in S} d_j x_j, so each set keeps the sum of its
// members' feature vectors, and a query costs one pass over i's features.
// The sums are kept feature-major (for each feature, the sets whose sum
// has it), so that AddAll gives every set's sum at once for the cost of
// the sets' entries under i's features: for a Gram, sum over the columns
// of x_i of the sets with a member there. Memory: 12 bytes an entry of
// a set's sum, at most 12 nnz(X restricted to the members) bytes; a
// low-rank kernel 8 r bytes a set. Safe for concurrent use.
type SetSums struct {
	n, sets int
	f       factored
	bySet   csr       // Gram: feature a -> (set, sum of d_j x_ja over its members)
	low     []float64 // low rank: sets x r, row s the sum of d_j z_j over set s
}

// NewSetSums keeps the sums of sets (lists of users of k) under k's
// feature map. It reports false for a kernel without one (a sparse
// symmetric matrix, a dense, shifted or summed kernel): the caller sums
// entries instead.
func NewSetSums(k KernelMatrix, sets [][]int) (*SetSums, bool) {
	f, ok := factorOf(k)
	if !ok || f.sparse != nil {
		return nil, false
	}
	s := &SetSums{n: k.Dim(), sets: len(sets), f: f}
	if f.low != nil {
		r := f.low.Rank()
		s.low = make([]float64, len(sets)*r)
		for set, users := range sets {
			sum := s.low[set*r : (set+1)*r]
			for _, j := range users {
				d := f.scale(j)
				for c, z := range f.low.z.RawRowView(j) {
					sum[c] += d * z
				}
			}
		}
		return s, true
	}
	var entries []Triplet
	for set, users := range sets {
		for _, j := range users {
			d := f.scale(j)
			cols, vals := f.gram.x.row(j)
			for p, a := range cols {
				entries = append(entries, Triplet{I: set, J: int(a), V: d * vals[p]})
			}
		}
	}
	s.bySet = newCSR(f.gram.m, entries, true, false)
	return s, true
}

// Sets returns the number of sets.
func (s *SetSums) Sets() int { return s.sets }

// Bytes returns the memory the sums take.
func (s *SetSums) Bytes() int { return 12*len(s.bySet.col) + 8*len(s.bySet.ptr) + 8*len(s.low) }

// AddAll adds w sum_{j in S} K(i, j) to dst[S] for every set S (dst has
// one entry a set). A member j = i counts as any other.
func (s *SetSums) AddAll(i int, w float64, dst []float64) {
	di := w * s.f.scale(i)
	if di == 0 || math.IsNaN(di) {
		return
	}
	if s.low != nil {
		zi := s.f.low.z.RawRowView(i)
		r := len(zi)
		for set := range s.sets {
			dst[set] += di * dot(zi, s.low[set*r:(set+1)*r])
		}
		return
	}
	cols, vals := s.f.gram.x.row(i)
	for p, a := range cols {
		x := di * vals[p]
		sets, sums := s.bySet.row(int(a))
		for q, set := range sets {
			dst[set] += x * sums[q]
		}
	}
}

// SparseRows returns a visitor of the non-zeros of k's rows when k is a
// Gram D X X' D (factorOf): row(i, visit) calls visit(j, v) once for each
// feature i shares with j, the K(i, j) being the sum of those v. A row
// costs the sum over i's features of the users that have them (the
// two-step neighbourhood of i), not n. It reports false for any other
// kernel.
func SparseRows(k KernelMatrix) (row func(i int, visit func(j int, v float64)), ok bool) {
	f, ok := factorOf(k)
	if !ok || f.gram == nil {
		return nil, false
	}
	return func(i int, visit func(j int, v float64)) {
		di := f.scale(i)
		cols, vals := f.gram.x.row(i)
		for p, a := range cols {
			x := di * vals[p]
			users, ys := f.gram.xt.row(int(a))
			for q, j := range users {
				visit(int(j), x*f.scale(int(j))*ys[q])
			}
		}
	}, true
}
