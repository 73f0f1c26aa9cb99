// Package twolayer is two-layer multiple kernel learning (Zhuang, Tsang &
// Hoi, "Two-Layer Multiple Kernel Learning", AISTATS 2011; Zhuang's thesis
// ch. 4; spec §4.2-4.3): the kernel is an RBF-type function of a weighted
// sum of base kernels,
//
//	k2(x, x'; mu) = exp( sum_t mu_t k_t(x, x') ),  mu >= 0   (thesis eq. 4.2),
//
// learned with the SVM by
//
//	min_{mu >= 0} F(mu),  F(mu) = max_a 1'a - 1/2 (a o y)' K2(mu) (a o y) + sum_t mu_t,
//	0 <= a <= C, y'a = 0                                                  (eq. 4.3),
//
// F being the negative of the thesis' J*(mu) = min_a J(a, mu), which its
// Protocol 2 ascends. Two learners:
//
//   - "twolayer" (2LMKL, algorithm B1, Protocol 2): projected gradient on mu
//     from a random mu^0 ~ U(0,1)^m (seeded), the SVM (kernelmath.TrainSVM)
//     solved at every trial point, the gradient (eq. 4.5)
//     dJ/dmu_t = 1/2 (a o y)'(K2 o K_t)(a o y) - 1 = -dF/dmu_t, the step by
//     Armijo backtracking on F.
//   - "twolayer-inf" (2LMKL^Inf, algorithm B2, Protocol 3): B1 on the given
//     kernels, then column generation in the antecedent layer: a Gaussian
//     exp(-theta |x - x'|^2) with theta maximising the pricing objective at
//     the current SVM duals is added with weight 0 and B1 resumes, until
//     the stopping test says no Gaussian helps. It needs Features too. The
//     thesis starts it from the 13 kernels on all features (the Gaussians
//     and polynomials of kernelmath.MKLBaseKernels before the per-feature
//     ones): pass those as Kernels to reproduce Table 4.2.
//
// Inputs: Kernels (the antecedent-layer kernels; by default divided by their
// traces over the labelled points, the thesis' unit-trace normalisation, a
// no-op on kernels already normalised on the training data) and Labels
// (class indices; Unlabeled points are left out of training but get rows in
// Kernel, so that a caller can predict them). Two classes give one binary
// SVM, class 1 (+1) against class 0 (-1), as in the thesis; more classes
// give one SVM per class against the rest with F summed over them and mu
// shared (an extension; the thesis is binary).
//
// Output: the two-layer kernel is not a linear combination of the base
// kernels. Weights are the inner-layer weights mu_t of the (normalised)
// given kernels, >= 0 and not normalised (their sum is the scale of the
// exponent); Kernel is the learned kernel K2 = exp(sum_t mu_t K_t) over all
// input points, generated Gaussians included, which is PSD (the exponential
// of a PSD matrix taken entrywise is a non-negative sum of its Hadamard
// powers). The Gaussians twolayer-inf generates, with their theta and
// weight, are reported by Learner.FitResult. Stats: Iterations (accepted
// gradient steps, over all rounds of B2), Objective F at the end,
// Converged, and Gap the first-order stationarity |mu - max(mu + g, 0)|_inf
// (g = -grad F; 0 at a stationary point, in units of the L1 price 1).
//
// Defaults and deviations, each the spec's default where the thesis gives
// none (spec §4.2, §4.3, §9.8):
//   - Armijo on F: trial steps eta_0 * 0.5^s, s = 0..backtracks, accepted
//     when F(mu+) <= F(mu) - armijo * g'(mu+ - mu), g = -grad F. The first
//     trial eta_0 is the parameter step at the first iteration and the
//     Barzilai-Borwein step s's / s'y (s the change of mu, y that of -g)
//     after it (the spec suggests eta_0 = 1 throughout, which took 100
//     iterations to reach F at 1e-4 per step on ionosphere, against 20-30);
//   - stopping ("until convergence" in the thesis): the relative change of
//     F below tol, or |mu+ - mu|_inf below mu_tol, or max_iter steps
//     (ErrNotConverged). A line search that finds no decrease ends the fit
//     as converged when its last trial step is below mu_tol (F cannot be
//     decreased at the SVM's precision), else as not converged;
//   - B2's pricing problem is solved from the best point of a log grid of
//     theta (25 points, 2^-12..2^12 over the mean squared distance), not
//     from a random theta^0, then by gradient ascent on log theta with
//     backtracking: deterministic, and robust for this one-dimensional
//     non-convex problem whose plateaus (theta -> 0 or infinity) stall a
//     random start;
//   - B2's stopping test, literally "J(a, theta) <= J(a, mu)", can never
//     fire with J as defined in §4.2 (spec §4.3). stop = "derivative" (our
//     default) asks whether the new kernel's weight would enter at
//     mu_new = 0, 1/2 b'(K2 o K_theta)b - 1 <= 0, pricing by that
//     derivative: column generation for the penalised objective F.
//     stop = "quadratic" (the spec's proposed default) compares the
//     quadratic terms, 1/2 b'exp(K_theta)b <= 1/2 b'K2(mu)b, pricing by
//     eq. 4.6; we do not default to it because it compares one kernel of
//     weight 1 with the whole learned combination: with unit-trace kernels
//     it fires at once (twolayer-inf = twolayer), and with the raw Gaussian
//     the one kernel it admits takes a weight of about 41, exp of which
//     wrecks the SVM (ionosphere and breast-cancer: 62-70% against 95-98%);
//   - B2 also stops when theta is within theta_tol (relative) of a Gaussian
//     already added, 1e-2 by default where the spec proposes 1e-3: B1 stops
//     on a relative change of F, so the weight of a Gaussian just added is
//     not yet optimal and the pricing returns it again, 0.3% away (seen on
//     breast-cancer); and after max_kernels Gaussians (ErrNotConverged);
//   - the generated Gaussian is divided by its trace over the labelled
//     points like the given kernels (new_kernel_norm = "trace"), or used
//     raw ("none"); its weight starts at 0 and the others keep theirs
//     (reinit = false) or all weights are drawn afresh as Protocol 2 does
//     literally (reinit = true).
package twolayer

