package kernelmath

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// KernelMatrix is a symmetric n x n kernel matrix that need not be stored:
// what learners on thousands of points (alignment, kernel logistic
// regression, recommenders) need from a kernel is a row at a time, products
// with vectors, the diagonal and the row sums, and those are cheap for a
// sparse matrix (SparseSym), a sparse Gram X X^T (Gram), a low-rank Z Z^T
// (LowRank), an inverse applied by conjugate gradients (RegLaplacian), and
// scalings and sums of these, none of which forms the n x n matrix.
//
// All methods must be safe for concurrent use (rows are computed in
// parallel). The cost of each method is documented on the implementation.
type KernelMatrix interface {
	Operator                  // Dim and Apply (dst = K x)
	At(i, j int) float64      // one entry
	Row(i int, dst []float64) // dst (length Dim) = K(i, :)
	Diag() []float64          // K_ii
	RowSums() []float64       // K 1
}

// DenseKernel adapts a dense symmetric matrix to KernelMatrix (n^2 storage:
// for small n).
type DenseKernel struct{ K *mat.SymDense }

var _ KernelMatrix = (*DenseKernel)(nil)

// Dim returns n.
func (d DenseKernel) Dim() int { return d.K.SymmetricDim() }

// At returns K_ij.
func (d DenseKernel) At(i, j int) float64 { return d.K.At(i, j) }

// Apply sets dst = K x.
func (d DenseKernel) Apply(dst, x []float64) { SymOperator(d.K).Apply(dst, x) }

// Row sets dst to row i (upper-triangle storage read by column below i).
func (d DenseKernel) Row(i int, dst []float64) {
	raw := d.K.RawSymmetric()
	for j := 0; j < i; j++ {
		dst[j] = raw.Data[j*raw.Stride+i]
	}
	copy(dst[i:], raw.Data[i*raw.Stride+i:i*raw.Stride+raw.N])
}

// Diag returns the diagonal.
func (d DenseKernel) Diag() []float64 {
	out := make([]float64, d.Dim())
	for i := range out {
		out[i] = d.K.At(i, i)
	}
	return out
}

// RowSums returns K 1.
func (d DenseKernel) RowSums() []float64 { return RowSumsByApply(d) }

// RowSumsByApply returns K 1 as k.Apply of the ones vector: the RowSums of
// a KernelMatrix with no cheaper way to them.
func RowSumsByApply(k KernelMatrix) []float64 {
	ones := make([]float64, k.Dim())
	for i := range ones {
		ones[i] = 1
	}
	out := make([]float64, len(ones))
	k.Apply(out, ones)
	return out
}

// ScaledKernel is the symmetrised diagonal scaling of a kernel plus a shift,
// (A K B + B K A)/2 + delta I with A, B diagonal: entry (i, j) is
// K_ij (a_i b_j + b_i a_j)/2 + delta [i = j]. It covers the cosine
// normalisation S K S (A = B = diag(K)^(-1/2), see CosineScaled), the
// row scaling then symmetrisation (D K + K D)/2 of the social-strength thesis
// (A = D, B = I, see RowScaled) and the diagonal shift (Shifted). Each method
// costs what the same method of K costs, plus O(n); Apply and RowSums call
// K twice unless A = B.
type ScaledKernel struct {
	base  KernelMatrix
	a, b  []float64
	same  bool // a and b are equal: one product with base suffices
	shift float64
}

// CosineScaled returns K_ij / sqrt(K_ii K_jj): the kernel with unit diagonal
// (rows with K_ii <= 0 become zero rather than NaN). It stays PSD if K is.
func CosineScaled(k KernelMatrix) *ScaledKernel {
	s := k.Diag()
	for i, d := range s {
		if d > 0 {
			s[i] = 1 / math.Sqrt(d)
		} else {
			s[i] = 0
		}
	}
	return &ScaledKernel{base: k, a: s, b: s, same: true}
}

// RowScaled returns (D K + K D)/2 with D = diag(d): entry (i, j) is
// K_ij (d_i + d_j)/2. With d_i = 1/max_j K_ij it is "divide each row by its
// maximum, then symmetrise"; unlike S K S it need not stay PSD.
func RowScaled(k KernelMatrix, d []float64) (*ScaledKernel, error) {
	if len(d) != k.Dim() {
		return nil, fmt.Errorf("learners: %d row scales for a %d x %d kernel", len(d), k.Dim(), k.Dim())
	}
	ones := make([]float64, len(d))
	for i := range ones {
		ones[i] = 1
	}
	return &ScaledKernel{base: k, a: d, b: ones}, nil
}

// Shifted returns the same scaled kernel plus delta I.
func (s *ScaledKernel) Shifted(delta float64) *ScaledKernel {
	c := *s
	c.shift += delta
	return &c
}

