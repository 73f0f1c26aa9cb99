// Package search is the image search facade: it owns the whole pipeline of
// a query (the text stage's candidate window, the kernel of the window,
// VisualRank with its explanation, the cut at k) and reads and writes it
// through the cache. The server, the evaluation and the job worker call an
// Engine's typed Search; nothing else assembles candidates or re-ranks them
// for a search, and the server alone encodes the answer.
//
// Two things are cached, both keyed by the corpus version of the index, so
// adding, replacing or deleting an image makes every older entry
// unreachable without a purge:
//
//   - the ranking of a request (every parameter that changes the answer,
//     with the query in normal form): a repeated search skips the text
//     stage and the re-ranking;
//   - the kernel of a candidate window when a learner fits it (npk), with
//     the learner's statistics in the same value: the same window re-ranked
//     with another k, prior, affinity or damping skips the fit. Fixed
//     kernels (text, linear, poly, rbf, intersection) are computed: they
//     cost about what fetching them does (BenchmarkKernel200).
//
// Every search counts its query; Precompute stores the rankings of the most
// frequent ones ahead of the next request.
package search

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/admission"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/rerank"
	"github.com/kernelrank/kernelrank/search/decision"
	"gonum.org/v1/gonum/mat"
)

// Defaults of a request.
const (
	DefaultK      = 20
	DefaultWindow = 200
	DefaultVoters = 3
	// DefaultMaxFullRank is the largest window fitted by a full-rank
	// learner; a larger one gets the low-rank form of rank
	// DefaultFallbackRank. A full-rank fit costs about n^3 per iteration,
	// so doubling the window costs eight times as much (timings in
	// docs/evaluation.md).
	DefaultMaxFullRank  = 300
	DefaultFallbackRank = 30
)

// ErrRequest is wrapped by the errors of a request the engine cannot run
// (a negative k or window); the server rejects those before.
var ErrRequest = errors.New("search: bad request")

// ErrLearnerDeadline is wrapped (with context.DeadlineExceeded) by the error
// of a fit that ran out of Options.LearnerTimeout.
var ErrLearnerDeadline = errors.New("search: learner deadline")

// IsBadInput reports whether err was caused by the request (its query, its
// re-ranking options, or a window its learner cannot fit), not by the
// engine: a client error.
func IsBadInput(err error) bool {
	return errors.Is(err, ErrRequest) || errors.Is(err, index.ErrQuery) ||
		errors.Is(err, rerank.ErrOptions) || errors.Is(err, learners.ErrInput)
}

// Options configure an Engine. Zero values take the defaults.
type Options struct {
	// Window is the candidate window of a request that gives none
	// (DefaultWindow); it is widened to k when k is larger.
	Window int
	// KernelTTL is how long a learned kernel is kept (24 h): it depends only
	// on the window, which a corpus change replaces anyway.
	KernelTTL time.Duration
	// RankingTTL is how long the ranking of a request is kept (1 h).
	RankingTTL time.Duration
	// PrecomputedTTL is how long a ranking stored by Precompute is kept
	// (24 h): until the next precomputation, run daily or more often.
	PrecomputedTTL time.Duration
	// MaxFullRank is the largest window a full-rank learner fits
	// (DefaultMaxFullRank); above it the learner's low-rank form of rank
	// FallbackRank (DefaultFallbackRank) fits it, and rerank.warning says so.
	MaxFullRank, FallbackRank int
	// Expensive bounds the expensive kernel computations (rerank.Plan's
	// Expensive) running at once; nil: no bound. Cached kernels and cheap
	// ones never wait for it.
	Expensive *admission.Gate
	// LearnerTimeout bounds every learner fit, within the request's own
	// deadline (0: only the request's).
	LearnerTimeout time.Duration
}

func (o *Options) fill() {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.KernelTTL, 24*time.Hour)
	def(&o.RankingTTL, time.Hour)
	def(&o.PrecomputedTTL, 24*time.Hour)
	if o.MaxFullRank <= 0 {
		o.MaxFullRank = DefaultMaxFullRank
	}
	if o.FallbackRank <= 0 {
		o.FallbackRank = DefaultFallbackRank
	}
}

