package search

import (
	"context"
	"encoding/json"
	"math"

	"github.com/kernelrank/kernelrank/search/decision"
)

// fitDecision fits the per-query decision (package decision) on the
// validation queries: the choice among the candidates at every setting
// measured, by the signals of each query's window as a request with every
// default sees it; served is the single choice SelectDefault made.
func (e *Engine) fitDecision(ctx context.Context, queries []LabelledQuery, cands []candidate, served Scored) (*decision.Rule, error) {
	tab := decision.Table{Signals: make([][]float64, len(queries))}
	for _, c := range cands {
		for s, params := range c.params {
			if c.strategy == served.Strategy && s == c.chosen {
				tab.Served = len(tab.Choices)
			}
			tab.Choices = append(tab.Choices, decision.Choice{Strategy: c.strategy, Params: params})
			tab.Precision = append(tab.Precision, c.per[s])
		}
	}
	for i, q := range queries {
		sig, err := e.Signals(ctx, q)
		if err != nil {
			return nil, err
		}
		if tab.Signals[i] = sig; sig == nil {
			tab.Signals[i] = make([]float64, len(decision.Names))
			for s := range tab.Signals[i] {
				tab.Signals[i][s] = math.NaN()
			}
		}
	}
	r := decision.Fit(tab)
	return &r, nil
}

// Signals are the per-query decision's signals of q's window as a request
// with every default sees it (decision.Measure; nil when it has too few
// candidates to measure).
func (e *Engine) Signals(ctx context.Context, q LabelledQuery) ([]float64, error) {
	norm, err := e.ix.NormalizeQuery(q.Query)
	if err != nil {
		return nil, err
	}
	w, err := e.Candidates(ctx, norm, max(e.opt.Window, DefaultK), q.Seed)
	if err != nil {
		return nil, err
	}
	return decision.Measure(w.Candidates), nil
}

// adopt stores the rule in sel with its fingerprint, which keys the
// rankings it decides.
func (sel *Selection) adopt(r *decision.Rule) {
	b, _ := json.Marshal(r) // plain fields: it always encodes
	sel.decision, sel.decisionKey = r, string(b)
}

// Decision is the per-query decision SelectDefault fitted (nil: none ran);
// a request that names no re-ranker is decided by it when it is adopted.
func (e *Engine) Decision() *decision.Rule {
	if s := e.selection.Load(); s != nil {
		return s.decision
	}
	return nil
}

// decide is the adopted rule a request with every re-ranking default
// follows, with its fingerprint for the ranking's cache key; nil when the
// request names a re-ranker or its parameters, or no rule is adopted.
func (e *Engine) decide(req Request) (*decision.Rule, string) {
	s := e.selection.Load()
	if req.Rerank.Strategy != "" || len(req.Rerank.Params) != 0 || s == nil || s.decision == nil || !s.decision.Adopted {
		return nil, ""
	}
	return s.decision, s.decisionKey
}
