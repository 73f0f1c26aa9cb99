package rerank

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kernelrank/kernelrank/learners"
)

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

// ExpensiveCost is the cost (learners.Resolved.Cost, in floating-point
// operations) from which a kernel computation counts as expensive: about
// 25 ms of one core. Full-rank HSIC-NPK reaches it from windows of about
// 120, poly from windows of about 600 of the demo's features; the figures
// are in docs/evaluation.md.
const ExpensiveCost = 1e8

// Cost estimates the work of the kernel of n candidates with d visual
// features (0 for raw, which computes none).
func (p *Plan) Cost(n, d int) float64 { return p.r.Cost(n, d) }

// Expensive reports whether the kernel of n candidates with d features costs
// at least ExpensiveCost.
func (p *Plan) Expensive(n, d int) bool { return p.Cost(n, d) >= ExpensiveCost }

// RankAbove reports whether p fits a kernel of rank above m (full rank,
// or a larger rank) with a learner that has a low-rank form.
func (p *Plan) RankAbove(m int) bool { return p.r.RankAbove(m) }

// LowRank returns p with the learner's low-rank form of rank m in place of
// its own rank when that is above m (see RankAbove); p itself otherwise.
// The resolved strategy is changed in place of one parameter: nothing is
// decoded or validated again.
func (p *Plan) LowRank(m int) (*Plan, error) {
	if !p.RankAbove(m) {
		return p, nil
	}
	r, err := p.r.LowRank(m)
	if err != nil {
		return nil, err
	}
	low := *p
	low.r = r
	low.opt.Params = json.RawMessage(r.Params)
	return &low, nil
}
