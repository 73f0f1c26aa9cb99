// Package umkl is unsupervised multiple kernel learning (Zhuang, Wang, Hoi
// & Lan, "Unsupervised Multiple Kernel Learning", ACML 2011; Zhuang's
// thesis ch. 5): from unlabelled points x_1..x_n (Features, standardised by
// the caller as in spec B.4, e.g. with kernelmath.Standardize) and m base
// kernels K_t over them, it learns weights mu on the simplex, and so the
// kernel K = sum_t mu_t K_t, for which every point is well reconstructed
// from a small local basis B_i of B points weighted by kernel values, and
// large kernel values join near points:
//
//	min_{mu in simplex, |B_i| = B}  Obj = 1/2 sum_i |x_i - sum_{j in B_i} K_ij x_j|^2
//	                                      + gamma sum_i sum_{j in B_i} K_ij |x_i - x_j|^2.
//
// The implementation follows the spec (shared/specs/mao-pfskl-and-umkl.md,
// PART B) with its fixes:
//   - the mu-step (D fixed) minimises J(mu) = mu'W mu + z'mu over the
//     simplex, W_ts = sum_i (k_t,i o d_i)' P (k_s,i o d_i) (m x m: the
//     paper's n x n W is a typo), z_t = sum_i sum_{j in B_i} K_t[i,j]
//     (2 gamma M_ij - 2 P_ij), P = X X', M the squared distances;
//     2 Obj = J + tr P. It is solved exactly by kernelmath.SimplexQP (active
//     set; the spec suggests FISTA, which is only approximate), warm
//     started from the previous mu. W is formed as G'G with G stacking
//     R_i [K_t[i, B_i]]_t, R_i'R_i = P[B_i, B_i] (eigen factor), O(n B m^2);
//   - the D-step (mu fixed) picks, for each point independently, B
//     points greedily by the smallest increase of d'Qd + c'd,
//     Q_ab = k_a k_b P_ab, c = k o (2 gamma v - 2 p) (elementwise: the
//     paper's "c = k(2 gamma v - 2p)"), with k, p, v the columns i of K,
//     P, M, the increments kept incrementally (O(n B) per point), ties to
//     the lowest index; x_i itself may be chosen (the literal reading,
//     exclude_self = false) or not;
//   - order: the paper computes W before any D exists; here every
//     iteration is a D-step (first with mu = 1/m) then a mu-step;
//   - stopping (the paper says "until convergence"; spec B.3.3): the basis
//     sets repeat (then mu would too), or the objective after the mu-step
//     changes by at most tol relative to the previous one, or max_iter
//     mu-steps. The weights returned are those of the lowest objective seen
//     (the greedy D-step can raise it). Reaching max_iter is not an error:
//     Stats.Converged is false.
//
// Deviations: the base kernels are divided by their traces inside the
// learner (normalize = "trace", spec B.4's unit-trace normalisation, a
// no-op on kernels that already have unit trace, such as
// kernelmath.MKLBaseKernels'); Weights and Kernel refer to the normalised
// kernels. With normalize = "none" they are used as given. Features are
// required besides the kernels: P and M come from them.
//
// Behaviour on the spec's base set (kernelmath.MKLBaseKernels, unit trace):
// the kernel entries are O(1/n), so W is O(B^2/n^2) against z's O(B/n)
// and the mu-step is all but a linear program: it returns a vertex, one
// kernel. The odd-degree polynomials (x'y + 1)^q on standardised features
// are negative for anti-aligned pairs, where the distortion term becomes a
// reward; the objective's lowest values then come from the all-feature
// (or a one-feature) linear kernel with bases of far points (on an
// ionosphere split: Obj -6.2e4 against +2.8e3 for the narrowest Gaussian,
// the mean squared distance to the basis 134 against 66 over all pairs).
// That is the objective as the paper states it, not a solver failure.
//
// Output: Weights (mu, on the simplex) and Kernel = sum_t mu_t K_t. Stats:
// Iterations (mu-steps), Objective (the lowest Obj), Converged, Gap (the
// Frank-Wolfe gap of the last mu-step relative to max(1, |J|)). The fit
// has no randomness and checks ctx at every iteration.
package umkl

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// Name is the registry name of this learner.
const Name = "umkl"

type config struct {
	gamma       float64
	basis       int
	excludeSelf bool
	normalize   bool
	maxIter     int
	tol         float64
}

