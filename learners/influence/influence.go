// Package influence is the unsupervised kernel combination by influence
// determination of Abbasnejad's thesis, ch. 5 (Abbasnejad, Ramachandram &
// Mandava, Neural Comput. & Applic. 2011; spec
// shared/specs/abbasnejad-thesis.md section 3): weights alpha over b
// cosine-normalised base kernels K'_l, learned without labels.
//
//  1. Influence: a random walk on the complete graph with weights
//     w_ij = ||x_i - x_j|| has the stationary distribution u = d / sum d,
//     d_i = sum_j w_ij (eq. 5.3-5.8); mu = 1 - u (eq. 5.9).
//  2. Per kernel, s_l = mu' B_l 1 with (B_l)_ij = K'_ii + K'_jj - 2 K'_ij the
//     squared feature-space distances (eq. 5.25-5.27).
//  3. min alpha's over {1'alpha = 1} and either alpha >= 0 (convex, the LP
//     5.29: its optimum is the vertex e_l of least s_l, so it selects one
//     kernel; tied kernels share the weight equally) or sum alpha_l K'_l PSD
//     (affine, the SDP 5.28; alpha may be negative).
//
// The affine SDP is solved by Kelley's cutting planes with an eigenvalue
// oracle (spec 3.6): each round an LP (gonum's simplex) over
// |alpha_l| <= 1000 and the cuts v'K(alpha)v >= 0 so far, then the smallest
// eigenpair (lambda, v) of K(alpha); it stops when lambda >= -1e-9 n, then
// bisects towards the best vertex (PSD) to the first point with
// lambda_min >= -1e-12. Without the PSD constraint the problem is unbounded, so
// the optimum lies on the PSD boundary: the learned Gram matrix is singular.
//
// Deviation: without features (kernels alone, as the recommenders give) the
// influence is uniform, mu_i = 1 - 1/n; the spec (3.9) shows the random
// walk moves mu by about 1% or less in any case.
//
// The learner "influence-mkl" (KindWeights; needs kernels, uses features)
// outputs Weights = alpha (over the normalised kernels) and Kernel =
// sum alpha_l K'_l (unit diagonal); Stats.Objective = alpha's, Iterations =
// cutting-plane rounds (0 for convex). The weights are those of the
// normalised kernels: a caller that combines the kernels as it holds them
// (the recommender's kernelmath.NewKernelSum) gets the learned kernel when
// they have unit diagonals (social's cosine mode), a rescaled one otherwise.
package influence

import (
	"context"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// Name is the registry name of the learner.
const Name = "influence-mkl"

const needs = learners.NeedKernels

// The affine solver's settings (spec 3.6).
const (
	bound     = 1e3 // |alpha_l| <= bound keeps the first LPs bounded
	maxRounds = 500
	// psdSlack is the rounding allowed below 0 in lambda_min of the polished
	// kernel (its diagonal is 1): a PSD vertex of low rank has
	// lambda_min ~ -1e-16 in floating point.
	psdSlack = 1e-12
)

func init() {
	learners.Register(learners.Spec{
		Name: Name,
		Kind: learners.KindWeights,
		Doc: "Unsupervised kernel combination by influence determination (Abbasnejad 2010, ch. 5): weights over the " +
			"cosine-normalised base kernels minimising the influence-weighted sum of squared feature-space distances, " +
			"convex (an LP: selects one kernel) or affine (an SDP on the PSD boundary; weights may be negative). " +
			"Needs kernels; the influence comes from the features when given (else uniform).",
		Needs: needs,
		Params: []learners.Param{
			learners.Enum("mode", "convex", []string{"convex", "affine"}, "convex (alpha on the simplex, LP 5.29) or affine (sum alpha = 1, PSD, SDP 5.28)"),
			learners.Bool("squared", false, "squared input-space distances for the random walk (the thesis: plain Euclidean)"),
		},
		New: func(v learners.Values) (learners.Learner, error) {
			return Learner{Affine: v.String("mode") == "affine", Squared: v.Bool("squared")}, nil
		},
	})
}

// Learner is the registered learner.
type Learner struct {
	Affine  bool // SDP 5.28 (else LP 5.29)
	Squared bool // squared distances in the random walk
}

var _ learners.Learner = (*Learner)(nil)

// Fit learns the weights.
func (l Learner) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	mu := Influence(in.Features, in.N(), l.Squared)
	p := NewProblem(in.Kernels, mu)
	var sol Solution
	if l.Affine {
		var err error
		if sol, err = p.Affine(ctx); err != nil {
			return nil, err
		}
	} else {
		sol = p.Convex()
	}
	return &learners.Output{Kernel: p.Combine(sol.Alpha), Weights: sol.Alpha,
		Stats: learners.Stats{Objective: sol.Objective, Iterations: sol.Rounds, Converged: true}}, nil
}

// Influence returns mu = 1 - u, u the stationary distribution of the random
// walk with w_ij = ||x_i - x_j|| (squared with squared); uniform (1 - 1/n)
// without features or when every distance is 0.
func Influence(x *mat.Dense, n int, squared bool) []float64 {
	mu := make([]float64, n)
	d := make([]float64, n)
	if x != nil {
		sq := kernelmath.SqDistances(x)
		for i := range n {
			for j := range n {
				w := sq.At(i, j)
				if !squared {
					w = math.Sqrt(w)
				}
				d[i] += w
			}
		}
	}
	total := floats.Sum(d)
	for i := range mu {
		if total > 0 {
			mu[i] = 1 - d[i]/total
		} else {
			mu[i] = 1 - 1/float64(n)
		}
	}
	return mu
}

