// Package hsicnpk learns the semantics-preserving nonparametric kernel of
// Zhuang's thesis ch. 6 (eq. 6.2, Protocol 5): over n candidate images, the
// PSD kernel K that maximises its HSIC dependence on the tag kernel K_t while
// keeping visual neighbours close,
//
//	min_K  -tr(H K H K_t) + C/2 sum_ij xi_ij^2
//	s.t.   K PSD, tr(K K) <= B,  K_ii + K_jj - 2 K_ij <= d_ij^2 + xi_ij  for (i,j) in N,
//
// d_ij the Euclidean distance of the visual feature vectors and N the pairs
// "among each other's k nearest neighbours": read by default as j among the
// k nearest of i or i among those of j (neighbors=union, the symmetrised kNN
// graph, which keeps every image constrained), or as both (neighbors=mutual).
// Inputs: Features (the visual vectors) and Target (K_t, the linear kernel
// of the normalised tf-idf tag vectors). Fit is deterministic and checks
// ctx at every iteration.
//
// # Solver
//
// The dual over alpha >= 0 (one multiplier a pair) is
//
//	D(alpha) = -sqrt(B) ||A_+||_F - sum alpha_ij d_ij^2 - ||alpha||^2 / (2C),  A = M - sum alpha_ij A^ij,
//
// M = H K_t H, with K(alpha) = sqrt(B) A_+ / ||A_+||_F (Theorem 6.34) and
// gradient tr(K A^ij) - d_ij^2 - alpha_ij / C. Deviations from the thesis,
// each marked where it is made:
//   - the multipliers are projected on alpha >= 0 (the thesis' update omits it);
//   - the step size, which the thesis leaves open, comes from projected L-BFGS
//     with Armijo backtracking (dual.go);
//   - "until convergence" is replaced by a certificate: the relative duality
//     gap (P - D) / max(1, |P|) <= tol between the best primal value
//     P(K) = -tr(M K) + C/2 sum max(0, K_ii + K_jj - 2K_ij - d_ij^2)^2 seen and
//     the best dual value;
//   - when the primal optimum lies strictly inside tr(KK) <= B, A_+ vanishes
//     at the optimal alpha and the dual cannot close the gap (spec A.4); this
//     is detected (the best primal point needs a scaling < 1 and the gap
//     stalls) and the primal is solved directly (primal.go);
//   - the data are scaled so that the defaults mean the same for features and
//     tags of any scale (see below);
//   - Warp builds the Laplacian of eq. 6.9 from the clipped learned kernel
//     (see Warp for why).
//
// Eigen-decompositions use kernelmath.PartialEigen: all eigenvalues (for D,
// and for every line-search trial) and the eigenvectors of the positive ones
// only (for K, at accepted points), a fraction of what mat.EigenSym takes
// (kernelmath.BenchmarkPartialEigen200; docs/evaluation.md). The first
// L-BFGS step is scaled by a curvature estimate (dual.go, firstStep) rather
// than moving alpha by 1, which saves backtracking factorisations; the
// iteration and the certificate are unchanged. Lanczos (kernelmath.TopK) on
// the operator x -> M x - L_alpha x, which the rank bound rank(A_+) <=
// rank(M) suggests, loses on the real data: a search's window keeps as many
// positive eigenvalues as it has distinct tags, too many for Lanczos to
// pay. Also tried on Corel5k windows and not kept, each for saving nothing
// or costing accuracy (docs/evaluation.md): other L-BFGS memories; a better
// primal candidate from the same factorisation (the gap waits for the
// eigenvectors to settle); computing the eigenvectors in two goroutines
// (slower with the cores loaded); one inverse-iteration step a vector
// instead of two (the eigenvectors lose orthogonality); a line search that
// doubles an accepted unit step while D rises (fewer iterations, more
// factorisations in all); dqds (gonum's Dlasq2, on T shifted positive
// definite) in place of Dsterf for the eigenvalues (slower at n = 200).
// npk-fused stops at a looser gap by default (FusedTol), for about half
// the iterations.
//
// # Scaling (our choice; the thesis gives absolute C and B)
//
//   - d_ij^2 is divided by its mean over N;
//   - M is divided by its Frobenius norm;
//   - B = budget / dbar^2, dbar the mean of M_ii + M_jj - 2M_ij over N: with
//     budget = 1 the tag kernel scaled into the budget stretches visual
//     neighbours by their visual distance on average, so the constraints bind
//     on the pairs the tags pull apart.
//
// Stats.Objective is the primal value in these units.
//
// # Low rank
//
// With rank = m > 0, K = V P V^T over an n x m basis V, and the same
// problem, with the same B, is solved over the m x m PSD matrix P:
// tr(V P V^T A^ij) = (v_i - v_j)^T P (v_i - v_j), and every
// eigendecomposition is m x m. With m = n it is the full problem.
//
// The thesis (section 6.3.4) takes for V the m eigenvectors of the kNN graph
// Laplacian with the smallest eigenvalues (basis=laplacian; the graph of the
// constrained pairs with heat-kernel weights exp(-d_ij^2 / mean d^2), which
// it does not specify). DEVIATION: the default basis is the m leading
// eigenvectors of the centred tag kernel M (basis=tags), because where the
// constraints are slack the full-rank optimum lies in M's leading eigenspace
// while a smooth Laplacian basis cannot carry the co-tag links (the two
// bases against full rank: docs/evaluation.md).
// The smooth basis keeps visual neighbours close by itself, so few
// constraints bind; over the tag basis they bind as at full rank.
//
// # Convergence and errors
//
// Stats.Iterations counts the iterations of both phases, Stats.Gap is the
// final relative gap. A fit that ends without the certificate has
// Stats.Converged false and
// returns an error wrapping learners.ErrNotConverged together with the best kernel
// found, unless the parameter best_effort is set, in which case the error is
// nil and only Stats says so: a re-ranker on a deadline can then serve a
// slightly suboptimal kernel knowingly.
//
// Kernel warping for images outside the training set (eq. 6.9) is Warp.
package hsicnpk

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// Name is the registry name of this learner, and Alias its other name:
// the thesis' name, and the search API's since the start.
const (
	Name  = "hsicnpk"
	Alias = "npk"
)

