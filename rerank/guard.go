package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// PanicError is a panic inside a kernel computation (a learner's bug on some
// input), returned as an error: it costs the one request, never the process.
// Under the cache a kernel is computed in singleflight's goroutine, where
// an unrecovered panic would kill the server.
type PanicError struct {
	Strategy string
	Value    any
	Stack    []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("rerank: %s panicked: %v", e.Strategy, e.Value)
}

// computeSafely runs src.compute, turning a panic into a *PanicError.
func computeSafely(ctx context.Context, strategy string, src *source, cands []Candidate) (k *mat.SymDense, s *learners.Stats, err error) {
	defer func() {
		if r := recover(); r != nil {
			k, s, err = nil, nil, &PanicError{Strategy: strategy, Value: r, Stack: debug.Stack()}
		}
	}()
	return src.compute(ctx, cands)
}

// Applicability says whether a strategy or learner can re-rank a search, and
// why not.
type Applicability struct {
	Rerank bool   `json:"rerank"`
	Reason string `json:"rerank_reason,omitempty"`
}

// searchInputs is what a search gives a learner: the candidates' visual
// features, their tag kernel as the target, and (for the learners that
// combine kernels) the linear visual and tag kernels. The tag kernel is a
// graded similarity, not a link target: a learner that needs labels is
// refused even when it takes a link target in their place (TS-MKL).
const searchInputs = learners.NeedFeatures | learners.NeedTarget | learners.NeedKernels | learners.AcceptImplicit

// noFeatures is why nothing visual re-ranks a corpus without visual features.
const noFeatures = "the corpus has no visual features"

// LearnerApplicability says whether the plug-in of spec (a learner or a
// fixed strategy) can re-rank a search over a corpus with (visual) or
// without visual features.
func LearnerApplicability(spec learners.Spec, visual bool) Applicability {
	if spec.Kind == learners.KindOrder {
		return Applicability{Rerank: true}
	}
	if spec.Kind != learners.KindKernel && spec.Kind != learners.KindWeights {
		return Applicability{Reason: fmt.Sprintf("it outputs %s, not a kernel", spec.Kind)}
	}
	if missing := spec.Needs.Required() &^ searchInputs; missing != 0 {
		return Applicability{Reason: "it needs " + strings.Join(missing.Names(), " and ") + ", which a search's candidates do not have"}
	}
	if !visual && spec.Needs&(learners.NeedFeatures|learners.NeedKernels) != 0 {
		return Applicability{Reason: noFeatures}
	}
	return Applicability{Rerank: true}
}

// rerankers names the registered learners that can re-rank a search, and
// their aliases.
func rerankers() []string {
	var names []string
	for _, s := range learners.Specs() {
		if !s.Fixed && LearnerApplicability(s, true).Rerank {
			names = append(names, s.Name)
			names = append(names, s.Aliases...)
		}
	}
	slices.Sort(names)
	return names
}

// Cost model: the work of a kernel in floating-point operations, to tell the
// requests that hold a core for long (a learner's eigendecompositions) from
// those that do not. Rough by design: the constants are typical values on
// this 2-core machine (about 4 GFLOP/s a core in gonum), not bounds.
const (
	// fullRankSolves is a typical number of n x n eigendecompositions of a
	// full-rank fit (HSIC-NPK takes 20-60 on the demo's windows of 200).
	fullRankSolves = 30
	// eigenFlops is the cost of one symmetric eigendecomposition in units of n^3.
	eigenFlops = 2
	// lowRankSteps is a typical number of O(n^2 m) steps of a low-rank fit
	// over a Laplacian basis of m vectors.
	lowRankSteps = 20
	// ExpensiveCost is the cost from which a kernel computation counts as
	// expensive, about 25 ms of one core: full-rank HSIC-NPK (and any other
	// learner) from windows of about 120, poly from windows of about 600 of
	// the demo's 297 features; never poly at the default window of 200
	// (measured 3-5 ms, README).
	ExpensiveCost = 1e8
)

// Cost estimates the work of the kernel of n candidates with d visual
// features (0 for raw, which computes none).
func (p *Plan) Cost(n, d int) float64 {
	fn, fd := float64(n), float64(max(d, 1))
	switch {
	case p.src.compute == nil:
		return 0
	case p.src.learner == "":
		return fn * fn * fd
	case p.rank > 0:
		return fn * fn * float64(min(p.rank, n)) * lowRankSteps
	}
	return fn * fn * fn * eigenFlops * fullRankSolves
}

// Expensive reports whether the kernel of n candidates with d features costs
// at least ExpensiveCost.
func (p *Plan) Expensive(n, d int) bool { return p.Cost(n, d) >= ExpensiveCost }

// RankAbove reports whether p fits a kernel of rank above m (full rank,
// or a larger "rank" parameter) with a learner that has a low-rank form.
func (p *Plan) RankAbove(m int) bool { return p.hasRank && (p.rank == 0 || p.rank > m) }

// LowRank returns p with the learner's low-rank form of rank m in place of
// its own rank when that is above m (see RankAbove); p itself otherwise.
func (p *Plan) LowRank(m int) (*Plan, error) {
	if !p.RankAbove(m) {
		return p, nil
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(p.src.params), &v); err != nil {
		return nil, err
	}
	v["rank"] = m
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	opt := p.opt
	opt.Params = b
	return NewPlan(opt)
}
