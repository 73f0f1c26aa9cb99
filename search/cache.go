package search

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/rerank"
	"gonum.org/v1/gonum/mat"
)

// Kinds of cached values (Key.Kind).
const (
	kindRanking = "ranking"
	// kindKernel holds a learned kernel with its learner's statistics
	// (kernelValue), so that a kernel hit reports them, and the warning of
	// an unconverged fit, as the miss did.
	kindKernel = "kernel+stats"
)

// rankingKey names the ranking of p: every parameter that changes the
// response, and the query in normal form with the corpus version.
func (p *plan) rankingKey() cache.Key {
	o := p.rr.Options()
	learner := o.Strategy
	if p.decide != nil {
		learner = "decision"
	}
	return cache.Key{
		Kind:    kindRanking,
		Learner: learner,
		Params: cache.HashStrings(p.rr.Params()+p.decideKey, o.Prior, o.Affinity, strconv.FormatFloat(o.Damping, 'g', -1, 64),
			strconv.Itoa(o.Voters), strconv.Itoa(p.k), strconv.Itoa(p.window), strconv.FormatInt(p.seed, 10), p.fullRank),
		Input: cache.HashStrings(p.query, p.version),
	}
}

// fetchRanking returns the ranking of p from the cache, or computes it,
// recording its stages in t, and stores it (as JSON) for ttl. A hit
// decodes the stored JSON once per process: the decoded ranking is kept
// (Engine.rankings) and shared by the hits whose bytes are the same.
func (e *Engine) fetchRanking(ctx context.Context, p *plan, ttl time.Duration, t *Trace) (*ranking, cache.Status, error) {
	key := p.rankingKey()
	var computed *ranking
	v, st, err := e.ld.Fetch(ctx, key, ttl, func(ctx context.Context) (cache.Value, error) {
		r, err := e.compute(ctx, p, t)
		if err != nil {
			return cache.Value{}, err
		}
		b, err := json.Marshal(r)
		computed = r
		return cache.Value{Kind: cache.Bytes, Shape: []int{len(b)}, Bytes: b}, err
	})
	if err != nil || computed != nil {
		return computed, st, err
	}
	// A hit, or a ranking another request was computing.
	ks, sum := key.String(), digest(v.Bytes)
	if d, ok := e.rankings.get(ks); ok && d.sum == sum {
		return d.r, st, nil
	}
	r := &ranking{}
	if v.Kind != cache.Bytes || json.Unmarshal(v.Bytes, r) != nil {
		return nil, st, fmt.Errorf("search: cached ranking %s does not decode", ks)
	}
	for i := range r.Results {
		h := &r.Results[i]
		h.Result.ID = h.ID // one "id" in JSON, both ids in a computed ranking
	}
	e.rankings.put(ks, decoded{sum, r})
	return r, st, nil
}

// kernel returns the kernel of w's ranked candidates with rr over the corpus version, the
// learner's statistics (nil for a fixed kernel) and the kernel cache's
// status. A learned kernel goes through the cache as float32, and is
// converted from float32 on a miss and with the cache off too, so that the
// ranking never depends on where the kernel came from; a fixed one is
// computed (Options.KernelTTL says why).
func (e *Engine) kernel(ctx context.Context, version string, rr *rerank.Plan, w rerank.Window) (*mat.SymDense, *learners.Stats, cache.Status, error) {
	if rr.Learner() == "" {
		k, stats, err := e.fit(ctx, rr, w)
		return k, stats, cache.Off, err
	}
	ranked := w.Ranked
	parts := make([]string, 0, len(ranked)+1)
	parts = append(parts, version)
	for _, c := range ranked {
		parts = append(parts, c.ID)
	}
	key := cache.Key{Kind: kindKernel, Learner: rr.Learner(), Params: cache.HashStrings(rr.Params()), Input: cache.HashStrings(parts...)}
	v, st, err := e.ld.Fetch(ctx, key, e.opt.KernelTTL, func(ctx context.Context) (cache.Value, error) {
		k, stats, err := e.fit(ctx, rr, w)
		if err != nil {
			return cache.Value{}, err
		}
		return kernelValue(k, stats), nil
	})
	if err != nil {
		return nil, nil, st, err
	}
	k, stats, err := fromKernelValue(v, len(ranked))
	if err != nil {
		return nil, nil, st, fmt.Errorf("search: cached kernel %s: %w", key, err)
	}
	return k, stats, st, nil
}

