package kernelmath

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Defaults of InnerOptions.
const (
	// DefaultSweepMax is the largest n at which kernels without a factored
	// form are swept row by row (every row of every kernel: O(n^2 p^2)).
	DefaultSweepMax = 20000
	// DefaultSampleRows is the number of rows sampled above it.
	DefaultSampleRows = 4096
	// DefaultFactorsFrom is the smallest n at which factored kernels are
	// used rather than the row sweep. Below it the sweep's n^2 p^2 dot
	// products are few and run at memory speed, while the factored
	// products scatter into accumulators: on BlogCatalog (10,312 users,
	// two-hop neighbourhoods of 62% of the users) the sweep takes 0.7 s and
	// the factors 2.5 s; on YouTube (77,381 users) the factors 1.8 s.
	DefaultFactorsFrom = 16384
)

// Methods of InnerProducts.
const (
	MethodFactors = "factors"         // every kernel factored: exact at any n
	MethodRows    = "rows"            // every row of every kernel: exact
	MethodSampled = "factors+sampled" // factored pairs exact, the others from sampled rows
)

// InnerOptions configures FrobeniusInnerProducts. The zero value is the
// default.
type InnerOptions struct {
	// SweepMax is the largest n at which a kernel without a factored form
	// makes every inner product come from a sweep over all rows (default
	// DefaultSweepMax); above it, the pairs such a kernel takes part in are
	// estimated from SampleRows rows (default DefaultSampleRows) drawn
	// without replacement with Seed.
	SweepMax   int
	SampleRows int
	Seed       uint64
	// FactorsFrom is the smallest n at which the factored forms are used
	// (default DefaultFactorsFrom; 1: at any n); below it every inner
	// product comes from the row sweep. Both are exact.
	FactorsFrom int
}

// InnerProducts is the p x p matrix of Frobenius inner products of p
// kernels, and how it was found.
type InnerProducts struct {
	G      *mat.SymDense
	Method string // MethodFactors, MethodRows or MethodSampled
	// StdErr holds the standard error of each estimated entry of G (0 for
	// the exact ones); nil when every entry is exact. SampledRows is the
	// number of rows the estimates come from.
	StdErr      *mat.SymDense
	SampledRows int
}

// FrobeniusInnerProducts returns <K_s, K_t>_F for every pair of kernels, of
// their centred forms H K H (H = I - 11'/n) when centred is set:
//
//	<H K_s H, H K_t H> = <K_s, K_t> - (2/n) (K_s 1)'(K_t 1) + (1'K_s 1)(1'K_t 1)/n^2,
//
// with the row sums K 1 exact (one product each). From opts.FactorsFrom
// points on, it never forms a row when every kernel has a factored form, K = D F D with D diagonal and F a
// SparseSym S, a Gram X X' or a LowRank Z Z' (the kernels BuildKernels makes,
// scaled by a constant or by the cosine normalisation): then, exactly,
//
//	<D X X' D, E Y Y' E> = ||X' D E Y||_F^2   (one sparse column of X' D E Y at a time),
//	<D S D, K>            = sum over S's non-zeros of S_ij d_i d_j K_ij,
//
// costing sum_i nnz(x_i) nnz(y_i) (nnz(x_i) r against a rank-r Z, n r r'
// for two LowRanks) and sum over S's non-zeros of the cost of K_ij. Kernels
// without a factored form (dense, regularised Laplacian, row-scaled,
// shifted, sums), and every kernel below opts.FactorsFrom points, are swept
// row by row, as KernelInnerProducts does, up to opts.SweepMax users; above it, the pairs they take part in are estimated
// from m sampled rows i: <K_s, K_t> = sum_i <K_s(i,:), K_t(i,:)> is
// estimated by (n/m) times the sum over the sample, whose standard error
// n sqrt((1 - m/n) var/m) (var the sample variance of the row products)
// InnerProducts.StdErr reports. Deterministic for given options; checks
// ctx between chunks of work.
func FrobeniusInnerProducts(ctx context.Context, ks []KernelMatrix, centred bool, opts InnerOptions) (*InnerProducts, error) {
	n, err := commonDim(ks)
	if err != nil {
		return nil, err
	}
	if opts.SweepMax <= 0 {
		opts.SweepMax = DefaultSweepMax
	}
	if opts.SampleRows <= 0 {
		opts.SampleRows = DefaultSampleRows
	}
	if opts.FactorsFrom <= 0 {
		opts.FactorsFrom = DefaultFactorsFrom
	}
	p := len(ks)
	fs := make([]factored, p)
	all := true
	for t, k := range ks {
		var ok bool
		fs[t], ok = factorOf(k)
		all = all && ok
	}
	if n < opts.FactorsFrom || !all && (n <= opts.SweepMax || opts.SampleRows >= n) {
		g, err := KernelInnerProducts(ctx, ks, centred)
		if err != nil {
			return nil, err
		}
		return &InnerProducts{G: g, Method: MethodRows}, nil
	}
	out := &InnerProducts{G: mat.NewSymDense(p, nil), Method: MethodFactors}
	for s := 0; s < p; s++ {
		for t := s; t < p; t++ {
			if fs[s].ok() && fs[t].ok() {
				v, err := factoredInner(ctx, fs[s], fs[t], ks[s], ks[t])
				if err != nil {
					return nil, err
				}
				out.G.SetSym(s, t, v)
			}
		}
	}
	if !all {
		out.Method = MethodSampled
		if err := out.sampleRows(ctx, ks, fs, opts); err != nil {
			return nil, err
		}
	}
	if centred {
		centreAll(out.G, ks)
	}
	return out, nil
}