func params() []learners.Param {
	return []learners.Param{
		learners.Float("gamma", 100, 0, math.Inf(1), "weight gamma of the locality (distortion) term; the paper's value for its KPCA experiment"),
		learners.Int("basis", 10, 1, 1<<20, "size B of each point's local basis (clamped to the number of candidates)"),
		learners.Bool("exclude_self", false, "keep x_i out of its own basis (the paper does not say; it allows it)"),
		learners.Enum("normalize", "trace", []string{"trace", "none"}, "trace: divide every base kernel by its trace (the paper's unit-trace normalisation); none: use them as given"),
		learners.Int("max_iter", 50, 1, 1<<20, "cap on the alternations (mu-steps)"),
		learners.Float("tol", 1e-6, 0, 1, "stop when the objective changes by at most tol relative"),
	}
}

func init() {
	learners.Register(learners.Spec{
		Name:    Name,
		Kind:    learners.KindWeights,
		Simplex: true,
		Doc: "Unsupervised MKL (Zhuang et al., ACML 2011): weights on the simplex over the base kernels " +
			"that make each point reconstructible from a greedy local basis weighted by kernel values; " +
			"alternates an exact simplex QP on the weights with greedy basis selection. Needs Kernels and Features.",
		Needs:  learners.NeedKernels | learners.NeedFeatures,
		Params: params(),
		New: func(v learners.Values) (learners.Learner, error) {
			return &Learner{cfg: config{
				gamma:       v.Float("gamma"),
				basis:       v.Int("basis"),
				excludeSelf: v.Bool("exclude_self"),
				normalize:   v.String("normalize") == "trace",
				maxIter:     v.Int("max_iter"),
				tol:         v.Float("tol"),
			}}, nil
		},
	})
}

// Learner is the UMKL learner; build it with learners.New(Name, params).
type Learner struct {
	cfg   config
	trace func(step) // test hook: called after every mu-step
}

// step records one alternation for tests.
type step struct {
	sets [][]int // B_i in selection order
	objD float64 // Obj after the D-step (mu of the previous step)
	w    *mat.SymDense
	z    []float64
	mu   []float64
	obj  float64             // Obj after the mu-step
	qp   kernelmath.QPResult // qp.Objective is J(mu) = mu'W mu + z'mu
}

var _ learners.Learner = (*Learner)(nil)

// Fit learns the kernel weights from in.Kernels and in.Features.
func (l *Learner) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	pr, err := newProblem(in, l.cfg)
	if err != nil {
		return nil, err
	}
	m := len(in.Kernels)
	mu := make([]float64, m)
	for t := range mu {
		mu[t] = 1 / float64(m)
	}
	best, bestObj := slices.Clone(mu), math.Inf(1)
	var (
		prevSets  [][]int
		prevObj   float64
		converged bool
		gap       float64
		iters     int
	)
	combined := make([]float64, pr.n*pr.n)
	for iters < l.cfg.maxIter {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr.combine(mu, combined)
		sets := pr.dstep(combined)
		if prevSets != nil && sameSets(sets, prevSets) {
			converged = true
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		kb := pr.gather(sets)
		objD := pr.objective(mu, sets, kb)
		w, z, err := pr.quadratic(sets, kb)
		if err != nil {
			return nil, err
		}
		q := mat.NewSymDense(m, nil)
		q.ScaleSym(2, w)
		next, res, err := kernelmath.SimplexQP(q, z, kernelmath.QPOptions{Start: mu})
		if err != nil {
			return nil, fmt.Errorf("umkl: mu-step %d: %w", iters+1, err)
		}
		mu = next
		iters++
		obj := pr.objective(mu, sets, kb)
		gap = res.Gap / max(1, math.Abs(res.Objective))
		if obj < bestObj {
			best, bestObj = slices.Clone(mu), obj
		}
		if l.trace != nil {
			l.trace(step{sets: sets, objD: objD, w: w, z: z, mu: slices.Clone(mu), obj: obj, qp: res})
		}
		if prevSets != nil && math.Abs(prevObj-obj) <= l.cfg.tol*math.Abs(prevObj) {
			converged = true
			break
		}
		prevSets, prevObj = sets, obj
	}
	pr.combine(best, combined)
	k := mat.NewSymDense(pr.n, nil)
	for i := range pr.n {
		for j := i; j < pr.n; j++ {
			k.SetSym(i, j, combined[i*pr.n+j])
		}
	}
	return &learners.Output{
		Kernel:  k,
		Weights: best,
		Stats:   learners.Stats{Iterations: iters, Objective: bestObj, Converged: converged, Gap: gap},
	}, nil
}

// sameSets reports whether every basis set is the same set in a and b.
func sameSets(a, b [][]int) bool {
	for i := range a {
		x, y := slices.Clone(a[i]), slices.Clone(b[i])
		slices.Sort(x)
		slices.Sort(y)
		if !slices.Equal(x, y) {
			return false
		}
	}
	return true
}
