// Package alignf is kernel target alignment with non-negative weights
// ("alignf", Cortes, Mohri & Rostamizadeh, "Two-stage learning kernel
// algorithms", ICML 2010; Zhuang's thesis section 7.3, Theorem 7.35; spec
// B.2): the combination K = sum_k theta_k K_k of p base kernels whose
// centred alignment with a target Y,
//
//	rho(K, Y) = <Kc, Yc>_F / (||Kc||_F ||Yc||_F),   Kc = H K H, H = I - 11'/n,
//
// is the largest over theta >= 0. With a_k = <Kc_k, Yc>_F and
// M_kl = <Kc_k, Kc_l>_F, the maximiser is theta* / ||theta*||_2 where
//
//	theta* = argmin_{theta >= 0} theta' M theta - 2 theta' a.
//
// That non-negative QP is solved exactly by kernelmath.NonNegQP (an active-set
// method, in the equivalent form 1/2 theta'M theta - a'theta), never as the
// unconstrained M^-1 a, which gives negative weights whenever a kernel is
// redundant given the others. M and a come from
// kernelmath.FrobeniusInnerProducts: from kernelmath.DefaultFactorsFrom
// points on, exactly from the kernels' factored forms when every kernel and
// the target has one (sparse, Gram X X', low-rank Z Z', scaled by a
// constant or a cosine normalisation: the social kernels and the friendship
// target), in time near-linear in the non-zeros of the factors; otherwise,
// and below that size, from one parallel sweep over every row of every
// kernel up to kernelmath.DefaultSweepMax points (O(n^2 p^2)), and
// above it with the pairs of the unfactored kernels estimated from
// kernelmath.DefaultSampleRows sampled rows, whose standard errors
// Result.StdErr reports. No kernel is ever formed.
//
// The alignment reached, rho(sum_k theta_k K_k, Y), follows from M, a and
// ||Yc||_F^2 alone: theta'a / sqrt(theta'M theta ||Yc||^2).
//
// The learner "alignf" (KindWeights; Needs kernels and a target; accepts
// implicit kernels) outputs:
//   - Weights: theta (non-negative, unit Euclidean norm, zeros exactly 0);
//   - Kernel: sum_k theta_k K_k of the base kernels as given (not centred:
//     centring is how alignment is measured, not part of the combination),
//     formed densely when the kernels were given dense or n <= DenseOutputMax;
//     for larger implicit inputs it is nil, and the caller combines the
//     kernels it holds with kernelmath.NewKernelSum(out.Weights, in.BaseKernels()),
//     which never forms the n x n matrix;
//   - Stats: Objective = the alignment reached (in [-1, 1]; not a loss),
//     Iterations = the QP's, Converged = the QP's KKT certificate held, and
//     Gap = the QP's duality gap relative to its objective.
//
// Solve exposes the same computation with everything a caller may report
// (M, a, per-kernel alignments, the QP certificate), for kernels that are
// not wrapped in a learners.Input.
//
// Errors wrapping learners.ErrInput: no kernels, sizes that differ,
// non-finite entries, a target whose centred form is zero, and a target no
// base kernel is positively aligned with (all a_k <= 0: then theta* = 0 and
// no non-negative combination has a positive alignment; the theorem assumes
// otherwise). The fit has no parameters; the row sample (only above
// DefaultSweepMax points with an unfactored kernel) has a fixed seed, so the
// fit is deterministic. It checks ctx between chunks of work.
package alignf

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// Name is the registry name of this learner.
const Name = "alignf"

// DenseOutputMax is the largest n for which Output.Kernel is formed from
// implicit kernels. Dense inputs always get it.
const DenseOutputMax = learners.DenseOutputMax

const needs = learners.NeedKernels | learners.NeedTarget | learners.AcceptImplicit

func init() {
	learners.Register(learners.Spec{
		Name: Name,
		Kind: learners.KindWeights,
		Doc: "Kernel target alignment (Cortes, Mohri & Rostamizadeh 2010, alignf): non-negative weights, " +
			"unit norm, maximising the centred alignment of the combined kernel with the target, by an exact " +
			"non-negative QP. Stats.Objective is the alignment reached. Needs kernels and a target; accepts " +
			"implicit kernels (Output.Kernel is then formed only up to 2000 points).",
		Needs: needs,
		New:   func(learners.Values) (learners.Learner, error) { return Learner{}, nil },
	})
}

// Learner is the alignf learner; build it with learners.New(Name, nil).
type Learner struct{}

var _ learners.Learner = (*Learner)(nil)

// Fit learns the weights of in's base kernels for in's target.
func (Learner) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	kernels := in.BaseKernels()
	res, err := Solve(ctx, kernels, in.TargetKernel())
	if res == nil {
		return nil, err
	}
	out := &learners.Output{
		Weights: res.Weights,
		Stats: learners.Stats{
			Iterations: res.QP.Iterations,
			Objective:  res.Alignment,
			Converged:  err == nil,
			Gap:        res.QP.Gap / math.Max(math.Abs(res.QP.Objective), math.SmallestNonzeroFloat64),
		},
	}
	k, kerr := learners.CombinedOutput(in, res.Weights)
	if kerr != nil {
		return nil, kerr
	}
	out.Kernel = k
	return out, err
}