// Engine runs searches over an index, through a cache. It is safe for
// concurrent use.
type Engine struct {
	ix  *index.Index
	ld  *cache.Loader
	opt Options
	// selection is SelectDefault's choice of the default re-ranker (nil:
	// none ran).
	selection atomic.Pointer[Selection]
	// plans and rankings keep what a repeated request would compute again:
	// its resolved re-ranking, and its ranking decoded from the cache.
	plans    *memo[*rerank.Plan]
	rankings *memo[decoded]
}

// New returns an engine over ix. ld may be nil: nothing is cached (every
// response says "off") and queries are not counted.
func New(ix *index.Index, ld *cache.Loader, opt Options) *Engine {
	opt.fill()
	return &Engine{ix: ix, ld: ld, opt: opt, plans: newMemo[*rerank.Plan](memoSize), rankings: newMemo[decoded](memoSize)}
}

// CorpusVersion is the version of the corpus searched (index.Version):
// every cached ranking and kernel is keyed by it.
func (e *Engine) CorpusVersion() string { return e.ix.Version() }

// Loader returns the engine's cache loader (nil: caching off).
func (e *Engine) Loader() *cache.Loader { return e.ld }

// Request is one search. The caller checks its ranges (the server has the
// limits); the engine rejects what depends on the corpus and the
// strategies, with errors for which IsBadInput is true.
type Request struct {
	Query  string
	K      int   // results returned (0: DefaultK)
	Window int   // candidates re-ranked (0: the engine's window, widened to K)
	Seed   int64 // draws the order of the text stage's tied scores
	Rerank rerank.Options
}

// DefaultRequest is the search for q with every default, as the server runs
// a request that gives only q.
func DefaultRequest(q string) Request {
	return Request{Query: q, Rerank: rerank.Options{Voters: DefaultVoters}}
}

// Result is the answer to a search. It encodes to the JSON the server
// sends (Trace is left out).
type Result struct {
	Query   string  `json:"query"`
	TotalMS float64 `json:"total_ms"`
	// TextMS is the text stage: the tag search and loading the candidates.
	TextMS float64 `json:"text_ms"`
	Rerank Info    `json:"rerank"`
	Total  int     `json:"total"`  // images matching the query
	Window int     `json:"window"` // candidates re-ranked
	// Results are shared with the other searches of the same request that
	// the same process answers from the cache: read them, do not modify
	// them.
	Results []Hit `json:"results"`
	// Trace is what this search did, for the server's metrics.
	Trace Trace `json:"-"`
}

// Info is how the ranking was computed and where it came from.
type Info struct {
	// Cache is the ranking cache's status: hit (the text stage, the kernel
	// and VisualRank did not run: no timings), miss, or off.
	Cache cache.Status `json:"cache"`
	// KernelCache is the kernel cache's status when this request used a
	// kernel: hit or miss for a learned kernel, off for a fixed kernel or
	// without a cache. It is empty when it used none (raw, fewer than three
	// candidates to rank, a ranking hit, or a ranking another request was
	// computing).
	KernelCache cache.Status `json:"kernel_cache,omitempty"`
	// KernelMS and RankMS are the times of the kernel and of VisualRank in
	// this request (absent when they did not run).
	KernelMS float64 `json:"kernel_ms,omitempty"`
	RankMS   float64 `json:"rank_ms,omitempty"`
	rerank.Info
	// Decision is the per-query decision that chose the re-ranker of a
	// request that named none (absent: no decision is adopted, or the
	// request named its re-ranker).
	Decision *decision.Decision `json:"decision,omitempty"`
}

// Hit is one result.
type Hit struct {
	Rank      int      `json:"rank"`
	ID        string   `json:"id"`
	Title     string   `json:"title,omitempty"`
	Tags      []string `json:"tags"`
	Thumbnail string   `json:"thumbnail,omitempty"` // the API path of its thumbnail
	rerank.Result
}

// Trace is what one search did: what differs between two identical
// requests (the stages' times are zero for those that did not run).
type Trace struct {
	Strategy                string
	Cache, KernelCache      cache.Status // as in Info
	Text, Kernel, Rank, All time.Duration
}

