package recommend

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/maypok86/otter/v2"

	"github.com/kernelrank/kernelrank/learners"
)

// DefaultTopK is the length of the precomputed lists of a retrained model.
const DefaultTopK = 50

// precomputed holds every user's ranked friend candidates and groups.
type precomputed struct{ friends, groups topList }

// topList is one ranking per user: row u holds u's best k items, best
// first, -1 past the last candidate, and their scores.
type topList struct {
	k      int
	items  []int32
	scores []float64
}

// row returns the first k (<= l.k) items of u's row and their scores.
func (l *topList) row(u, k int) ([]int, []float64) {
	items, scores := l.items[u*l.k:u*l.k+k], l.scores[u*l.k:u*l.k+k]
	out := make([]int, 0, k)
	for _, it := range items {
		if it < 0 {
			break
		}
		out = append(out, int(it))
	}
	return out, scores[:len(out)]
}

// set stores u's ranking.
func (l *topList) set(u int, items []int, scores []float64) {
	row := l.items[u*l.k : (u+1)*l.k]
	for r := range row {
		row[r] = -1
	}
	for r, it := range items {
		row[r] = int32(it)
	}
	copy(l.scores[u*l.k:], scores)
}

func newTopList(n, k int) topList {
	l := topList{k: k, items: make([]int32, n*k), scores: make([]float64, n*k)}
	for i := range l.items {
		l.items[i] = -1
	}
	return l
}

// WithTop returns a copy of the model with every user's top k friend
// candidates and top k groups (fewer when there are fewer) precomputed:
// RecommendFriends and RecommendGroups with k or fewer then read them and
// compute only the explanations, with the same answers. It ranks on all
// CPUs, checking ctx; progress (may be nil) gets the fraction of users
// done.
func (m *Model) WithTop(ctx context.Context, k int, progress func(fraction float64)) (*Model, error) {
	top, err := m.rankRange(ctx, 0, m.ds.N(), k, progress)
	if err != nil {
		return nil, err
	}
	c := *m
	c.top = top
	return &c, nil
}

// rankRange ranks users lo to hi-1 as WithTop does and returns their lists,
// row u-lo for user u: a shard of the precomputation. Friends and groups
// are ranked as a request would rank them, over the candidates only with
// WithCandidates.
func (m *Model) rankRange(ctx context.Context, lo, hi, k int, progress func(fraction float64)) (*precomputed, error) {
	if k < 1 {
		return nil, fmt.Errorf("%w: top k must be at least 1, got %d", learners.ErrInput, k)
	}
	n := m.ds.N()
	if lo < 0 || hi > n || lo > hi {
		return nil, fmt.Errorf("%w: users %d to %d of %d", learners.ErrInput, lo, hi, n)
	}
	top := &precomputed{friends: newTopList(hi-lo, k), groups: newTopList(hi-lo, min(k, len(m.ds.Groups)))}
	var done atomic.Int64
	var report sync.Mutex // one progress call at a time
	err := parallel(ctx, hi-lo, func() *requestBuffers {
		return getBuffers(n, len(m.ds.Groups))
	}, func(b *requestBuffers, r int) {
		if u := lo + r; !m.noData[u] {
			var items []int
			var scores []float64
			if m.candidates != nil {
				items, scores = m.rankCandidates(u, k, b.seen, b.acc)
			} else {
				items, scores = m.rankFriends(u, k, b.users, b.users2)
			}
			top.friends.set(r, items, scores)
			if top.groups.k > 0 {
				// rankFriends left f(u, .) in users for the mklr scorer
				items, scores = m.rankGroupsWith(u, top.groups.k, b, m.candidates == nil && m.scorer == ScorerMKLR)
				top.groups.set(r, items, scores)
			}
		}
		if d := done.Add(1); progress != nil && d%256 == 0 {
			report.Lock()
			progress(float64(d) / float64(hi-lo))
			report.Unlock()
		}
	})
	if err != nil {
		return nil, err
	}
	if progress != nil {
		progress(1)
	}
	return top, nil
}

// TopK returns the length of the precomputed lists (0: none).
func (m *Model) TopK() int {
	if m.top == nil {
		return 0
	}
	return m.top.friends.k
}

// ranked is one user's cached ranking (friends or groups).
type ranked struct {
	items  []int
	scores []float64
}

// onDemand caches the rankings of users that were not precomputed: key
// 2u for u's friends, 2u+1 for u's groups, each the first k.
type onDemand struct {
	k     int
	cache *otter.Cache[int, ranked]
}

// rankedBytes is what a cached ranking of k items weighs: an int and a
// float64 an item, plus the entry's overhead.
func rankedBytes(k int) uint32 { return uint32(16*k + 96) }

// WithCache returns a copy of the model that ranks users on demand (when
// no precomputed list covers a request) and keeps each user's first k
// friends and groups in a cache of at most budget bytes (W-TinyLFU
// eviction): a request for k or fewer items of a cached user costs only
// its explanations' kernel entries (and its typical candidate's, from the
// model's row sums).
// Rankings depend only on the model, so the cache never
// holds a stale one.
func (m *Model) WithCache(budget int64, k int) (*Model, error) {
	if k < 1 || budget < int64(rankedBytes(k)) {
		return nil, fmt.Errorf("%w: a cache of %d bytes cannot hold one ranking of %d", learners.ErrInput, budget, k)
	}
	c, err := otter.New(&otter.Options[int, ranked]{
		MaximumWeight: uint64(budget),
		Weigher:       func(_ int, r ranked) uint32 { return rankedBytes(len(r.items)) },
	})
	if err != nil {
		return nil, err
	}
	cp := *m
	cp.cached = &onDemand{k: k, cache: c}
	return &cp, nil
}

// cachedRanking returns the first k of the ranking under key, computing
// the first max(k, cache's k) with rank and keeping them when the cache's k
// covers k.
func (m *Model) cachedRanking(key, k int, rank func(k int) ([]int, []float64)) ([]int, []float64) {
	c := m.cached
	if c == nil || k > c.k {
		return rank(k)
	}
	r, ok := c.cache.GetIfPresent(key)
	if !ok {
		r.items, r.scores = rank(c.k)
		c.cache.Set(key, r)
	}
	n := min(k, len(r.items))
	return r.items[:n:n], r.scores[:n:n]
}
