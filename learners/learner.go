// Package learners is the kernel-learner plug-in contract: the Learner
// interface, its Input and Output, the registry of Specs with their typed
// parameters, and the errors a caller maps to client errors.
//
// Every directory directly under learners/ is a plug-in package: it calls
// Register from init (fixed registers the six strategies that learn
// nothing). What plug-ins share and never registers lives under
// learners/kit/: kernelmath (the numerics: eigensolvers, QP, k-means, SVM,
// kernel matrices, scratch pools), npkl and mklsvm (what families of
// learners share), forest, learnertest (the contract suite), and all (which
// imports every plug-in).
package learners

import (
	"context"
	"fmt"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// Kind says what a learner outputs.
type Kind string

// The kinds of learner, by output.
const (
	KindKernel    Kind = "kernel"    // Output.Kernel over the input points
	KindWeights   Kind = "weights"   // Output.Weights over the base kernels (and Output.Kernel, their combination)
	KindEmbedding Kind = "embedding" // Output.Embedding, one row per point
	KindScorer    Kind = "scorer"    // Output.Scorer, a model scoring pairs of points (mklr)
	// KindOrder outputs nothing: the order the points came in stands. It is
	// the "raw" re-rank strategy, registered so that the registry lists
	// every re-ranker.
	KindOrder Kind = "order"
)

// Needs is a set of inputs a learner requires.
type Needs uint

// The inputs a learner can require.
const (
	NeedKernels  Needs = 1 << iota // one or more base kernels
	NeedFeatures                   // raw feature vectors
	NeedTarget                     // a target kernel (e.g. the tag kernel)
	NeedLabels                     // class labels (some may be Unlabeled)
	NeedPairs                      // must-link / cannot-link pairs
	// AcceptImplicit is not a need but a capability: the learner takes base
	// kernels and target as kernelmath.KernelMatrix (Input.Matrices, Input.TargetMatrix)
	// when they are too large to store, as for thousands of users.
	AcceptImplicit
	// AcceptLinkTarget is not a need but a capability of a learner that
	// needs labels: it takes, in their place, a target kernel read as a
	// link relation, pair (i, j) linked when the target's entry is > 0 and
	// not linked otherwise. Class labels are the case of the target
	// [y_i = y_j] (the ideal kernel y y^T). A caller whose target is such
	// a relation (the recommender's friendships, or the users' common
	// groups) may give it, as Target or TargetMatrix, with no labels;
	// labels win when both are given. A graded similarity (a search's tag
	// kernel, > 0 for every pair sharing the query's tag) is not one.
	AcceptLinkTarget
)

var needNames = []string{"kernels", "features", "target", "labels", "pairs", "implicit-kernels", "link-target"}

// Capabilities are the bits of Needs that say what a learner can take,
// not what it requires.
const Capabilities = AcceptImplicit | AcceptLinkTarget

// Required returns the needs without the capabilities.
func (n Needs) Required() Needs { return n &^ Capabilities }

// GivenLinkTarget returns what a learner requires beyond a link target
// (see AcceptLinkTarget): its required needs, without labels when the
// link target can stand for them.
func (n Needs) GivenLinkTarget() Needs {
	if n&AcceptLinkTarget != 0 {
		n &^= NeedLabels
	}
	return n.Required()
}

// Names lists the needs in a fixed order, for documentation and errors.
func (n Needs) Names() []string {
	var out []string
	for i, name := range needNames {
		if n&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// Unlabeled marks a point without a class label in Input.Labels.
const Unlabeled = kernelmath.Unlabeled

// Pair is an unordered pair of point indices: kernelmath's, so that the
// constraints of an Input build its graphs as they are.
type Pair = kernelmath.Pair

// Input is what a learner learns from. All matrices are over the same n points.
type Input struct {
	Kernels  []*mat.SymDense // base kernels, n x n each
	Features *mat.Dense      // n x d raw features
	Target   *mat.SymDense   // target kernel, n x n
	// Matrices and TargetMatrix stand for Kernels and Target when those are
	// too large to store (sparse, factored, low-rank or implicit kernels);
	// only learners with AcceptImplicit take them. Give one form, not both.
	Matrices     []kernelmath.KernelMatrix
	TargetMatrix kernelmath.KernelMatrix
	Labels       []int  // class index 0..C-1 or Unlabeled, length n
	MustLink     []Pair // pairs that should be similar
	CannotLink   []Pair // pairs that should be dissimilar
}

// BaseKernels returns the base kernels as kernelmath.KernelMatrix, whichever form they were given in.
func (in *Input) BaseKernels() []kernelmath.KernelMatrix {
	if len(in.Matrices) > 0 {
		return in.Matrices
	}
	out := make([]kernelmath.KernelMatrix, len(in.Kernels))
	for i, k := range in.Kernels {
		out[i] = kernelmath.DenseKernel{K: k}
	}
	return out
}

// TargetKernel returns the target as a kernelmath.KernelMatrix (nil when there is none).
func (in *Input) TargetKernel() kernelmath.KernelMatrix {
	if in.TargetMatrix != nil {
		return in.TargetMatrix
	}
	if in.Target != nil {
		return kernelmath.DenseKernel{K: in.Target}
	}
	return nil
}

// ErrInput wraps every error caused by bad learner input, so callers can
// map it to a client error. It is kernelmath's, so that a solver's
// complaint about its input is a fit's.
var ErrInput = kernelmath.ErrInput

func inputErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, args...))
}