// Search runs req: from the ranking cache when it holds the answer,
// otherwise through one straight pipeline (see compute), storing the
// ranking. It counts the query.
func (e *Engine) Search(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	p, err := e.plan(req)
	if err != nil {
		return Result{}, err
	}
	if c := e.ld.Cache(); c != nil {
		// A count lost to a failing backend only makes the query look less
		// frequent than it is.
		_ = c.Incr(ctx, QuerySet, p.query)
	}
	t := Trace{Strategy: p.rr.Options().Strategy}
	r, st, err := e.fetchRanking(ctx, p, e.opt.RankingTTL, &t)
	if err != nil {
		return Result{}, err
	}
	t.Cache = st
	if r.Decision != nil {
		t.Strategy = r.Decision.Strategy // the metrics count the re-ranker the decision chose
	}
	t.All = time.Since(start)
	info := Info{Cache: t.Cache, KernelCache: t.KernelCache, KernelMS: ms(t.Kernel), RankMS: ms(t.Rank), Info: r.Rerank, Decision: r.Decision}
	return Result{Query: req.Query, TotalMS: ms(t.All), TextMS: ms(t.Text), Rerank: info,
		Total: r.Total, Window: r.Window, Results: r.Results, Trace: t}, nil
}

// plan is a request in normal form: defaults filled in, the query in
// normal form, the options validated, the corpus version read (before the
// text stage, so that what is computed is never stored under a newer
// version than it saw).
type plan struct {
	query     string
	k, window int
	seed      int64
	rr        *rerank.Plan
	version   string
	// fullRank is the engine's full-rank window and fallback rank, which
	// change the ranking of a large window.
	fullRank string
	// decide, when set, chooses the re-ranker from the window (rr is then
	// the single served choice, for the other options); decideKey is its
	// fingerprint.
	decide    *decision.Rule
	decideKey string
}

func (e *Engine) plan(req Request) (*plan, error) {
	if req.K < 0 || req.Window < 0 {
		return nil, fmt.Errorf("%w: k %d and window %d must not be negative", ErrRequest, req.K, req.Window)
	}
	q, err := e.ix.NormalizeQuery(req.Query)
	if err != nil {
		return nil, err
	}
	decide, decideKey := e.decide(req)
	if req.Rerank.Strategy == "" {
		// The default re-ranker, with SelectDefault's parameters unless the request gives its own.
		strategy, params := e.defaultRerank()
		req.Rerank.Strategy = strategy
		if len(req.Rerank.Params) == 0 {
			req.Rerank.Params = params
		}
	}
	rr, err := e.rerankPlan(req.Rerank)
	if err != nil {
		return nil, err
	}
	p := &plan{query: q, k: req.K, window: req.Window, seed: req.Seed, rr: rr, version: e.ix.Version(),
		fullRank: fmt.Sprintf("%d/%d", e.opt.MaxFullRank, e.opt.FallbackRank), decide: decide, decideKey: decideKey}
	if p.k == 0 {
		p.k = DefaultK
	}
	if p.window == 0 {
		p.window = max(e.opt.Window, p.k)
	}
	return p, nil
}

// memoSize bounds the plans and decoded rankings an engine keeps: a few
// megabytes of rankings of 20 hits.
const memoSize = 1024

// rerankPlan resolves o once per engine: a plan is immutable and depends
// on nothing but o (and the registry, fixed after start-up).
func (e *Engine) rerankPlan(o rerank.Options) (*rerank.Plan, error) {
	k := o.Strategy + "\x00" + string(o.Params) + "\x00" + o.Prior + "\x00" + o.Affinity + "\x00" +
		strconv.FormatFloat(o.Damping, 'g', -1, 64) + "\x00" + strconv.Itoa(o.Voters)
	if p, ok := e.plans.get(k); ok {
		return p, nil
	}
	p, err := rerank.NewPlan(o)
	if err == nil {
		e.plans.put(k, p)
	}
	return p, err
}

