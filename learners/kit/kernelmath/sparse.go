package kernelmath

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Triplet is one entry (I, J, V) of a sparse matrix given in coordinate form.
type Triplet struct {
	I, J int
	V    float64
}

// csr is a matrix in compressed sparse row form: row i holds the columns
// col[ptr[i]:ptr[i+1]] in ascending order and the matching values. Columns
// are int32 (12 bytes a non-zero with the float64 value), which bounds the
// dimension at 2^31-1.
type csr struct {
	ptr []int
	col []int32
	val []float64
}

// maxDim is the largest dimension a csr column index can hold.
const maxDim = math.MaxInt32

// checkTriplets validates the indices against rows x cols and the values.
func checkTriplets(rows, cols int, entries []Triplet) error {
	if rows < 0 || cols < 0 || rows > maxDim || cols > maxDim {
		return fmt.Errorf("sparse: dimensions %d x %d out of range [0, %d]", rows, cols, maxDim)
	}
	for k, t := range entries {
		if t.I < 0 || t.I >= rows || t.J < 0 || t.J >= cols {
			return fmt.Errorf("sparse: entry %d at (%d, %d) outside %d x %d", k, t.I, t.J, rows, cols)
		}
		if math.IsNaN(t.V) || math.IsInf(t.V, 0) {
			return fmt.Errorf("sparse: entry %d at (%d, %d) is %v", k, t.I, t.J, t.V)
		}
	}
	return nil
}

// newCSR builds the rows x ? matrix holding the (already checked) entries,
// transposed when transpose is set, and with every off-diagonal entry also
// stored at its mirror position when mirror is set. Duplicates are summed and
// entries that sum to zero are dropped. Cost O(nnz log(row length)).
func newCSR(rows int, entries []Triplet, transpose, mirror bool) csr {
	at := func(t Triplet) (int, int) {
		if transpose {
			return t.J, t.I
		}
		return t.I, t.J
	}
	start := make([]int, rows+1)
	for _, t := range entries {
		i, j := at(t)
		start[i+1]++
		if mirror && i != j {
			start[j+1]++
		}
	}
	for i := 0; i < rows; i++ {
		start[i+1] += start[i]
	}
	col := make([]int32, start[rows])
	val := make([]float64, start[rows])
	next := slices.Clone(start[:rows])
	put := func(i, j int, v float64) {
		col[next[i]], val[next[i]] = int32(j), v
		next[i]++
	}
	for _, t := range entries {
		i, j := at(t)
		put(i, j, t.V)
		if mirror && i != j {
			put(j, i, t.V)
		}
	}
	ptr := make([]int, rows+1)
	out := 0
	for i := 0; i < rows; i++ {
		lo, hi := start[i], start[i+1]
		r := rowSorter{col[lo:hi], val[lo:hi]}
		if !sort.IsSorted(r) {
			sort.Sort(r)
		}
		ptr[i] = out
		for p := lo; p < hi; {
			c, s := col[p], 0.0
			for ; p < hi && col[p] == c; p++ {
				s += val[p]
			}
			if s != 0 {
				col[out], val[out] = c, s
				out++
			}
		}
	}
	ptr[rows] = out
	if out < len(col) {
		col, val = slices.Clone(col[:out]), slices.Clone(val[:out])
	}
	return csr{ptr, col, val}
}

// rowSorter sorts the entries of one row by column.
type rowSorter struct {
	col []int32
	val []float64
}

func (r rowSorter) Len() int           { return len(r.col) }
func (r rowSorter) Less(a, b int) bool { return r.col[a] < r.col[b] }
func (r rowSorter) Swap(a, b int) {
	r.col[a], r.col[b] = r.col[b], r.col[a]
	r.val[a], r.val[b] = r.val[b], r.val[a]
}

// row returns the columns and values of row i.
func (m *csr) row(i int) ([]int32, []float64) {
	return m.col[m.ptr[i]:m.ptr[i+1]], m.val[m.ptr[i]:m.ptr[i+1]]
}

// mulVec sets dst = M x.
func (m *csr) mulVec(dst, x []float64) {
	for i := range dst {
		cols, vals := m.row(i)
		s := 0.0
		for p, c := range cols {
			s += vals[p] * x[c]
		}
		dst[i] = s
	}
}

// at returns M_ij by binary search in row i.
func (m *csr) at(i, j int) float64 {
	cols, vals := m.row(i)
	if p, ok := slices.BinarySearch(cols, int32(j)); ok {
		return vals[p]
	}
	return 0
}

// sparseDot returns the inner product of two sorted sparse vectors.
func sparseDot(ca []int32, va []float64, cb []int32, vb []float64) float64 {
	s := 0.0
	for p, q := 0, 0; p < len(ca) && q < len(cb); {
		switch {
		case ca[p] < cb[q]:
			p++
		case ca[p] > cb[q]:
			q++
		default:
			s += va[p] * vb[q]
			p++
			q++
		}
	}
	return s
}

// SparseSym is a symmetric n x n sparse matrix in compressed sparse row form
// with both triangles stored: 12 bytes a stored non-zero plus 8 bytes a row.
// It is immutable once built (methods that return a matrix return a new one),
// so it is safe for concurrent use. It implements Operator and KernelMatrix.
type SparseSym struct {
	n int
	m csr
}