// N returns the number of points, taken from the first input that is present (0 if none).
func (in *Input) N() int {
	switch {
	case len(in.Kernels) > 0 && in.Kernels[0] != nil:
		return in.Kernels[0].SymmetricDim()
	case len(in.Matrices) > 0 && in.Matrices[0] != nil:
		return in.Matrices[0].Dim()
	case in.Features != nil:
		r, _ := in.Features.Dims()
		return r
	case in.Target != nil:
		return in.Target.SymmetricDim()
	case in.TargetMatrix != nil:
		return in.TargetMatrix.Dim()
	}
	return len(in.Labels)
}

// Validate checks that in has what needs asks for, that sizes agree and that
// every number is finite. Errors wrap ErrInput and say which input is wrong.
func (in *Input) Validate(needs Needs) error {
	n := in.N()
	if n == 0 {
		return inputErr("no points: the input is empty")
	}
	implicit := len(in.Matrices) > 0 || in.TargetMatrix != nil
	if implicit && needs&AcceptImplicit == 0 {
		return inputErr("this learner needs stored (dense) kernels; it does not take implicit ones")
	}
	if len(in.Matrices) > 0 && len(in.Kernels) > 0 || in.TargetMatrix != nil && in.Target != nil {
		return inputErr("give each kernel either stored or implicit, not both")
	}
	if needs&NeedKernels != 0 && len(in.Kernels)+len(in.Matrices) == 0 {
		return inputErr("this learner needs base kernels and none were given")
	}
	for t, k := range in.Matrices {
		if err := checkImplicit(fmt.Sprintf("base kernel %d", t), k, n); err != nil {
			return err
		}
	}
	if in.TargetMatrix != nil {
		if err := checkImplicit("target kernel", in.TargetMatrix, n); err != nil {
			return err
		}
	}
	for t, k := range in.Kernels {
		if err := kernelmath.CheckSym(fmt.Sprintf("base kernel %d", t), k, n); err != nil {
			return err
		}
	}
	if needs&NeedFeatures != 0 && in.Features == nil {
		return inputErr("this learner needs feature vectors and none were given")
	}
	if in.Features != nil {
		r, _ := in.Features.Dims()
		if r != n {
			return inputErr("features have %d rows, want %d", r, n)
		}
		if err := kernelmath.CheckFinite("features", in.Features.RawMatrix().Data); err != nil {
			return err
		}
	}
	if needs&NeedTarget != 0 && in.Target == nil && in.TargetMatrix == nil {
		return inputErr("this learner needs a target kernel and none was given")
	}
	if in.Target != nil {
		if err := kernelmath.CheckSym("target kernel", in.Target, n); err != nil {
			return err
		}
	}
	linkTarget := needs&AcceptLinkTarget != 0 && len(in.Labels) == 0 && (in.Target != nil || in.TargetMatrix != nil)
	if needs&NeedLabels != 0 && !linkTarget {
		if len(in.Labels) != n {
			if needs&AcceptLinkTarget != 0 && len(in.Labels) == 0 {
				return inputErr("this learner needs %d labels or a link target, got neither", n)
			}
			return inputErr("this learner needs %d labels, got %d", n, len(in.Labels))
		}
		labeled := 0
		for i, y := range in.Labels {
			if y < Unlabeled {
				return inputErr("label %d of point %d is invalid (class indices are >= 0, %d is unlabeled)", y, i, Unlabeled)
			}
			if y != Unlabeled {
				labeled++
			}
		}
		if labeled == 0 {
			return inputErr("every point is unlabeled")
		}
	}
	if needs&NeedPairs != 0 && len(in.MustLink)+len(in.CannotLink) == 0 {
		return inputErr("this learner needs must-link or cannot-link pairs and none were given")
	}
	for _, set := range []struct {
		name  string
		pairs []Pair
	}{{"must-link", in.MustLink}, {"cannot-link", in.CannotLink}} {
		for _, p := range set.pairs {
			if p.I < 0 || p.J < 0 || p.I >= n || p.J >= n || p.I == p.J {
				return inputErr("%s pair (%d, %d) is out of range for %d points", set.name, p.I, p.J, n)
			}
		}
	}
	return nil
}