// Problem is the influence-weighted objective over normalised kernels.
type Problem struct {
	Kernels []*mat.SymDense // K'_l, cosine-normalised
	S       []float64       // s_l = mu' B_l 1
}

// NewProblem normalises the kernels (kernelmath.NormalizeCosine) and computes s.
func NewProblem(kernels []*mat.SymDense, mu []float64) *Problem {
	p := &Problem{}
	for _, k := range kernels {
		kn := kernelmath.NormalizeCosine(k)
		n := kn.SymmetricDim()
		s := 0.0
		for i := range n {
			row := 0.0
			for j := range n {
				row += kn.At(i, i) + kn.At(j, j) - 2*kn.At(i, j)
			}
			s += mu[i] * row
		}
		p.Kernels, p.S = append(p.Kernels, kn), append(p.S, s)
	}
	return p
}

// Solution is a weight vector with its objective alpha's and the
// cutting-plane rounds it took.
type Solution struct {
	Alpha     []float64
	Objective float64
	Rounds    int
}

// Convex solves the LP 5.29 in closed form: the vertex of least s (spec
// 3.6), shared equally among kernels within 1e-12 relative of it.
func (p *Problem) Convex() Solution {
	lo := floats.Min(p.S)
	alpha := make([]float64, len(p.S))
	tied := 0.0
	for l, s := range p.S {
		if s-lo <= 1e-12*math.Max(1, math.Abs(lo)) {
			alpha[l] = 1
			tied++
		}
	}
	floats.Scale(1/tied, alpha)
	return Solution{Alpha: alpha, Objective: floats.Dot(alpha, p.S)}
}

// Combine returns sum alpha_l K'_l.
func (p *Problem) Combine(alpha []float64) *mat.SymDense {
	n := p.Kernels[0].SymmetricDim()
	out := mat.NewSymDense(n, nil)
	var term mat.SymDense
	for l, k := range p.Kernels {
		if alpha[l] != 0 {
			term.ScaleSym(alpha[l], k)
			out.AddSym(out, &term)
		}
	}
	return out
}

// minEigen returns the smallest eigenpair of K(alpha).
func (p *Problem) minEigen(alpha []float64) (float64, []float64, error) {
	vals, vecs, err := kernelmath.Eigen(p.Combine(alpha))
	if err != nil {
		return 0, nil, err
	}
	return vals[0], mat.Col(nil, 0, vecs), nil
}

// Affine solves the SDP 5.28 by cutting planes and a feasibility polish.
func (p *Problem) Affine(ctx context.Context) (Solution, error) {
	b := len(p.S)
	n := p.Kernels[0].SymmetricDim()
	tol := 1e-9 * float64(n)
	// Rows of G alpha <= h: the box, then the cuts.
	var g [][]float64
	var h []float64
	for l := range b {
		up, down := make([]float64, b), make([]float64, b)
		up[l], down[l] = 1, -1
		g, h = append(g, up, down), append(h, bound, bound)
	}
	ones := mat.NewDense(1, b, nil)
	for l := range b {
		ones.Set(0, l, 1)
	}
	var alpha []float64
	rounds := 0
	for ; rounds < maxRounds; rounds++ {
		if err := ctx.Err(); err != nil {
			return Solution{}, err
		}
		gm := mat.NewDense(len(g), b, nil)
		for r, row := range g {
			gm.SetRow(r, row)
		}
		c, a, rhs := lp.Convert(p.S, gm, h, ones, []float64{1})
		_, x, err := lp.Simplex(c, a, rhs, 1e-10, nil)
		if err != nil {
			return Solution{}, fmt.Errorf("influence: cutting-plane LP: %w", err)
		}
		alpha = make([]float64, b)
		for l := range b {
			alpha[l] = x[l] - x[b+l]
		}
		lam, v, err := p.minEigen(alpha)
		if err != nil {
			return Solution{}, err
		}
		if lam >= -tol {
			break
		}
		// The cut v'K(alpha)v >= 0, i.e. -sum_l alpha_l v'K'_l v <= 0.
		cut := make([]float64, b)
		for l, k := range p.Kernels {
			cut[l] = -mat.Inner(mat.NewVecDense(n, v), k, mat.NewVecDense(n, v))
		}
		g, h = append(g, cut), append(h, 0)
	}
	alpha, err := p.polish(ctx, alpha)
	if err != nil {
		return Solution{}, err
	}
	return Solution{Alpha: alpha, Objective: floats.Dot(alpha, p.S), Rounds: rounds}, nil
}

// polish moves alpha towards the best vertex (a PSD kernel) to the first
// point, by bisection on theta in [0, 1], where K is PSD (lambda_min >= 0).
func (p *Problem) polish(ctx context.Context, alpha []float64) ([]float64, error) {
	vertex := p.Convex().Alpha
	at := func(theta float64) []float64 {
		out := make([]float64, len(alpha))
		for l := range out {
			out[l] = alpha[l] + theta*(vertex[l]-alpha[l])
		}
		return out
	}
	psd := func(theta float64) (bool, error) {
		lam, _, err := p.minEigen(at(theta))
		return lam >= -psdSlack, err
	}
	if ok, err := psd(0); ok || err != nil {
		return alpha, err
	}
	lo, hi := 0.0, 1.0 // lo infeasible, hi feasible
	for hi-lo > 1e-12 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mid := (lo + hi) / 2
		ok, err := psd(mid)
		if err != nil {
			return nil, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return at(hi), nil
}
