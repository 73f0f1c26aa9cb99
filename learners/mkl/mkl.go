// Package mkl holds the shallow multiple kernel learning baselines of
// Zhuang's thesis (ch. 2.6.1, ch. 4.5 Table 4.2, ch. 5 Table 5.2), each a
// registered learner of kind weights over the base kernels, with Kernel the
// weighted sum sum_t theta_t K_t over all input points:
//
//   - "uniform" (AvgKernel): theta_t = 1/m, the trivial baseline; it needs
//     only the kernels, which it uses as given.
//   - "lpmkl": L_p-norm MKL (Kloft et al., NIPS 2009 / JMLR 2011; spec
//     §2.2), min_theta max_alpha 1'a - 1/2 sum_t theta_t a'Q_t a over
//     theta >= 0, |theta|_p <= 1, by the analytic update of Kloft et al.
//     alternating with the SVM.
//   - "mkl-level": convex MKL, the same saddle point over the simplex
//     (spec §2.1, eq. 2.29-2.32), by the extended level method of Xu, Jin,
//     King & Lyu (NIPS 2008), the thesis' MKL^level.
//
// The supervised learners need Kernels and Labels: class indices, with
// Unlabeled points left out of training (their rows of Kernel are still
// combined, so that a caller can predict them). Two classes give one binary
// SVM, class 1 (+1) against class 0 (-1), as in the thesis; more classes
// give one SVM per class against the rest with the duals summed and the
// kernel weights shared (an extension: the thesis' experiments are binary).
// The SVM is kernelmath.TrainSVM with the parameter c as C; by default every
// base kernel is divided by its trace over the labelled points (the
// thesis' unit-trace normalisation, a no-op on kernels already normalised
// on the training data), and the weights refer to the normalised kernels.
// Fits are deterministic and check ctx at every iteration.
package mkl

import (
	"context"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/mklsvm"
	"gonum.org/v1/gonum/mat"
)

// Registry names of the learners of this package.
const (
	Uniform = "uniform"
	LpMKL   = "lpmkl"
	Level   = "mkl-level"
)

// supervised is what the SVM-based learners share: C, the SVM tolerance,
// the normalisation, and the stopping rule.
type supervised struct {
	svm     mklsvm.Config
	tol     float64
	maxIter int
}

func newSupervised(v learners.Values) supervised {
	return supervised{svm: mklsvm.NewConfig(v), tol: v.Float("tol"), maxIter: v.Int("max_iter")}
}

func init() {
	learners.Register(learners.Spec{
		Name:    Uniform,
		Kind:    learners.KindWeights,
		Simplex: true,
		Doc:     "AvgKernel: equal weights 1/m over the base kernels as given, the trivial MKL baseline. Needs Kernels; accepts implicit ones.",
		Needs:   uniformNeeds,
		New:     func(learners.Values) (learners.Learner, error) { return uniform{}, nil },
	})
	p := learners.Float("p", 2, 1, math.Inf(1), "the norm p > 1 of the weight constraint |theta|_p <= 1 (the thesis tries 2, 3, 4 and reports the best)")
	p.MinExclusive = true
	learners.Register(learners.Spec{
		Name: LpMKL,
		Kind: learners.KindWeights,
		Doc: "L_p-norm MKL (Kloft et al. 2009): weights theta >= 0 with |theta|_p = 1 by the analytic update " +
			"alternating with an SVM; stops when theta changes by less than tol relative. Needs Kernels and Labels.",
		Needs: learners.NeedKernels | learners.NeedLabels,
		Params: append(mklsvm.Params(), p,
			learners.Float("tol", 1e-4, 0, 1, "stop when max_t |theta_t change| <= tol max_t theta_t"),
			learners.Float("gap_tol", 1e-6, 0, 1, "or when the duality gap is at most gap_tol relative"),
			learners.Int("max_iter", 100, 1, 1<<20, "cap on the SVM solves")),
		New: func(v learners.Values) (learners.Learner, error) {
			return &lpNorm{supervised: newSupervised(v), p: v.Float("p"), gapTol: v.Float("gap_tol")}, nil
		},
	})
	lambda := learners.Float("lambda", 0.9, 0, 1, "level parameter: the level is lambda U + (1 - lambda) L (Xu et al. use 0.9)")
	lambda.MinExclusive = true
	learners.Register(learners.Spec{
		Name:    Level,
		Kind:    learners.KindWeights,
		Simplex: true,
		Doc: "Convex MKL by the extended level method (Xu et al. 2008, the thesis' MKL^level): weights on the simplex; " +
			"cutting-plane lower bound by an exact LP, projection onto the level set by an exact active-set QP; " +
			"stops when the relative gap between the bounds is below tol. Needs Kernels and Labels.",
		Needs: learners.NeedKernels | learners.NeedLabels,
		Params: append(mklsvm.Params(), lambda,
			learners.Float("tol", 1e-3, 0, 1, "stop when (U - L) / |U| <= tol, U and L the upper and lower bounds on the optimum"),
			learners.Int("max_iter", 100, 1, 1<<20, "cap on the SVM solves")),
		New: func(v learners.Values) (learners.Learner, error) {
			return &level{supervised: newSupervised(v), lambda: v.Float("lambda")}, nil
		},
	})
}

// linearMKL is one fit of a linear MKL learner: the tasks, the kernels and
// a buffer for the combined kernel over the labelled points.
type linearMKL struct {
	tasks *kernelmath.SVMTasks
	ks    *kernelmath.KernelSet
	lab   *kernelmath.Restricted // the kernels over the labelled points
	opt   kernelmath.SVMOptions
	k     *mat.SymDense
}

func (s supervised) setup(in *learners.Input) (*linearMKL, error) {
	tasks, ks, err := s.svm.Setup(in)
	if err != nil {
		return nil, err
	}
	return &linearMKL{tasks: tasks, ks: ks, lab: ks.Restrict(tasks.Points), opt: s.svm.SVM,
		k: mat.NewSymDense(len(tasks.Points), nil)}, nil
}

// cut is the SVM solution at theta: D(theta) = alphaSum - 1/2 theta'q,
// with alphaSum = sum_c 1'a_c and q_t = sum_c b_c' K_t b_c, which define
// the cutting plane u -> alphaSum - 1/2 u'q, linear and below D everywhere
// (a is feasible for every u).
type cut struct {
	value    float64 // D(theta)
	alphaSum float64 // sum_c 1'a_c
	q        []float64
}

// solve trains the SVMs on sum_t theta_t K_t and returns the cut.
func (f *linearMKL) solve(ctx context.Context, theta []float64) (cut, error) {
	if err := ctx.Err(); err != nil {
		return cut{}, err
	}
	f.lab.Combine(f.k, theta)
	d, err := f.tasks.Train(ctx, f.k, f.opt)
	if err != nil {
		return cut{}, err
	}
	c := cut{value: d.Value, q: f.lab.Contract(d.Outer(nil), d.Support)}
	for _, beta := range d.Beta {
		for _, b := range beta {
			c.alphaSum += math.Abs(b)
		}
	}
	return c, nil
}

// output returns the weights and their kernel over all input points.
func (f *linearMKL) output(theta []float64, n int, stats learners.Stats) *learners.Output {
	k := mat.NewSymDense(n, nil)
	f.ks.Combine(k, theta)
	return &learners.Output{Kernel: k, Weights: theta, Stats: stats}
}
