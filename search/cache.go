package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	kindKernel  = "kernel"
	// kindStats holds a learned kernel's learner statistics, so that a
	// kernel hit reports them (and the warning of an unconverged fit) as the
	// miss did.
	kindStats = "kernel-stats"
)

// rankingKey names the ranking of p: every parameter that changes the
// response, and the query in normal form with the corpus version.
func (p *plan) rankingKey() cache.Key {
	o := p.rr.Options()
	return cache.Key{
		Kind:    kindRanking,
		Learner: o.Strategy,
		Params: cache.HashStrings(p.rr.Params(), o.Prior, o.Affinity, strconv.FormatFloat(o.Damping, 'g', -1, 64),
			strconv.Itoa(o.Voters), strconv.Itoa(p.k), strconv.Itoa(p.window), strconv.FormatInt(p.seed, 10), p.fullRank),
		Input: cache.HashStrings(p.query, p.version),
	}
}

// fetchRanking returns the ranking of p (the JSON of a ranking) from the
// cache, or computes it, recording its stages in t, and stores it for ttl.
func (e *Engine) fetchRanking(ctx context.Context, p *plan, ttl time.Duration, t *Trace) (cache.Value, cache.Status, error) {
	return e.ld.Fetch(ctx, p.rankingKey(), ttl, func(ctx context.Context) (cache.Value, error) {
		b, err := e.compute(ctx, p, t)
		return cache.Value{Kind: cache.Bytes, Shape: []int{len(b)}, Bytes: b}, err
	})
}

// kernel returns the KernelFunc of rr over the corpus version, setting
// *status to the kernel cache's status. A learned kernel goes through the
// cache as float32, and is converted from float32 on a miss and with the
// cache off too, so that the ranking never depends on where the kernel came
// from.
func (e *Engine) kernel(version string, rr *rerank.Plan, status *cache.Status) rerank.KernelFunc {
	if rr.Learner() == "" {
		return func(ctx context.Context, ranked []rerank.Candidate) (*mat.SymDense, *learners.Stats, error) {
			*status = cache.Off
			return e.fit(ctx, rr, ranked)
		}
	}
	return func(ctx context.Context, ranked []rerank.Candidate) (*mat.SymDense, *learners.Stats, error) {
		parts := make([]string, 0, len(ranked)+1)
		parts = append(parts, version)
		for _, c := range ranked {
			parts = append(parts, c.ID)
		}
		key := cache.Key{Kind: kindKernel, Learner: rr.Learner(), Params: cache.HashStrings(rr.Params()), Input: cache.HashStrings(parts...)}
		var stats *learners.Stats
		v, st, err := e.ld.Fetch(ctx, key, e.opt.KernelTTL, func(ctx context.Context) (cache.Value, error) {
			k, s, err := e.fit(ctx, rr, ranked)
			if err != nil {
				return cache.Value{}, err
			}
			stats = s
			e.putStats(ctx, key, s)
			return float32Value(k), nil
		})
		if err != nil {
			return nil, nil, err
		}
		n := len(ranked)
		if len(v.Shape) != 2 || v.Shape[0] != n || v.Shape[1] != n || len(v.F32) != n*n {
			return nil, nil, fmt.Errorf("search: cached kernel %s has shape %v, want %d x %d", key, v.Shape, n, n)
		}
		*status = st
		if stats == nil { // computed by another request, or a hit
			stats = e.getStats(ctx, key)
		}
		return symDense(n, v.F32), stats, nil
	}
}

// fit computes the kernel of ranked with rr: an expensive one (Plan.Expensive)
// in a slot of the engine's gate, a learned one within the learner deadline.
func (e *Engine) fit(ctx context.Context, rr *rerank.Plan, ranked []rerank.Candidate) (*mat.SymDense, *learners.Stats, error) {
	if rr.Expensive(len(ranked), e.ix.Dim()) {
		release, err := e.opt.Expensive.Acquire(ctx)
		if err != nil {
			return nil, nil, err
		}
		defer release()
	}
	if e.opt.LearnerTimeout <= 0 || rr.Learner() == "" {
		return rr.Kernel(ctx, ranked)
	}
	fitCtx, cancel := context.WithTimeout(ctx, e.opt.LearnerTimeout)
	defer cancel()
	k, s, err := rr.Kernel(fitCtx, ranked)
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

// float32Value is k as a cached value: n x n float32, row-major.
func float32Value(k *mat.SymDense) cache.Value {
	n := k.SymmetricDim()
	v := cache.Value{Kind: cache.Float32, Shape: []int{n, n}, F32: make([]float32, n*n)}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			x := float32(k.At(i, j))
			v.F32[i*n+j], v.F32[j*n+i] = x, x
		}
	}
	return v
}

func symDense(n int, f []float32) *mat.SymDense {
	d := make([]float64, len(f))
	for i, x := range f {
		d[i] = float64(x)
	}
	return mat.NewSymDense(n, d)
}

func statsKey(k cache.Key) string {
	k.Kind = kindStats
	return k.String()
}

// putStats stores a kernel's learner statistics beside it. A failure only
// costs a later kernel hit its statistics.
func (e *Engine) putStats(ctx context.Context, kernel cache.Key, s *learners.Stats) {
	c := e.ld.Cache()
	if c == nil || s == nil {
		return
	}
	js, err := json.Marshal(s)
	if err != nil {
		return
	}
	if b, err := cache.Encode(cache.Value{Kind: cache.Bytes, Shape: []int{len(js)}, Bytes: js}); err == nil {
		_ = c.Set(ctx, statsKey(kernel), b, e.opt.KernelTTL)
	}
}

// getStats returns the statistics stored beside a kernel, or nil.
func (e *Engine) getStats(ctx context.Context, kernel cache.Key) *learners.Stats {
	c := e.ld.Cache()
	if c == nil {
		return nil
	}
	b, err := c.Get(ctx, statsKey(kernel))
	if err != nil {
		return nil
	}
	v, err := cache.Decode(b)
	if err != nil || v.Kind != cache.Bytes {
		return nil
	}
	s := &learners.Stats{}
	if json.Unmarshal(v.Bytes, s) != nil {
		return nil
	}
	return s
}
