package pfskl

import (
	"context"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// Spectrum is what every PF-SKL fit on the same points shares (spec A.2,
// A.5): the kNN graph and the full eigendecomposition of its normalised
// Laplacian. It does not depend on the labels, so one Spectrum serves every
// split, fold and grid point.
type Spectrum struct {
	U      *mat.Dense // n x n eigenvectors as columns, ascending eigenvalue
	Gamma  []float64  // eigenvalues of L, clipped at 0 (the first len(Components) exactly 0)
	B      []float64  // b_i = Gamma_i^p + eps
	Sigma2 float64    // the mean squared edge length sigma_g^2
	Edges  int        // undirected edges
	// Components are the graph's connected components (each sorted). With
	// more than one, eigenvalue 0 is repeated and its eigenvectors are the
	// exact D^1/2 1_comp / ||.||, one per component.
	Components [][]int
}

// NewSpectrum builds the graph of spec A.2 on the rows of x (k nearest
// neighbours, self excluded, ties to the lower index, OR-symmetrised;
// weights exp(-||xi - xj||^2 / (2 sigma_g^2)), sigma_g^2 the mean squared
// edge length) and factorises L = I - D^-1/2 S D^-1/2. O(n^2 d + n^3).
func NewSpectrum(ctx context.Context, x *mat.Dense, gp GraphParams) (*Spectrum, error) {
	n, _ := x.Dims()
	if n < 2 {
		return nil, fmt.Errorf("%w: pfskl: %d point(s): the graph needs at least 2", learners.ErrInput, n)
	}
	if gp.K < 1 || gp.P < 1 || !(gp.Eps > 0) || math.IsInf(gp.Eps, 0) {
		return nil, fmt.Errorf("%w: pfskl: want k >= 1, p >= 1, eps > 0; got %d, %d, %v", learners.ErrInput, gp.K, gp.P, gp.Eps)
	}
	d2 := kernelmath.SqDistances(x)
	pairs := kernelmath.KNNPairs(d2, gp.K, false)
	sum := 0.0
	for _, p := range pairs {
		sum += d2.At(p.I, p.J)
	}
	sigma2 := sum / float64(len(pairs))
	if sigma2 == 0 { // every neighbour a duplicate: all weights 1
		sigma2 = 1
	}
	g := kernelmath.NewGraph(n, pairs, func(p learners.Pair) float64 { return math.Exp(-d2.At(p.I, p.J) / (2 * sigma2)) })
	deg := g.Degrees()
	inv := make([]float64, n)
	for i, d := range deg {
		if d > 0 {
			inv[i] = 1 / math.Sqrt(d)
		}
	}
	l := mat.NewSymDense(n, nil)
	for i, es := range g.Adj {
		l.SetSym(i, i, 1)
		for _, e := range es {
			if i < e.To {
				l.SetSym(i, e.To, -inv[i]*e.W*inv[e.To])
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	vals, vecs, err := kernelmath.Eigen(l)
	if err != nil {
		return nil, fmt.Errorf("pfskl: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	comps := g.Components()
	// The null space: any rotation of it is as valid and changes A_ii, so
	// write the exact basis, one vector per component (spec A.8 pitfall 1).
	for c, comp := range comps {
		col := make([]float64, n)
		norm := 0.0
		for _, i := range comp {
			col[i] = math.Sqrt(deg[i])
			norm += deg[i]
		}
		if norm == 0 { // a point whose edge weights all underflowed to 0
			col[comp[0]], norm = 1, 1
		}
		for _, i := range comp {
			col[i] /= math.Sqrt(norm)
		}
		vecs.SetCol(c, col)
		vals[c] = 0
	}
	sp := &Spectrum{U: vecs, Gamma: make([]float64, n), B: make([]float64, n), Sigma2: sigma2, Edges: len(pairs), Components: comps}
	for i, v := range vals {
		sp.Gamma[i] = math.Max(v, 0)
		sp.B[i] = math.Pow(sp.Gamma[i], float64(gp.P)) + gp.Eps
	}
	return sp, nil
}

// kta is SKL_KTA's closed form at one C (spec A.6, A.7).
type kta struct {
	w                  []float64 // sqrt(A_ii / (2 b_i))
	xbar, ybar, zhat   float64
	uhat               float64
	scale, sStar, mu   float64
	kta                float64 // alignment of the unclipped kernel at |s*|
	n, c, targetNormSq float64
}

// alignment computes w, the sums of Proposition 3, s* = mu*^-1/2 (with its
// sign), mu* of eq. (10) and Proposition 4's c, at trade-off c.
func (sp *Spectrum) alignment(a []float64, c float64, targetNormSq float64) kta {
	n := len(a)
	k := kta{w: make([]float64, n), n: float64(n), c: c, targetNormSq: targetNormSq}
	for i, aii := range a {
		k.w[i] = math.Sqrt(aii / (2 * sp.B[i]))
		k.xbar += aii * k.w[i]
		k.ybar += k.w[i] * k.w[i]
		k.zhat += k.w[i]
		k.uhat += aii
	}
	ratio := (k.zhat*k.uhat - k.n*k.xbar) / (k.ybar*k.uhat - k.zhat*k.xbar)
	k.sStar = ratio / c
	k.mu = 1 / (k.sStar * k.sStar)
	k.scale = math.Abs(ratio)
	if k.scale == 0 || math.IsNaN(k.scale) || math.IsInf(k.scale, 0) {
		// A vanishing numerator or denominator: c cancels from the
		// decision values, so any positive value gives the same ones.
		k.scale, k.mu = 1, math.NaN()
	}
	k.kta = k.alignmentAt(math.Abs(k.sStar))
	return k
}

// alignmentAt is the alignment of the unclipped K(s) = U diag(s w - 1/C) U'
// with Y Y': (s xbar - ubar) / sqrt((s^2 ybar - 2 s zbar + n/C^2) ||YY'||^2).
func (k kta) alignmentAt(s float64) float64 {
	num := s*k.xbar - k.uhat/k.c
	den := s*s*k.ybar - 2*s*k.zhat/k.c + k.n/(k.c*k.c)
	return num / math.Sqrt(den*k.targetNormSq)
}