// ranking is the part of a Result that the cache stores: all but the
// request's own fields.
type ranking struct {
	Rerank   rerank.Info        `json:"rerank"`
	Decision *decision.Decision `json:"decision,omitempty"`
	Total    int                `json:"total"`
	Window   int                `json:"window"`
	Results  []Hit              `json:"results"`
}

// compute runs the pipeline of p, recording its stages in t: the window
// (the text stage and the candidates' docs and features, from one
// snapshot), the kernel (through the kernel cache for a learned one), then
// VisualRank and the hits with their explanations. Each stage hands its
// output to the next; none calls back into another.
func (e *Engine) compute(ctx context.Context, p *plan, t *Trace) (*ranking, error) {
	start := time.Now()
	w, err := e.Candidates(ctx, p.query, p.window, p.seed)
	if err != nil {
		return nil, err
	}
	t.Text = time.Since(start)
	rr, dec := p.rr, (*decision.Decision)(nil)
	if p.decide != nil {
		d := p.decide.Decide(decision.Measure(w.Candidates))
		o := rr.Options()
		o.Strategy, o.Params = d.Strategy, d.Params
		if rr, err = e.rerankPlan(o); err != nil {
			return nil, err
		}
		dec = &d
	}
	rr, fellBack, err := e.bounded(rr, len(w.Candidates))
	if err != nil {
		return nil, err
	}
	info := rerank.Info{Strategy: rr.Options().Strategy, Prior: rr.Options().Prior, Affinity: rr.Options().Affinity}
	win := rr.Split(w.Candidates)
	var k *mat.SymDense
	if rr.Votes(win) {
		start = time.Now()
		if k, info.Learner, t.KernelCache, err = e.kernel(ctx, p.version, rr, win); err != nil {
			return nil, err
		}
		t.Kernel = time.Since(start)
	}
	start = time.Now()
	results, iter := rr.Rank(k, win)
	if k != nil {
		t.Rank = time.Since(start)
	}
	info.Iterations = iter
	info.Warning = strings.Join(slices.DeleteFunc([]string{fellBack, rr.Warning(info.Learner)}, func(s string) bool { return s == "" }), "; ")
	r := &ranking{Rerank: info, Decision: dec, Total: w.Total, Window: len(w.Candidates), Results: make([]Hit, 0, min(p.k, len(results)))}
	for i, res := range results[:min(p.k, len(results))] {
		d := w.Docs[w.pos[res.ID]]
		h := Hit{Rank: i + 1, ID: res.ID, Title: d.Title, Tags: d.Tags, Result: res}
		if d.HasImage() {
			h.Thumbnail = "/v1/images/" + url.PathEscape(res.ID) + "/thumbnail"
		}
		r.Results = append(r.Results, h)
	}
	return r, nil
}

// Window is the text stage's answer to a query.
type Window struct {
	// Candidates are the top matches in text order, ready to re-rank.
	Candidates []rerank.Candidate
	// Docs are their stored fields and features, in the same order (a doc
	// deleted since the tag search is a zero Doc).
	Docs  []index.Doc
	Total int            // images matching the query
	pos   map[string]int // candidate id -> its index
}

// Candidates runs the text stage: the top window matches of q by tag
// search (seed draws the order of tied scores), with what the re-ranker
// needs of each, read from one snapshot: its text score, tf-idf tag vector
// and visual features.
func (e *Engine) Candidates(ctx context.Context, q string, window int, seed int64) (*Window, error) {
	hits, total, err := e.ix.Search(ctx, q, window, seed)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	docs, err := e.ix.Window(ids)
	if err != nil {
		return nil, err
	}
	n := int(e.ix.Count())
	w := &Window{Candidates: make([]rerank.Candidate, len(hits)), Docs: docs, Total: total, pos: make(map[string]int, len(hits))}
	for i, h := range hits {
		w.Candidates[i] = rerank.NewCandidate(h.ID, h.Score, docs[i].Tags, docs[i].Features, n, e.ix.DocFreq)
		w.Candidates[i].ImageHash = docs[i].ImageSHA256
		w.pos[h.ID] = i
	}
	return w, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