import (
	"context"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/mklsvm"
)

// Registry names of the learners of this package.
const (
	Name    = "twolayer"
	NameInf = "twolayer-inf"
)

type config struct {
	svm        mklsvm.Config
	seed       uint64
	maxIter    int
	tol, muTol float64
	step       float64
	armijo     float64
	backtracks int

	// twolayer-inf only
	inf          bool
	maxKernels   int
	thetaTol     float64
	derivative   bool // stop = "derivative"
	normalizeNew bool
	reinit       bool
}

func params() []learners.Param {
	return append(mklsvm.Params(),
		learners.Int("seed", 1, 0, math.MaxInt32, "seed of the random initial weights mu^0 ~ U(0,1)^m"),
		learners.Int("max_iter", 100, 1, 1<<20, "cap on the gradient steps (per round of twolayer-inf)"),
		learners.Float("tol", 1e-4, 0, 1, "stop when F changes by at most tol relative"),
		learners.Float("mu_tol", 1e-5, 0, math.Inf(1), "stop when a step changes no weight by more than mu_tol"),
		learners.Positive("step", 1, "first trial step of the first Armijo line search (later ones start from the Barzilai-Borwein step)"),
		learners.Float("armijo", 1e-4, 0, 1, "sufficient-decrease constant sigma of the Armijo rule"),
		learners.Int("backtracks", 20, 0, 100, "halvings of the step before the line search gives up"),
	)
}