type config struct {
	k          int
	mutual     bool
	c          float64
	budget     float64
	rank       int
	basis      string
	tol        float64
	maxIter    int
	bestEffort bool
	// legacy selects the solver as it was before the speed-ups (gonum's
	// Dsytrd, the unit first step): the reference for the comparison tests
	// and the before/after benchmarks. Not a parameter.
	legacy bool
}

// params are HSIC-NPK's parameters, with tol (the gap certificate) defaulting
// to tolDefault.
func params(tolDefault float64) []learners.Param {
	tol := learners.Float("tol", tolDefault, 0, 1, "relative duality gap (P - D) / max(1, |P|) at which the fit stops")
	tol.MinExclusive = true
	return []learners.Param{
		learners.Int("k", 5, 1, 1<<20, "visual nearest neighbours per image defining the constrained pairs (clamped to n-1)"),
		learners.Enum("neighbors", "union", []string{"union", "mutual"},
			"pairs constrained: union = j among i's k nearest or i among j's (symmetrised kNN graph); mutual = both"),
		learners.Positive("C", 10, "penalty on the squared violations, distances in units of the mean squared visual distance of the constrained pairs"),
		learners.Positive("budget", 1, "bound B on tr(KK), relative: B = budget / dbar^2 (see the package doc); 1 makes the visual constraints bind"),
		learners.Int(learners.RankParam, 0, 0, 1<<20, "0: full-rank kernel; m > 0: K = V P V^T over an m-dimensional basis V (clamped to n)"),
		learners.Enum("basis", "tags", []string{"tags", "laplacian", "mixed"},
			"low-rank basis V: tags = the m leading eigenvectors of the centred tag kernel; laplacian = the m smoothest eigenvectors of the visual kNN graph's Laplacian (the thesis' section 6.3.4); mixed = half of each, orthonormalised"),
		tol,
		learners.Int("max_iter", 500, 1, 1<<20, "iteration cap of the dual solver (and of the primal fallback)"),
		learners.Bool("best_effort", false, "return the best kernel without an error when the gap tolerance is not reached (Stats.Converged stays false)"),
	}
}