// NewSparseSym builds an n x n symmetric matrix from triplets. Each
// off-diagonal triplet (i, j, v) adds v at both (i, j) and (j, i), so every
// unordered pair is given once (in either orientation); duplicates are summed
// and entries summing to zero are not stored. Indices outside [0, n) and
// non-finite values are errors.
func NewSparseSym(n int, entries []Triplet) (*SparseSym, error) {
	if err := checkTriplets(n, n, entries); err != nil {
		return nil, err
	}
	return &SparseSym{n: n, m: newCSR(n, entries, false, true)}, nil
}

var _ KernelMatrix = (*SparseSym)(nil)

// Dim returns n.
func (s *SparseSym) Dim() int { return s.n }

// NNZ returns the number of stored non-zeros (both triangles).
func (s *SparseSym) NNZ() int { return len(s.m.col) }

// At returns the entry (i, j), by binary search in row i.
func (s *SparseSym) At(i, j int) float64 { return s.m.at(i, j) }

// RowNonzeros returns the columns (ascending) and values of the non-zeros of
// row i. The slices alias the matrix and must not be modified.
func (s *SparseSym) RowNonzeros(i int) ([]int32, []float64) { return s.m.row(i) }

// Row sets dst (length n) to row i.
func (s *SparseSym) Row(i int, dst []float64) {
	clear(dst)
	cols, vals := s.m.row(i)
	for p, c := range cols {
		dst[c] = vals[p]
	}
}

// Apply sets dst = S x.
func (s *SparseSym) Apply(dst, x []float64) { s.m.mulVec(dst, x) }

// RowSums returns S 1.
func (s *SparseSym) RowSums() []float64 {
	out := make([]float64, s.n)
	for i := range out {
		_, vals := s.m.row(i)
		for _, v := range vals {
			out[i] += v
		}
	}
	return out
}

// Diag returns the diagonal.
func (s *SparseSym) Diag() []float64 {
	out := make([]float64, s.n)
	for i := range out {
		out[i] = s.m.at(i, i)
	}
	return out
}

// Frobenius returns <S, O>_F = sum_ij S_ij O_ij by merging the rows, in
// O(nnz(S) + nnz(O)). It panics if the dimensions differ.
func (s *SparseSym) Frobenius(o *SparseSym) float64 {
	mustSameDim(s, o)
	t := 0.0
	for i := 0; i < s.n; i++ {
		ca, va := s.m.row(i)
		cb, vb := o.m.row(i)
		t += sparseDot(ca, va, cb, vb)
	}
	return t
}

// Scale returns alpha S.
func (s *SparseSym) Scale(alpha float64) *SparseSym {
	if alpha == 0 {
		return &SparseSym{n: s.n, m: csr{ptr: make([]int, s.n+1)}}
	}
	m := csr{ptr: s.m.ptr, col: s.m.col, val: make([]float64, len(s.m.val))}
	for p, v := range s.m.val {
		m.val[p] = alpha * v
	}
	return &SparseSym{n: s.n, m: m}
}

// Add returns S + alpha O, merging the rows (entries that cancel are not
// stored). It panics if the dimensions differ.
func (s *SparseSym) Add(o *SparseSym, alpha float64) *SparseSym {
	mustSameDim(s, o)
	m := csr{ptr: make([]int, s.n+1)}
	for i := 0; i < s.n; i++ {
		ca, va := s.m.row(i)
		cb, vb := o.m.row(i)
		p, q := 0, 0
		for p < len(ca) || q < len(cb) {
			var c int32
			var v float64
			switch {
			case q == len(cb) || (p < len(ca) && ca[p] < cb[q]):
				c, v = ca[p], va[p]
				p++
			case p == len(ca) || cb[q] < ca[p]:
				c, v = cb[q], alpha*vb[q]
				q++
			default:
				c, v = ca[p], va[p]+alpha*vb[q]
				p++
				q++
			}
			if v != 0 {
				m.col = append(m.col, c)
				m.val = append(m.val, v)
			}
		}
		m.ptr[i+1] = len(m.col)
	}
	return &SparseSym{n: s.n, m: m}
}

// Dense returns S as a dense matrix (n^2 storage: for small n only).
func (s *SparseSym) Dense() *mat.SymDense {
	d := mat.NewSymDense(s.n, nil)
	for i := 0; i < s.n; i++ {
		cols, vals := s.m.row(i)
		for p, c := range cols {
			if int(c) >= i {
				d.SetSym(i, int(c), vals[p])
			}
		}
	}
	return d
}

// CenteredFrobenius returns <H A H, H B H>_F, H = I - 11^T/n, without forming
// anything dense: <A,B> - (2/n) rA.rB + sA sB / n^2 with r the row sums and s
// their totals. Cost O(nnz(A) + nnz(B)).
func CenteredFrobenius(a, b *SparseSym) float64 {
	return centerInner(a.Frobenius(b), a.RowSums(), b.RowSums())
}

// centerInner turns <A,B> into <HAH, HBH> given the row sums of A and B.
func centerInner(inner float64, ra, rb []float64) float64 {
	n := float64(len(ra))
	if n == 0 {
		return 0
	}
	dot, sa, sb := 0.0, 0.0, 0.0
	for i := range ra {
		dot += ra[i] * rb[i]
		sa += ra[i]
		sb += rb[i]
	}
	return inner - 2*dot/n + sa*sb/(n*n)
}

func mustSameDim(a, b interface{ Dim() int }) {
	if a.Dim() != b.Dim() {
		panic(fmt.Sprintf("learners: dimension mismatch %d != %d", a.Dim(), b.Dim()))
	}
}