// checkImplicit checks the size and the diagonal of an implicit kernel:
// reading every entry would cost what storing it does.
func checkImplicit(name string, k kernelmath.KernelMatrix, n int) error {
	if k == nil {
		return inputErr("%s is missing", name)
	}
	if k.Dim() != n {
		return inputErr("%s is %d x %d, want %d x %d", name, k.Dim(), k.Dim(), n, n)
	}
	return kernelmath.CheckFinite(name+" (diagonal)", k.Diag())
}

// Stats reports how a fit went.
type Stats struct {
	Iterations int     `json:"iterations"`
	Objective  float64 `json:"objective"`
	Converged  bool    `json:"converged"`
	// Gap is the relative duality gap or optimality measure at the end, where the learner has one.
	Gap float64 `json:"gap,omitempty"`
}

// Output is what a learner learned; which fields are set depends on its Kind.
type Output struct {
	Kernel    *mat.SymDense // KindKernel, and KindWeights (the weighted combination)
	Weights   []float64     // KindWeights: one per base kernel
	Embedding *mat.Dense    // KindEmbedding: n x dim
	Scorer    PairScorer    // KindScorer
	Stats     Stats
}

// PairScorer scores pairs of the points a scorer was fitted on: higher is
// more alike (for mklr, the log-odds that the two are linked).
type PairScorer interface {
	Score(i, j int) float64
}

// ErrNotConverged is wrapped by the error of a fit that stopped (at its
// iteration cap) before its convergence criterion held. Such a fit returns its
// best output too, with Stats.Converged false, so that a caller may use it
// knowingly; it is never returned without the error. It is kernelmath's, so
// that a solver's failure to converge is a fit's.
var ErrNotConverged = kernelmath.ErrNotConverged

// Learner learns from an Input. Fit must honour ctx cancellation inside its
// iterations and be deterministic given its parameters (including any seed).
type Learner interface {
	Fit(ctx context.Context, in *Input) (*Output, error)
}

// DenseOutputMax is the largest n for which a weights learner given
// implicit kernels forms Output.Kernel (8 n^2 bytes: 32 MB at 2,000).
const DenseOutputMax = 2000

// CombinedOutput returns sum_t weights[t] K_t over in's base kernels as the
// stored Output.Kernel of a weights learner: always for stored kernels, for
// implicit ones only up to DenseOutputMax points (nil above, where the
// caller combines them itself with kernelmath.NewKernelSum).
func CombinedOutput(in *Input, weights []float64) (*mat.SymDense, error) {
	if len(in.Kernels) == 0 && in.N() > DenseOutputMax {
		return nil, nil
	}
	sum, err := kernelmath.NewKernelSum(weights, in.BaseKernels())
	if err != nil {
		return nil, err
	}
	return kernelmath.KernelDense(sum), nil
}