// sampleRows estimates the entries of pairs with an unfactored kernel from
// opts.SampleRows rows drawn without replacement.
func (ip *InnerProducts) sampleRows(ctx context.Context, ks []KernelMatrix, fs []factored, opts InnerOptions) error {
	n, p := ks[0].Dim(), len(ks)
	m := opts.SampleRows
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5a3b1e))
	rows := rng.Perm(n)[:m]
	slices.Sort(rows)
	// Per sampled row, the products <K_s(i,:), K_t(i,:)> of the estimated pairs.
	var pairs [][2]int
	for s := 0; s < p; s++ {
		for t := s; t < p; t++ {
			if !fs[s].ok() || !fs[t].ok() {
				pairs = append(pairs, [2]int{s, t})
			}
		}
	}
	need := make([]bool, p)
	for _, pr := range pairs {
		need[pr[0]], need[pr[1]] = true, true
	}
	prod := make([]float64, m*len(pairs))
	err := sweepRows(ctx, m, func() func(int, int, int) {
		buf := make([][]float64, p)
		for t := range buf {
			buf[t] = make([]float64, n)
		}
		return func(_, lo, hi int) {
			for r := lo; r < hi; r++ {
				for t, k := range ks {
					if need[t] {
						k.Row(rows[r], buf[t])
					}
				}
				for q, pr := range pairs {
					prod[r*len(pairs)+q] = dot(buf[pr[0]], buf[pr[1]])
				}
			}
		}
	})
	if err != nil {
		return err
	}
	ip.StdErr, ip.SampledRows = mat.NewSymDense(p, nil), m
	scale := float64(n) / float64(m)
	for q, pr := range pairs {
		sum, sq := 0.0, 0.0
		for r := 0; r < m; r++ {
			v := prod[r*len(pairs)+q]
			sum += v
			sq += v * v
		}
		mean := sum / float64(m)
		variance := math.Max(0, (sq-float64(m)*mean*mean)/float64(max(m-1, 1)))
		ip.G.SetSym(pr[0], pr[1], scale*sum)
		ip.StdErr.SetSym(pr[0], pr[1], float64(n)*math.Sqrt((1-float64(m)/float64(n))*variance/float64(m)))
	}
	return nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// factored is a kernel as D F D: d the diagonal of D (nil: the identity)
// and exactly one of sparse (F = S), gram (F = X X') and low (F = Z Z').
type factored struct {
	d      []float64
	sparse *SparseSym
	gram   *Gram
	low    *LowRank
}

func (f factored) ok() bool { return f.sparse != nil || f.gram != nil || f.low != nil }

// scale returns d_i (1 when D is the identity).
func (f factored) scale(i int) float64 {
	if f.d == nil {
		return 1
	}
	return f.d[i]
}

// factorOf returns k's factored form, if it has one. A ScaledKernel
// (A K B + B K A)/2 without shift is D K D when A = lambda B (or
// B = lambda A), lambda >= 0: D = sqrt(lambda) B.
func factorOf(k KernelMatrix) (factored, bool) {
	switch k := k.(type) {
	case *SparseSym:
		return factored{sparse: k}, true
	case *Gram:
		return factored{gram: k}, true
	case *LowRank:
		return factored{low: k}, true
	case *ScaledKernel:
		if k.shift != 0 {
			return factored{}, false
		}
		d, ok := proportionalScale(k.a, k.b)
		if !ok {
			if d, ok = proportionalScale(k.b, k.a); !ok {
				return factored{}, false
			}
		}
		f, ok := factorOf(k.base)
		if !ok {
			return factored{}, false
		}
		if f.d != nil {
			for i := range d {
				d[i] *= f.d[i]
			}
		}
		f.d = d
		return f, true
	}
	return factored{}, false
}

