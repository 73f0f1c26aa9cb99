// Package search is the image search facade: it owns the whole pipeline of
// a query (the text stage's candidate window, the kernel of the window,
// VisualRank with its explanation, the cut at k) and reads and writes it
// through the cache. The server, the evaluation and the job worker call an
// Engine; nothing else assembles candidates or re-ranks them for a search.
//
// Two things are cached, both keyed by the corpus version of the index, so
// adding, replacing or deleting an image makes every older entry
// unreachable without a purge:
//
//   - the ranking of a request (every parameter that changes the answer,
//     with the query in normal form): a repeated search skips the text
//     stage and the re-ranking;
//   - the kernel of a candidate window when a learner fits it (npk): the
//     same window re-ranked with another k, prior, affinity or damping skips
//     the fit. Fixed kernels (text, linear, poly, rbf, intersection) are
//     computed: they cost about what fetching them does (bench_test.go).
//
// Every search counts its query; Precompute stores the rankings of the most
// frequent ones ahead of the next request.
package search

import (
	"bytes"
	"context"
	"encoding/json"
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
)

// Defaults of a request.
const (
	DefaultK      = 20
	DefaultWindow = 200
	DefaultVoters = 3
	// DefaultMaxFullRank is the largest window fitted by a full-rank
	// learner; a larger one gets the low-rank form of rank
	// DefaultFallbackRank. Full-rank HSIC-NPK costs about n^3 per iteration:
	// 70-250 ms at 200 candidates on this machine, 8 times that at 400.
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
}