// Base returns the kernel before scaling.
func (s *ScaledKernel) Base() KernelMatrix { return s.base }

var _ KernelMatrix = (*ScaledKernel)(nil)

// Dim returns n.
func (s *ScaledKernel) Dim() int { return s.base.Dim() }

func (s *ScaledKernel) factor(i, j int) float64 { return (s.a[i]*s.b[j] + s.b[i]*s.a[j]) / 2 }

// At returns one entry.
func (s *ScaledKernel) At(i, j int) float64 {
	v := s.factor(i, j) * s.base.At(i, j)
	if i == j {
		v += s.shift
	}
	return v
}

// Row sets dst to row i.
func (s *ScaledKernel) Row(i int, dst []float64) {
	s.base.Row(i, dst)
	for j := range dst {
		dst[j] *= s.factor(i, j)
	}
	dst[i] += s.shift
}

// Apply sets dst = (A K B + B K A)/2 x + delta x.
func (s *ScaledKernel) Apply(dst, x []float64) {
	n := len(x)
	t := make([]float64, n)
	u := make([]float64, n)
	floats.MulTo(t, s.a, x)
	s.base.Apply(u, t)
	if s.same {
		floats.MulTo(dst, s.a, u)
	} else {
		floats.MulTo(dst, s.b, u)
		floats.MulTo(t, s.b, x)
		s.base.Apply(u, t)
		for i := range dst {
			dst[i] = (dst[i] + s.a[i]*u[i]) / 2
		}
	}
	floats.AddScaled(dst, s.shift, x)
}

// Diag returns the diagonal.
func (s *ScaledKernel) Diag() []float64 {
	d := s.base.Diag()
	for i := range d {
		d[i] = d[i]*s.a[i]*s.b[i] + s.shift
	}
	return d
}

// RowSums returns the row sums.
func (s *ScaledKernel) RowSums() []float64 { return RowSumsByApply(s) }

// KernelSum is the weighted sum sum_t w_t K_t of kernels of one size, e.g.
// the combination an MKL learner outputs. Row and Apply allocate one
// n-vector a call.
type KernelSum struct {
	weights []float64
	kernels []KernelMatrix
}

// NewKernelSum returns sum_t weights[t] kernels[t]. The lists must be
// non-empty, of one length, the kernels of one size and the weights finite.
func NewKernelSum(weights []float64, kernels []KernelMatrix) (*KernelSum, error) {
	if len(kernels) == 0 || len(weights) != len(kernels) {
		return nil, fmt.Errorf("learners: %d weights for %d kernels", len(weights), len(kernels))
	}
	for t, k := range kernels {
		if k.Dim() != kernels[0].Dim() {
			return nil, fmt.Errorf("learners: kernel %d is %d x %d, kernel 0 is %d x %d", t, k.Dim(), k.Dim(), kernels[0].Dim(), kernels[0].Dim())
		}
		if math.IsNaN(weights[t]) || math.IsInf(weights[t], 0) {
			return nil, fmt.Errorf("learners: weight %d is %v", t, weights[t])
		}
	}
	return &KernelSum{weights: weights, kernels: kernels}, nil
}

var _ KernelMatrix = (*KernelSum)(nil)

// Dim returns n.
func (s *KernelSum) Dim() int { return s.kernels[0].Dim() }

// At returns one entry.
func (s *KernelSum) At(i, j int) float64 {
	v := 0.0
	for t, k := range s.kernels {
		v += s.weights[t] * k.At(i, j)
	}
	return v
}

// Row sets dst to row i.
func (s *KernelSum) Row(i int, dst []float64) {
	s.combine(dst, func(k KernelMatrix, out []float64) { k.Row(i, out) })
}

// Apply sets dst = sum_t w_t K_t x.
func (s *KernelSum) Apply(dst, x []float64) {
	s.combine(dst, func(k KernelMatrix, out []float64) { k.Apply(out, x) })
}

func (s *KernelSum) combine(dst []float64, part func(KernelMatrix, []float64)) {
	clear(dst)
	tmp := make([]float64, len(dst))
	for t, k := range s.kernels {
		part(k, tmp)
		floats.AddScaled(dst, s.weights[t], tmp)
	}
}

// Diag returns the diagonal.
func (s *KernelSum) Diag() []float64 {
	return s.sumVectors(func(k KernelMatrix) []float64 { return k.Diag() })
}

// RowSums returns the row sums.
func (s *KernelSum) RowSums() []float64 {
	return s.sumVectors(func(k KernelMatrix) []float64 { return k.RowSums() })
}

func (s *KernelSum) sumVectors(part func(KernelMatrix) []float64) []float64 {
	out := make([]float64, s.Dim())
	for t, k := range s.kernels {
		floats.AddScaled(out, s.weights[t], part(k))
	}
	return out
}