// fit computes the kernel of w's ranked candidates with rr: an expensive
// one (Plan.Expensive) in a slot of the engine's gate, a learned one within
// the learner deadline.
func (e *Engine) fit(ctx context.Context, rr *rerank.Plan, w rerank.Window) (*mat.SymDense, *learners.Stats, error) {
	ranked := w.Ranked
	if rr.Expensive(len(ranked), e.ix.Dim()) {
		release, err := e.opt.Expensive.Acquire(ctx)
		if err != nil {
			return nil, nil, err
		}
		defer release()
	}
	if e.opt.LearnerTimeout <= 0 || rr.Learner() == "" {
		return rr.Kernel(ctx, w)
	}
	fitCtx, cancel := context.WithTimeout(ctx, e.opt.LearnerTimeout)
	defer cancel()
	k, s, err := rr.Kernel(fitCtx, w)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return nil, nil, fmt.Errorf("%w: %s took longer than %s on %d candidates (a smaller window or a low rank, params {\"rank\":%d}, costs less): %w",
			ErrLearnerDeadline, rr.Options().Strategy, e.opt.LearnerTimeout, len(ranked), e.opt.FallbackRank, err)
	}
	return k, s, err
}

// bounded returns the plan that re-ranks a window of n: rr, or above the
// full-rank window its low-rank form (rank at most FallbackRank: a larger
// rank costs what full rank does), with the warning that says so.
func (e *Engine) bounded(rr *rerank.Plan, n int) (*rerank.Plan, string, error) {
	if n <= e.opt.MaxFullRank || !rr.RankAbove(e.opt.FallbackRank) {
		return rr, "", nil
	}
	low, err := rr.LowRank(e.opt.FallbackRank)
	if err != nil {
		return nil, "", err
	}
	return low, fmt.Sprintf("a kernel of %d candidates above rank %d is over this server's limit of %d candidates: ranked by the low-rank form of rank %[2]d (params {\"rank\":%[2]d}); a window of at most %[3]d gets the kernel asked for",
		n, e.opt.FallbackRank, e.opt.MaxFullRank), nil
}

// kernelStatsLen is the size of the statistics in front of a cached
// kernel: iterations (int64), objective and gap (float64), converged (a
// byte).
const kernelStatsLen = 8 + 8 + 8 + 1

// kernelValue is a learned kernel k of n points with its learner's
// statistics as one cached value, little-endian: the statistics, then the
// n x n kernel as float32, row-major.
func kernelValue(k *mat.SymDense, s *learners.Stats) cache.Value {
	n := k.SymmetricDim()
	b := make([]byte, kernelStatsLen+4*n*n)
	binary.LittleEndian.PutUint64(b[0:], uint64(s.Iterations))
	binary.LittleEndian.PutUint64(b[8:], math.Float64bits(s.Objective))
	binary.LittleEndian.PutUint64(b[16:], math.Float64bits(s.Gap))
	if s.Converged {
		b[24] = 1
	}
	f := b[kernelStatsLen:]
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			x := math.Float32bits(float32(k.At(i, j)))
			binary.LittleEndian.PutUint32(f[4*(i*n+j):], x)
			binary.LittleEndian.PutUint32(f[4*(j*n+i):], x)
		}
	}
	return cache.Value{Kind: cache.Bytes, Shape: []int{len(b)}, Bytes: b}
}

// fromKernelValue reads kernelValue's kernel of n points and statistics.
func fromKernelValue(v cache.Value, n int) (*mat.SymDense, *learners.Stats, error) {
	if v.Kind != cache.Bytes || len(v.Bytes) != kernelStatsLen+4*n*n {
		return nil, nil, fmt.Errorf("%d bytes of kind %s, want %d of %s", len(v.Bytes), v.Kind, kernelStatsLen+4*n*n, cache.Bytes)
	}
	b := v.Bytes
	s := &learners.Stats{
		Iterations: int(binary.LittleEndian.Uint64(b[0:])),
		Objective:  math.Float64frombits(binary.LittleEndian.Uint64(b[8:])),
		Gap:        math.Float64frombits(binary.LittleEndian.Uint64(b[16:])),
		Converged:  b[24] == 1,
	}
	f := b[kernelStatsLen:]
	d := make([]float64, n*n)
	for i := range d {
		d[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(f[4*i:])))
	}
	return mat.NewSymDense(n, d), s, nil
}