// proportionalScale returns sqrt(lambda) b when a = lambda b, lambda >= 0.
func proportionalScale(a, b []float64) ([]float64, bool) {
	lambda := math.NaN()
	for i := range a {
		switch {
		case b[i] == 0 && a[i] != 0:
			return nil, false
		case b[i] == 0:
		case math.IsNaN(lambda):
			lambda = a[i] / b[i]
		case a[i] != lambda*b[i]:
			return nil, false
		}
	}
	if math.IsNaN(lambda) {
		lambda = 0
	}
	if lambda < 0 {
		return nil, false
	}
	d := make([]float64, len(b))
	for i := range d {
		d[i] = math.Sqrt(lambda) * b[i]
	}
	return d, true
}

// factoredInner returns <K_s, K_t>_F of two factored kernels (fs and ft,
// whose KernelMatrix forms are ks and kt).
func factoredInner(ctx context.Context, fs, ft factored, ks, kt KernelMatrix) (float64, error) {
	switch {
	case fs.sparse != nil:
		return sparseInner(ctx, fs, kt)
	case ft.sparse != nil:
		return sparseInner(ctx, ft, ks)
	case fs.gram != nil:
		return gramInner(ctx, fs, ft)
	case ft.gram != nil:
		return gramInner(ctx, ft, fs)
	default:
		return lowInner(ctx, fs, ft)
	}
}

// sparseInner returns <D S D, K> = sum over S's non-zeros of
// S_ij d_i d_j K_ij.
func sparseInner(ctx context.Context, f factored, k KernelMatrix) (float64, error) {
	s := f.sparse
	partial := make([]float64, numChunks(s.n))
	err := sweepRows(ctx, s.n, func() func(int, int, int) {
		return func(c, lo, hi int) {
			t := 0.0
			for i := lo; i < hi; i++ {
				cols, vals := s.m.row(i)
				for q, j := range cols {
					t += vals[q] * f.scale(i) * f.scale(int(j)) * k.At(i, int(j))
				}
			}
			partial[c] = t
		}
	})
	return sumInOrder(partial), err
}

// gramInner returns <D X X' D, E F E> = ||X' D E F||_F^2 (F = Y, or the dense
// Z), one row of X' D E F, column a of X against the rows of F, at a time.
func gramInner(ctx context.Context, f, o factored) (float64, error) {
	g := f.gram
	width := 0
	if o.gram != nil {
		width = o.gram.m
	} else {
		width = o.low.Rank()
	}
	partial := make([]float64, numChunks(g.m))
	err := sweepRows(ctx, g.m, func() func(int, int, int) {
		acc := make([]float64, width)
		seen := make([]bool, width)
		var touched []int32
		return func(c, lo, hi int) {
			t := 0.0
			for a := lo; a < hi; a++ {
				users, xs := g.xt.row(a)
				for q, i := range users {
					w := xs[q] * f.scale(int(i)) * o.scale(int(i))
					if o.low != nil {
						for b, z := range o.low.z.RawRowView(int(i)) {
							acc[b] += w * z
						}
						continue
					}
					cols, ys := o.gram.x.row(int(i))
					for r, b := range cols {
						if !seen[b] {
							seen[b] = true
							touched = append(touched, b)
						}
						acc[b] += w * ys[r]
					}
				}
				if o.low != nil {
					for b, v := range acc {
						t += v * v
						acc[b] = 0
					}
					continue
				}
				for _, b := range touched {
					t += acc[b] * acc[b]
					acc[b], seen[b] = 0, false
				}
				touched = touched[:0]
			}
			partial[c] = t
		}
	})
	return sumInOrder(partial), err
}

// lowRowsBlock is the number of rows of two LowRank factors lowInner
// multiplies at a time.
const lowRowsBlock = 2048

// lowInner returns <D Z Z' D, E Y Y' E> = ||Z' D E Y||_F^2, accumulating
// Z' D E Y over blocks of rows (n r r' flops, r r' + block memory).
func lowInner(ctx context.Context, f, o factored) (float64, error) {
	z, y := f.low.z, o.low.z
	n, r := z.Dims()
	_, q := y.Dims()
	sum := mat.NewDense(r, q, nil)
	var part mat.Dense
	for lo := 0; lo < n; lo += lowRowsBlock {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		hi := min(n, lo+lowRowsBlock)
		zb := mat.DenseCopyOf(z.Slice(lo, hi, 0, r))
		for i := lo; i < hi; i++ {
			w := f.scale(i) * o.scale(i)
			row := zb.RawRowView(i - lo)
			for b := range row {
				row[b] *= w
			}
		}
		part.Reset()
		part.Mul(zb.T(), y.Slice(lo, hi, 0, q))
		sum.Add(sum, &part)
	}
	t := 0.0
	for _, v := range sum.RawMatrix().Data {
		t += v * v
	}
	return t, nil
}

func sumInOrder(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}
