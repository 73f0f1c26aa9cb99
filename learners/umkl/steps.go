package umkl

import (
	"fmt"
	"math"
	"slices"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// problem holds what every step reads: P = X X' and the squared distances
// M (both full n x n, row-major), the base kernels (upper triangles, read
// in place) and their scale factors (1/trace or 1).
type problem struct {
	n, m, b     int // points, kernels, basis size
	p, dist     []float64
	kern        []blas64.Symmetric
	scale       []float64
	gamma       float64
	excludeSelf bool
	kb, gt      *mat.Dense // m x (n B) workspaces of gather and quadratic
}

func newProblem(in *learners.Input, cfg config) (*problem, error) {
	n := in.N()
	b := min(cfg.basis, n)
	if cfg.excludeSelf {
		b = min(cfg.basis, n-1)
	}
	if b < 1 {
		return nil, fmt.Errorf("%w: umkl: no basis candidates for %d point(s) with exclude_self", learners.ErrInput, n)
	}
	pr := &problem{n: n, m: len(in.Kernels), b: b, gamma: cfg.gamma, excludeSelf: cfg.excludeSelf,
		p: make([]float64, n*n), dist: make([]float64, n*n), scale: make([]float64, len(in.Kernels)),
		kb: mat.NewDense(len(in.Kernels), n*b, nil), gt: mat.NewDense(len(in.Kernels), n*b, nil)}
	gram := kernelmath.Linear(in.Features)
	for i := range n {
		for j := range n {
			pr.p[i*n+j] = gram.At(i, j)
		}
	}
	for i := range n {
		for j := range n {
			pr.dist[i*n+j] = max(0, pr.p[i*n+i]+pr.p[j*n+j]-2*pr.p[i*n+j])
		}
	}
	for t, k := range in.Kernels {
		pr.kern = append(pr.kern, k.RawSymmetric())
		pr.scale[t] = 1
		if cfg.normalize {
			tr := 0.0
			for i := range n {
				tr += k.At(i, i)
			}
			switch {
			case tr > 0:
				pr.scale[t] = 1 / tr
			case tr == 0 && slices.Max(pr.kern[t].Data) == 0 && slices.Min(pr.kern[t].Data) == 0:
				// The zero kernel (e.g. a tag kernel over identical
				// tags): nothing to normalise, and it adds nothing.
			default:
				return nil, fmt.Errorf("%w: umkl: base kernel %d has trace %g: it cannot be normalised", learners.ErrInput, t, tr)
			}
		}
	}
	return pr, nil
}

// base returns entry (i, j) of normalised base kernel t.
func (pr *problem) base(t, i, j int) float64 {
	if i > j {
		i, j = j, i
	}
	k := pr.kern[t]
	return pr.scale[t] * k.Data[i*k.Stride+j]
}

// combine sets dst (n x n, full) to sum_t mu_t K_t, skipping zero weights.
func (pr *problem) combine(mu, dst []float64) {
	n := pr.n
	clear(dst)
	for t, w := range mu {
		if w == 0 {
			continue
		}
		k := pr.kern[t]
		for i := range n {
			floats.AddScaled(dst[i*n+i:i*n+n], w*pr.scale[t], k.Data[i*k.Stride+i:i*k.Stride+n])
		}
	}
	for i := range n {
		for j := range i {
			dst[i*n+j] = dst[j*n+i]
		}
	}
}

// dstep returns the greedy basis of every point, in selection order, for
// the combined kernel k (n x n, full). For point i, with kappa = K[i,:],
// adding j to the basis raises J(d) = d'Qd + c'd by
// g_j = Q_jj + c_j + 2 sum_{l in B_i} Q_lj, Q_lj = kappa_l kappa_j P_lj,
// c_j = kappa_j (2 gamma M_ij - 2 P_ij); the least g_j is taken (lowest j
// on ties) and g is updated by 2 Q_{j* j}.
func (pr *problem) dstep(k []float64) [][]int {
	n := pr.n
	flat := make([]int, n*pr.b)
	sets := make([][]int, n)
	g := make([]float64, n)
	taken := make([]bool, n)
	for i := range n {
		kr, prow, mrow := k[i*n:i*n+n], pr.p[i*n:i*n+n], pr.dist[i*n:i*n+n]
		for j := range n {
			g[j] = kr[j]*kr[j]*pr.p[j*n+j] + kr[j]*(2*pr.gamma*mrow[j]-2*prow[j])
			taken[j] = false
		}
		taken[i] = pr.excludeSelf
		set := flat[i*pr.b : i*pr.b : (i+1)*pr.b]
		for range pr.b {
			best := -1
			for j, gj := range g {
				if !taken[j] && (best < 0 || gj < g[best]) {
					best = j
				}
			}
			taken[best] = true
			set = append(set, best)
			kb, pb := 2*kr[best], pr.p[best*n:best*n+n]
			for j := range g {
				g[j] += kb * kr[j] * pb[j]
			}
		}
		sets[i] = set
	}
	return sets
}

// gather returns the m x (n B) matrix kb with kb[t, i B + a] =
// K_t[i, B_i(a)]: all the base-kernel values the mu-step and the
// objective need, kernel by kernel. It is the problem's workspace, valid
// until the next call.
func (pr *problem) gather(sets [][]int) *mat.Dense {
	kb := pr.kb
	for t := range pr.m {
		row := kb.RawRowView(t)
		for i, set := range sets {
			for a, j := range set {
				row[i*pr.b+a] = pr.base(t, i, j)
			}
		}
	}
	return kb
}

// objective returns Obj(mu, D) = 1/2 sum_i |x_i - sum_{j in B_i} K_ij x_j|^2
// + gamma sum_i sum_{j in B_i} K_ij M_ij, the reconstruction expanded
// through P: P_ii - 2 sum_j K_ij P_ij + sum_{j,l} K_ij K_il P_jl.
func (pr *problem) objective(mu []float64, sets [][]int, kb *mat.Dense) float64 {
	var kv mat.VecDense
	kv.MulVec(kb.T(), mat.NewVecDense(pr.m, mu))
	k := kv.RawVector().Data
	n := pr.n
	obj := 0.0
	for i, set := range sets {
		ki := k[i*pr.b : (i+1)*pr.b]
		rec, dist := pr.p[i*n+i], 0.0
		for a, j := range set {
			rec -= 2 * ki[a] * pr.p[i*n+j]
			dist += ki[a] * pr.dist[i*n+j]
			for c, l := range set {
				rec += ki[a] * ki[c] * pr.p[j*n+l]
			}
		}
		obj += 0.5*rec + pr.gamma*dist
	}
	return obj
}

// quadratic returns W and z of the mu-step, J(mu) = mu'W mu + z'mu:
// z = kb v with v_(i,a) = 2 gamma M_ij - 2 P_ij (j = B_i(a)), and
// W = sum_i kb_i P[B_i, B_i] kb_i' = G'G, G stacking R_i kb_i' for a factor
// R_i'R_i = P[B_i, B_i] (the eigenvalues above 1e-13 of the largest, so
// R_i has at most min(B, d) rows).
func (pr *problem) quadratic(sets [][]int, kb *mat.Dense) (*mat.SymDense, []float64, error) {
	n, b, m := pr.n, pr.b, pr.m
	v := mat.NewVecDense(n*b, nil)
	for i, set := range sets {
		for a, j := range set {
			v.SetVec(i*b+a, 2*pr.gamma*pr.dist[i*n+j]-2*pr.p[i*n+j])
		}
	}
	var zv mat.VecDense
	zv.MulVec(kb, v)

	gt := pr.gt // G', filled block by block
	rows := 0
	pbb := mat.NewSymDense(b, nil)
	var eig mat.EigenSym
	var vecs mat.Dense
	r := mat.NewDense(b, b, nil)
	for i, set := range sets {
		for a, j := range set {
			for c := a; c < b; c++ {
				pbb.SetSym(a, c, pr.p[j*n+set[c]])
			}
		}
		if !eig.Factorize(pbb, true) {
			return nil, nil, fmt.Errorf("umkl: P[B_%d, B_%d]: %w", i, i, kernelmath.ErrEigen)
		}
		vals := eig.RawValues()
		vecs.Reset()
		eig.VectorsTo(&vecs)
		rank := 0
		for l := b - 1; l >= 0 && vals[l] > 1e-13*vals[b-1]; l-- {
			s := math.Sqrt(vals[l])
			for a := range b {
				r.Set(rank, a, s*vecs.At(a, l))
			}
			rank++
		}
		if rank == 0 {
			continue
		}
		dst := gt.Slice(0, m, rows, rows+rank).(*mat.Dense)
		dst.Mul(kb.Slice(0, m, i*b, (i+1)*b), r.Slice(0, rank, 0, b).T())
		rows += rank
	}
	w := mat.NewSymDense(m, nil)
	if rows > 0 {
		w.SymOuterK(1, gt.Slice(0, m, 0, rows))
	}
	return w, zv.RawVector().Data, nil
}