// New returns an engine over ix. ld may be nil: nothing is cached (every
// response says "off") and queries are not counted.
func New(ix *index.Index, ld *cache.Loader, opt Options) *Engine {
	opt.fill()
	return &Engine{ix: ix, ld: ld, opt: opt}
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

// Response is the answer to a search, as the server sends it.
type Response struct {
	Query   string  `json:"query"`
	TotalMS float64 `json:"total_ms"`
	// TextMS is the text stage: the tag search and loading the candidates.
	TextMS  float64 `json:"text_ms"`
	Rerank  Info    `json:"rerank"`
	Total   int     `json:"total"`  // images matching the query
	Window  int     `json:"window"` // candidates re-ranked
	Results []Hit   `json:"results"`
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
// requests.
type Trace struct {
	Strategy                string
	Cache, KernelCache      cache.Status // as in Info
	Text, Kernel, Rank, All time.Duration
}

// Search runs req (see SearchJSON) and returns the response decoded.
func (e *Engine) Search(ctx context.Context, req Request) (*Response, error) {
	b, _, err := e.SearchJSON(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := &Response{}
	if err := json.Unmarshal(b, resp); err != nil {
		return nil, fmt.Errorf("search: response: %w", err)
	}
	return resp, nil
}

// SearchJSON runs req and returns the JSON of its Response: from the
// ranking cache when it holds the answer, otherwise through the text stage,
// the kernel (from the kernel cache for a learned one) and VisualRank,
// storing the ranking. It counts the query.
//
// The cache holds the ranking as the JSON the response carries, and a hit
// serves those bytes as they are, with this request's own fields (the
// query as given, the timings, the cache statuses) written in front: a hit
// costs no decoding or encoding of the results.
func (e *Engine) SearchJSON(ctx context.Context, req Request) ([]byte, Trace, error) {
	start := time.Now()
	p, err := e.plan(req)
	if err != nil {
		return nil, Trace{}, err
	}
	if c := e.ld.Cache(); c != nil {
		// A count lost to a failing backend only makes the query look less
		// frequent than it is.
		_ = c.Incr(ctx, QuerySet, p.query)
	}
	t := Trace{Strategy: p.rr.Options().Strategy}
	v, st, err := e.fetchRanking(ctx, p, e.opt.RankingTTL, &t)
	if err != nil {
		return nil, Trace{}, err
	}
	t.Cache = st
	t.All = time.Since(start)
	return response(req.Query, t, v.Bytes)
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
}

func (e *Engine) plan(req Request) (*plan, error) {
	if req.K < 0 || req.Window < 0 {
		return nil, fmt.Errorf("%w: k %d and window %d must not be negative", ErrRequest, req.K, req.Window)
	}
	q, err := e.ix.NormalizeQuery(req.Query)
	if err != nil {
		return nil, err
	}
	if req.Rerank.Strategy == "" {
		// The default re-ranker, with SelectDefault's parameters unless the request gives its own.
		strategy, params := e.defaultRerank()
		req.Rerank.Strategy = strategy
		if len(req.Rerank.Params) == 0 {
			req.Rerank.Params = params
		}
	}
	rr, err := rerank.NewPlan(req.Rerank)
	if err != nil {
		return nil, err
	}
	p := &plan{query: q, k: req.K, window: req.Window, seed: req.Seed, rr: rr, version: e.ix.Version(),
		fullRank: fmt.Sprintf("%d/%d", e.opt.MaxFullRank, e.opt.FallbackRank)}
	if p.k == 0 {
		p.k = DefaultK
	}
	if p.window == 0 {
		p.window = max(e.opt.Window, p.k)
	}
	return p, nil
}

// ranking is the part of a Response that the cache stores: all but the
// request's own fields (the rerank timings are left zero, so omitted).
type ranking struct {
	Rerank  rerank.Info `json:"rerank"`
	Total   int         `json:"total"`
	Window  int         `json:"window"`
	Results []Hit       `json:"results"`
}

// compute runs the pipeline of p, recording its stages in t, and returns
// the JSON of its ranking.
func (e *Engine) compute(ctx context.Context, p *plan, t *Trace) ([]byte, error) {
	start := time.Now()
	w, err := e.Candidates(ctx, p.query, p.window, p.seed)
	if err != nil {
		return nil, err
	}
	t.Text = time.Since(start)
	rr, warning, err := e.bounded(p.rr, len(w.Candidates))
	if err != nil {
		return nil, err
	}
	results, info, err := rr.Rerank(ctx, w.Candidates, e.kernel(p.version, rr, &t.KernelCache))
	if err != nil {
		return nil, err
	}
	if warning != "" {
		info.Warning = strings.Join(slices.DeleteFunc([]string{warning, info.Warning}, func(s string) bool { return s == "" }), "; ")
	}
	t.Kernel, t.Rank = info.KernelTime, info.RankTime
	info.KernelTime, info.RankTime = 0, 0
	// Keyed by the hit's id: a doc deleted since the search has a zero Doc.
	docs := make(map[string]*index.Doc, len(w.Docs))
	for i, c := range w.Candidates {
		docs[c.ID] = &w.Docs[i]
	}
	r := ranking{Rerank: info, Total: w.Total, Window: len(w.Candidates), Results: make([]Hit, 0, min(p.k, len(results)))}
	for i, res := range results[:min(p.k, len(results))] {
		d := docs[res.ID]
		h := Hit{Rank: i + 1, ID: res.ID, Title: d.Title, Tags: d.Tags, Result: res}
		if d.HasImage() {
			h.Thumbnail = "/v1/images/" + url.PathEscape(res.ID) + "/thumbnail"
		}
		r.Results = append(r.Results, h)
	}
	return json.Marshal(r)
}

// rankingHead is how the JSON of a ranking begins: a response splices its
// own fields in after it, into the rerank object.
const rankingHead = `{"rerank":{`

// response returns the JSON of the Response to a request for q: the
// request's own fields, then the stored ranking.
func response(q string, t Trace, stored []byte) ([]byte, Trace, error) {
	rest, ok := bytes.CutPrefix(stored, []byte(rankingHead))
	if !ok {
		return nil, t, fmt.Errorf("search: stored ranking does not begin with %s", rankingHead)
	}
	query, err := json.Marshal(q)
	if err != nil {
		return nil, t, err
	}
	b := make([]byte, 0, len(stored)+len(query)+160)
	b = append(b, `{"query":`...)
	b = append(b, query...)
	b = append(b, `,"total_ms":`...)
	b = strconv.AppendFloat(b, ms(t.All), 'f', -1, 64)
	b = append(b, `,"text_ms":`...)
	b = strconv.AppendFloat(b, ms(t.Text), 'f', -1, 64)
	b = append(b, `,"rerank":{"cache":"`...)
	b = append(b, t.Cache...)
	b = append(b, '"')
	if t.KernelCache != "" {
		b = append(b, `,"kernel_cache":"`...)
		b = append(b, t.KernelCache...)
		b = append(b, '"')
	}
	if t.Kernel > 0 {
		b = append(b, `,"kernel_ms":`...)
		b = strconv.AppendFloat(b, ms(t.Kernel), 'f', -1, 64)
	}
	if t.Rank > 0 {
		b = append(b, `,"rank_ms":`...)
		b = strconv.AppendFloat(b, ms(t.Rank), 'f', -1, 64)
	}
	b = append(b, ',')
	return append(b, rest...), t, nil
}

// Window is the text stage's answer to a query.
type Window struct {
	// Candidates are the top matches in text order, ready to re-rank.
	Candidates []rerank.Candidate
	// Docs are their stored fields (without features), in the same order.
	Docs  []index.Doc
	Total int // images matching the query
}

// Candidates runs the text stage: the top window matches of q by tag
// search (seed draws the order of tied scores), with what the re-ranker
// needs of each: its text score, tf-idf tag vector and visual features.
func (e *Engine) Candidates(ctx context.Context, q string, window int, seed int64) (*Window, error) {
	hits, total, err := e.ix.Search(ctx, q, window, seed)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	docs, err := e.ix.GetMany(ids)
	if err != nil {
		return nil, err
	}
	feats, err := e.ix.Features(ids)
	if err != nil {
		return nil, err
	}
	n := int(e.ix.Count())
	w := &Window{Candidates: make([]rerank.Candidate, len(hits)), Docs: docs, Total: total}
	for i, h := range hits {
		w.Candidates[i] = rerank.NewCandidate(h.ID, h.Score, docs[i].Tags, feats[i], n, e.ix.DocFreq)
	}
	return w, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