// Result is a solved alignment problem.
type Result struct {
	// Weights is theta* / ||theta*||_2: non-negative, unit norm.
	Weights []float64
	// Alignment is the centred alignment of sum_k Weights_k K_k with the target.
	Alignment float64
	// KernelAlignments holds the centred alignment of each base kernel alone
	// with the target (0 for a kernel whose centred form is 0).
	KernelAlignments []float64
	// M (p x p) and A (p) are the centred inner products <Kc_k, Kc_l>_F and
	// <Kc_k, Yc>_F; TargetNorm2 is ||Yc||_F^2.
	M           *mat.SymDense
	A           []float64
	TargetNorm2 float64
	// Method says how M and A were found (kernelmath.MethodFactors,
	// MethodRows or MethodSampled); StdErr, when not nil, holds the
	// standard errors of the estimated inner products, in the order of
	// the kernels and then the target.
	Method string
	StdErr *mat.SymDense
	// QP is the certificate of the solve of 1/2 theta'M theta - a'theta
	// over theta >= 0, at theta* (before normalisation).
	QP kernelmath.QPResult
}

// Solve computes the alignf weights of kernels for target. An error wraps
// learners.ErrInput (bad input, see the package doc), ctx's error, or
// learners.ErrNotConverged together with kernelmath.ErrQPNotConverged (the QP
// stopped above its tolerance: the Result of its last iterate is returned
// with the error).
func Solve(ctx context.Context, kernels []kernelmath.KernelMatrix, target kernelmath.KernelMatrix) (*Result, error) {
	if len(kernels) == 0 {
		return nil, fmt.Errorf("%w: alignf: no base kernels", learners.ErrInput)
	}
	if target == nil {
		return nil, fmt.Errorf("%w: alignf: no target kernel", learners.ErrInput)
	}
	n := target.Dim()
	for k, km := range kernels {
		if km == nil {
			return nil, fmt.Errorf("%w: alignf: base kernel %d is missing", learners.ErrInput, k)
		}
		if km.Dim() != n {
			return nil, fmt.Errorf("%w: alignf: base kernel %d is %d x %d, the target %d x %d", learners.ErrInput, k, km.Dim(), km.Dim(), n, n)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := len(kernels)
	all := append(append(make([]kernelmath.KernelMatrix, 0, p+1), kernels...), target)
	ip, err := kernelmath.FrobeniusInnerProducts(ctx, all, true, kernelmath.InnerOptions{})
	if err != nil {
		return nil, err
	}
	g := ip.G
	res := &Result{M: mat.NewSymDense(p, nil), A: make([]float64, p), TargetNorm2: g.At(p, p), Method: ip.Method, StdErr: ip.StdErr}
	for k := 0; k < p; k++ {
		for l := k; l < p; l++ {
			res.M.SetSym(k, l, g.At(k, l))
		}
		res.A[k] = g.At(k, p)
	}
	for k := 0; k <= p; k++ {
		if v := g.At(k, k); math.IsNaN(v) || math.IsInf(v, 0) {
			what := fmt.Sprintf("base kernel %d", k)
			if k == p {
				what = "the target"
			}
			return nil, fmt.Errorf("%w: alignf: %s has non-finite entries", learners.ErrInput, what)
		}
	}
	if !(res.TargetNorm2 > 0) {
		return nil, fmt.Errorf("%w: alignf: the centred target is zero (a constant target has no alignment)", learners.ErrInput)
	}
	res.KernelAlignments = make([]float64, p)
	positive := false
	for k, ak := range res.A {
		if mk := res.M.At(k, k); mk > 0 {
			res.KernelAlignments[k] = ak / math.Sqrt(mk*res.TargetNorm2)
		}
		positive = positive || ak > 0
	}
	if !positive {
		return nil, fmt.Errorf("%w: alignf: no base kernel is positively aligned with the target (every centred <K_k, Y> <= 0), so no non-negative combination is", learners.ErrInput)
	}
	c := make([]float64, p)
	for k, ak := range res.A {
		c[k] = -ak
	}
	theta, qp, qerr := kernelmath.NonNegQP(res.M, c, kernelmath.QPOptions{})
	res.QP = qp
	if qerr != nil && !errors.Is(qerr, kernelmath.ErrQPNotConverged) {
		return nil, fmt.Errorf("alignf: %w", qerr)
	}
	norm := mat.Norm(mat.NewVecDense(p, theta), 2)
	if !(norm > 0) {
		// Unreachable with a_k > 0 for some k unless the QP failed.
		return nil, fmt.Errorf("alignf: the QP returned theta = 0 (%v)", qerr)
	}
	res.Weights = make([]float64, p)
	for k, v := range theta {
		res.Weights[k] = v / norm
	}
	res.Alignment = Alignment(res.M, res.A, res.TargetNorm2, res.Weights)
	if qerr != nil {
		return res, fmt.Errorf("alignf: %w: %w", learners.ErrNotConverged, qerr)
	}
	return res, nil
}

// Alignment returns the centred alignment of sum_k w_k K_k with the target
// from the inner products of Result: w'a / sqrt(w'M w ||Yc||^2), 0 when the
// combination's centred form is zero. It scores any weights, e.g. a uniform
// baseline, without another pass over the kernels.
func Alignment(m *mat.SymDense, a []float64, targetNorm2 float64, w []float64) float64 {
	wv := mat.NewVecDense(len(w), w)
	kk := mat.Inner(wv, m, wv)
	if !(kk > 0) || !(targetNorm2 > 0) {
		return 0
	}
	return mat.Dot(wv, mat.NewVecDense(len(a), a)) / math.Sqrt(kk*targetNorm2)
}