// sweepChunk is the number of rows a worker of sweepRows takes at a time.
const sweepChunk = 32

// sweepRows splits the rows [0, n) into chunks [c*sweepChunk, ...) and runs
// them on GOMAXPROCS workers, checking ctx between chunks. Each worker calls
// newWorker once for its body (so that it can own its scratch) and then
// body(chunk, lo, hi) for the chunks it takes. Results combined per chunk in
// chunk order are deterministic whatever the scheduling.
func sweepRows(ctx context.Context, n int, newWorker func() func(chunk, lo, hi int)) error {
	chunks := numChunks(n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < max(1, min(runtime.GOMAXPROCS(0), chunks)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := newWorker()
			for ctx.Err() == nil {
				c := int(next.Add(1)) - 1
				if c >= chunks {
					return
				}
				body(c, c*sweepChunk, min(n, (c+1)*sweepChunk))
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

func numChunks(n int) int { return (n + sweepChunk - 1) / sweepChunk }

// KernelInnerProducts returns the p x p matrix of Frobenius inner products
// <K_s, K_t>_F of the kernels, or of their centred forms <H K_s H, H K_t H>_F
// (H = I - 11^T/n) when centred is set, computed from rows without forming
// any kernel: one sweep over the rows of all kernels together, so each row of
// each kernel is computed once. To get an alignment with a target Y (as
// ALIGNF needs), put Y last in the list. Cost: the cost of all rows of all
// kernels, plus n^2 p(p+1)/2 flops for the dot products, over GOMAXPROCS
// workers; memory O(p n) a worker. The result does not depend on the number
// of workers.
func KernelInnerProducts(ctx context.Context, ks []KernelMatrix, centred bool) (*mat.SymDense, error) {
	n, err := commonDim(ks)
	if err != nil {
		return nil, err
	}
	p := len(ks)
	partial := make([][]float64, numChunks(n)) // per chunk: upper triangle, row-major p x p
	err = sweepRows(ctx, n, func() func(int, int, int) {
		rows := make([][]float64, p)
		for t := range rows {
			rows[t] = make([]float64, n)
		}
		return func(c, lo, hi int) {
			g := make([]float64, p*p)
			for i := lo; i < hi; i++ {
				for t, k := range ks {
					k.Row(i, rows[t])
				}
				for s := 0; s < p; s++ {
					for t := s; t < p; t++ {
						g[s*p+t] += floats.Dot(rows[s], rows[t])
					}
				}
			}
			partial[c] = g
		}
	})
	if err != nil {
		return nil, err
	}
	out := mat.NewSymDense(p, nil)
	for _, g := range partial {
		for s := 0; s < p; s++ {
			for t := s; t < p; t++ {
				out.SetSym(s, t, out.At(s, t)+g[s*p+t])
			}
		}
	}
	if centred {
		centreAll(out, ks)
	}
	return out, nil
}

// commonDim returns the size of the kernels, an error when there are none
// or their sizes differ.
func commonDim(ks []KernelMatrix) (int, error) {
	if len(ks) == 0 {
		return 0, fmt.Errorf("learners: no kernels")
	}
	n := ks[0].Dim()
	for t, k := range ks {
		if k.Dim() != n {
			return 0, fmt.Errorf("learners: kernel %d is %d x %d, kernel 0 is %d x %d", t, k.Dim(), k.Dim(), n, n)
		}
	}
	return n, nil
}

// centreAll turns the inner products g of the kernels into those of their
// centred forms, from the row sums.
func centreAll(g *mat.SymDense, ks []KernelMatrix) {
	sums := make([][]float64, len(ks))
	for t, k := range ks {
		sums[t] = k.RowSums()
	}
	for s := range ks {
		for t := s; t < len(ks); t++ {
			g.SetSym(s, t, centerInner(g.At(s, t), sums[s], sums[t]))
		}
	}
}

// KernelRowMax returns max_j K_ij for every row, in one parallel sweep over
// the rows (cost: every row of K once).
func KernelRowMax(ctx context.Context, k KernelMatrix) ([]float64, error) {
	n := k.Dim()
	out := make([]float64, n)
	err := sweepRows(ctx, n, func() func(int, int, int) {
		row := make([]float64, n)
		return func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				k.Row(i, row)
				out[i] = floats.Max(row)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// KernelDense forms the kernel as a dense matrix, row by row (n^2 storage:
// for small n, tests and dense-only learners).
func KernelDense(k KernelMatrix) *mat.SymDense {
	n := k.Dim()
	out := mat.NewSymDense(n, nil)
	raw := out.RawSymmetric()
	row := make([]float64, n)
	for i := 0; i < n; i++ {
		k.Row(i, row)
		copy(raw.Data[i*raw.Stride+i:i*raw.Stride+n], row[i:])
	}
	return out
}