func infParams() []learners.Param {
	return append(params(),
		learners.Int("max_kernels", 20, 0, 1000, "cap on the Gaussians added to the antecedent layer"),
		learners.Enum("stop", "derivative", []string{"derivative", "quadratic"},
			"derivative: pricing by and stop when 1/2 b'(K2 o K_theta)b - 1 <= 0; quadratic: pricing by eq. 4.6, stop when 1/2 b'exp(K_theta)b <= 1/2 b'K2 b"),
		learners.Float("theta_tol", 1e-2, 0, 1, "stop when the new theta is within theta_tol (relative) of a generated one"),
		learners.Enum("new_kernel_norm", "trace", []string{"trace", "none"}, "trace: divide a generated Gaussian by its trace over the labelled points; none: use it raw"),
		learners.Bool("reinit", false, "draw all weights afresh after adding a Gaussian (Protocol 2 literally) instead of warm starting with its weight at 0"),
	)
}

func newConfig(v learners.Values) config {
	return config{
		svm:        mklsvm.NewConfig(v),
		seed:       uint64(v.Int("seed")),
		maxIter:    v.Int("max_iter"),
		tol:        v.Float("tol"),
		muTol:      v.Float("mu_tol"),
		step:       v.Float("step"),
		armijo:     v.Float("armijo"),
		backtracks: v.Int("backtracks"),
	}
}

func init() {
	learners.Register(learners.Spec{
		Name: Name,
		Kind: learners.KindWeights,
		Doc: "2LMKL (Zhuang et al., AISTATS 2011): the kernel exp(sum_t mu_t K_t), mu >= 0 with an L1 penalty, learned with an SVM " +
			"by projected gradient and Armijo steps. Weights are mu; Kernel is the learned exp kernel. Needs Kernels and Labels.",
		Needs:  learners.NeedKernels | learners.NeedLabels,
		Params: params(),
		New: func(v learners.Values) (learners.Learner, error) {
			return &Learner{cfg: newConfig(v)}, nil
		},
	})
	learners.Register(learners.Spec{
		Name: NameInf,
		Kind: learners.KindWeights,
		Doc: "2LMKL^Inf (Zhuang et al., AISTATS 2011): 2LMKL that adds Gaussian kernels exp(-theta |x-y|^2) to the antecedent layer " +
			"by column generation. Weights are mu of the given kernels; Kernel is the learned exp kernel including the generated " +
			"Gaussians. Needs Kernels, Labels and Features.",
		Needs:  learners.NeedKernels | learners.NeedLabels | learners.NeedFeatures,
		Params: infParams(),
		New: func(v learners.Values) (learners.Learner, error) {
			c := newConfig(v)
			c.inf = true
			c.maxKernels = v.Int("max_kernels")
			c.thetaTol = v.Float("theta_tol")
			c.derivative = v.String("stop") == "derivative"
			c.normalizeNew = v.String("new_kernel_norm") == "trace"
			c.reinit = v.Bool("reinit")
			return &Learner{cfg: c}, nil
		},
	})
}

// Learner is a two-layer MKL learner; build it with learners.New(Name or
// NameInf, params).
type Learner struct {
	cfg   config
	trace func(step) // test hook: called after every accepted gradient step
}

// step records one accepted gradient step for tests.
type step struct {
	round     int // round of twolayer-inf (0 for twolayer)
	mu        []float64
	objective float64 // F(mu)
}

// Generated is a Gaussian kernel exp(-Theta |x - x'|^2) that twolayer-inf
// added to the antecedent layer; it enters the exponent as
// Weight * Scale * exp(-Theta |x - x'|^2).
type Generated struct {
	Theta, Weight, Scale float64
}

// Result is a fit with what Output cannot hold: the generated Gaussians
// (none for twolayer).
type Result struct {
	*learners.Output
	Generated []Generated
}

var _ learners.Learner = (*Learner)(nil)

// Fit learns the two-layer kernel; see the package documentation.
func (l *Learner) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	r, err := l.FitResult(ctx, in)
	if r == nil {
		return nil, err
	}
	return r.Output, err
}