func init() {
	learners.Register(learners.Spec{
		Name:    Name,
		Aliases: []string{Alias},
		Kind:    learners.KindKernel,
		Doc: "Semantics-preserving nonparametric kernel (Zhuang thesis ch. 6, eq. 6.2): " +
			"maximises HSIC with the tag kernel (Target) subject to visual kNN distance constraints from Features; " +
			"dual projected L-BFGS with a duality-gap certificate, optional low-rank Laplacian basis.",
		Needs:  learners.NeedFeatures | learners.NeedTarget,
		Params: params(1e-4),
		New: func(v learners.Values) (learners.Learner, error) {
			return &Learner{cfg: configOf(v)}, nil
		},
	})
}

// configOf reads the parameters of params (which the fused learner shares).
func configOf(v learners.Values) config {
	return config{
		k:          v.Int("k"),
		mutual:     v.String("neighbors") == "mutual",
		c:          v.Float("C"),
		budget:     v.Float("budget"),
		rank:       v.Int(learners.RankParam),
		basis:      v.String("basis"),
		tol:        v.Float("tol"),
		maxIter:    v.Int("max_iter"),
		bestEffort: v.Bool("best_effort"),
	}
}

// Learner is the HSIC-NPK learner; build it with learners.New(Name, params).
type Learner struct {
	cfg   config
	trace func(step) // test hook: called at every iteration
}

var _ learners.Learner = (*Learner)(nil)

// Fit learns the kernel over the n points of in (Features and Target).
// A fit that stops without the gap certificate returns its best kernel (with
// Stats.Converged false) together with an error wrapping learners.ErrNotConverged,
// unless best_effort is set. A cancelled ctx returns ctx.Err().
func (l *Learner) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	out, _, err := l.fit(ctx, in, nil)
	return out, err
}

// fit is Fit with the solver; gram, when not nil, is the features' Gram
// matrix (see setup).
func (l *Learner) fit(ctx context.Context, in *learners.Input, gram *mat.SymDense) (*learners.Output, *solver, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	pr, err := setup(in, gram, l.cfg)
	if errors.Is(err, errNoTags) {
		// Identical tags (after centring) leave nothing to maximise: the
		// zero kernel is the exact optimum, and a re-ranker over it keeps
		// the text order.
		n := in.N()
		return &learners.Output{Kernel: mat.NewSymDense(n, nil), Stats: learners.Stats{Converged: true}}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	s := &solver{pr: pr, cfg: l.cfg, trace: l.trace, alpha: make([]float64, len(pr.pairs)),
		bestP: math.Inf(1), bestD: math.Inf(-1)}
	converged, stalled, err := s.dual(ctx)
	if err != nil {
		return nil, nil, err
	}
	if !converged && stalled {
		// Degenerate case (spec A.4): the optimum lies inside the budget
		// (or, rarely, the dual line search found no ascent): solve the
		// primal directly, from the best point so far.
		if converged, err = s.primal(ctx); err != nil {
			return nil, nil, err
		}
	}
	if err := s.factorised(); err != nil {
		return nil, nil, err
	}
	out := &learners.Output{
		Kernel: pr.kernel(&s.best),
		Stats: learners.Stats{
			Iterations: s.iter,
			Objective:  s.bestP,
			Converged:  converged,
			Gap:        s.gap(),
		},
	}
	if !converged && !l.cfg.bestEffort {
		return out, s, fmt.Errorf("hsicnpk: kernel %w: relative duality gap %.3g > tol %g after %d iterations", learners.ErrNotConverged, s.gap(), l.cfg.tol, s.iter)
	}
	return out, s, nil
}
