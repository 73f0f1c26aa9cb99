package search

import (
	"context"
	"errors"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/admission"
	"github.com/kernelrank/kernelrank/learners/hsicnpk"
)

// QuerySet is the counter set of the searched queries, in normal form.
const QuerySet = "search:queries"

// ErrNoCache is returned by TopQueries and Precompute of an engine without a
// cache: it neither counts queries nor keeps rankings.
var ErrNoCache = errors.New("search: no cache configured")

// PrecomputeStrategies are the re-rankers whose rankings Precompute stores:
// the engine's default (SelectDefault's choice, if it ran) and npk, the
// learned kernel a request is slowest to fit.
func (e *Engine) PrecomputeStrategies() []string {
	if d := e.DefaultStrategy(); d != hsicnpk.Alias {
		return []string{d, hsicnpk.Alias}
	}
	return []string{hsicnpk.Alias}
}

// TopQueries returns the n most searched queries, most frequent first.
func (e *Engine) TopQueries(ctx context.Context, n int) ([]cache.Count, error) {
	c := e.ld.Cache()
	if c == nil {
		return nil, ErrNoCache
	}
	return c.Top(ctx, QuerySet, n)
}

// PrecomputeReport says what Precompute did.
type PrecomputeReport struct {
	Queries int `json:"queries"` // frequent queries precomputed
	// Rankings are those stored, one per query and strategy of
	// PrecomputeStrategies; Cached of them were in the cache already (their
	// TTL is extended) and Failed were rejected (e.g. a window the learner
	// cannot fit), as the same search would be.
	Rankings int           `json:"rankings"`
	Cached   int           `json:"cached"`
	Failed   int           `json:"failed"`
	Duration time.Duration `json:"duration_ns"`
}

// Precompute stores the rankings of the n most frequent queries, for each
// of PrecomputeStrategies with the default request (DefaultRequest), for
// PrecomputedTTL, so that the next such searches hit. It checks ctx between
// rankings and reports progress (stage "rankings", the fraction of queries
// done) after each query; progress may be nil.
func (e *Engine) Precompute(ctx context.Context, n int, progress func(stage string, fraction float64)) (rep PrecomputeReport, err error) {
	start := time.Now()
	defer func() { rep.Duration = time.Since(start) }()
	ctx = admission.Patient(ctx) // a job waits for the requests' slots, never fails for them
	top, err := e.TopQueries(ctx, n)
	if err != nil {
		return rep, err
	}
	for i, q := range top {
		for _, s := range e.PrecomputeStrategies() {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			cached, err := e.precompute(ctx, q.Member, s)
			switch {
			case err == nil:
				rep.Rankings++
				if cached {
					rep.Cached++
				}
			case IsBadInput(err):
				rep.Failed++
			default:
				return rep, err
			}
		}
		rep.Queries++
		if progress != nil {
			progress("rankings", float64(i+1)/float64(len(top)))
		}
	}
	return rep, nil
}

// precompute stores the ranking of the default request for q re-ranked by
// strategy, and reports whether it was cached already.
func (e *Engine) precompute(ctx context.Context, q, strategy string) (bool, error) {
	req := DefaultRequest(q)
	if strategy != e.DefaultStrategy() { // the default's is the default request's, with SelectDefault's parameters
		req.Rerank.Strategy = strategy
	}
	p, err := e.plan(req)
	if err != nil {
		return false, err
	}
	key := p.rankingKey().String()
	if b, err := e.ld.Cache().Get(ctx, key); err == nil {
		// Stored by a search, with the shorter TTL: keep it as long as a
		// precomputed one. Failing that, it only expires sooner.
		_ = e.ld.Cache().Set(ctx, key, b, e.opt.PrecomputedTTL)
		return true, nil
	}
	_, _, err = e.fetchRanking(ctx, p, e.opt.PrecomputedTTL, &Trace{})
	return false, err
}
