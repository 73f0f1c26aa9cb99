package cache

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/maypok86/otter/v2"
)

// DefaultBytes is the default byte budget of the in-process cache.
const DefaultBytes = 256 << 20

// Memory is the in-process backend: an otter cache (W-TinyLFU eviction)
// weighted by value size, so it holds at most its byte budget, with a TTL
// per entry. Locks and counters are the process's own.
type Memory struct {
	c *otter.Cache[string, entry]

	mu     sync.Mutex
	locks  map[string]time.Time // name -> expiry
	counts map[string]map[string]int64
	keep   int // members a counter set keeps (TopKeep)
}

type entry struct {
	val []byte
	ttl time.Duration
}

// noExpiry stands for "no TTL": otter takes a duration per entry.
const noExpiry = 100 * 365 * 24 * time.Hour

// NewMemory returns an in-process cache holding at most budget bytes of
// keys and values (DefaultBytes when budget <= 0).
func NewMemory(budget int64) (*Memory, error) {
	if budget <= 0 {
		budget = DefaultBytes
	}
	c, err := otter.New(&otter.Options[string, entry]{
		MaximumWeight:    uint64(budget),
		Weigher:          func(k string, e entry) uint32 { return weight(k, e.val) },
		ExpiryCalculator: otter.ExpiryWritingFunc(func(e otter.Entry[string, entry]) time.Duration { return e.Value.ttl }),
	})
	if err != nil {
		return nil, err
	}
	return &Memory{c: c, locks: map[string]time.Time{}, counts: map[string]map[string]int64{}, keep: TopKeep}, nil
}

// weight is what an entry counts against the budget.
func weight(key string, val []byte) uint32 {
	return uint32(min(len(key)+len(val)+64, 1<<32-1))
}

// Get implements Cache. The bytes returned are the cache's: callers must
// not modify them.
func (m *Memory) Get(_ context.Context, key string) ([]byte, error) {
	e, ok := m.c.GetIfPresent(key)
	if !ok {
		return nil, ErrMiss
	}
	return e.val, nil
}

// Set implements Cache. A value larger than the budget is not kept.
func (m *Memory) Set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	if uint64(weight(key, val)) > m.c.GetMaximum() {
		// otter would hold it until its next eviction; the key's old
		// value goes too, as a Set replaces it.
		m.c.Invalidate(key)
		return nil
	}
	if ttl <= 0 {
		ttl = noExpiry
	}
	m.c.Set(key, entry{val: slices.Clone(val), ttl: ttl})
	return nil
}

// Delete implements Cache.
func (m *Memory) Delete(_ context.Context, key string) error {
	m.c.Invalidate(key)
	return nil
}

// Lock implements Cache with a lock of this process.
func (m *Memory) Lock(_ context.Context, name string, ttl time.Duration) (func(), bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if exp, held := m.locks[name]; held && now.Before(exp) {
		return nil, false, nil
	}
	exp := now.Add(ttl)
	m.locks[name] = exp
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.locks[name] == exp {
			delete(m.locks, name)
		}
	}, true, nil
}

// Incr implements Cache.
func (m *Memory) Incr(_ context.Context, set, member string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.counts[set]
	if s == nil {
		s = map[string]int64{}
		m.counts[set] = s
	}
	s[member]++
	if len(s) > m.keep+m.keep/10 {
		// As Redis does: keep the highest counts, so the set stays bounded.
		for _, c := range sortedCounts(s)[m.keep:] {
			delete(s, c.Member)
		}
	}
	return nil
}

// sortedCounts returns the members of s, highest count first.
func sortedCounts(s map[string]int64) []Count {
	out := make([]Count, 0, len(s))
	for k, v := range s {
		out = append(out, Count{k, v})
	}
	SortCounts(out)
	return out
}

// Top implements Cache.
func (m *Memory) Top(_ context.Context, set string, n int) ([]Count, error) {
	m.mu.Lock()
	out := sortedCounts(m.counts[set])
	m.mu.Unlock()
	return out[:max(min(n, len(out)), 0)], nil
}

// SortCounts orders counts highest first, ties by member.
func SortCounts(c []Count) {
	slices.SortFunc(c, func(a, b Count) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Member, b.Member)
	})
}

// Ping implements Cache.
func (m *Memory) Ping(context.Context) error { return nil }

// Backend implements Cache.
func (m *Memory) Backend() string { return "memory" }

// Close implements Cache.
func (m *Memory) Close() error {
	m.c.InvalidateAll()
	m.c.StopAllGoroutines()
	return nil
}

// Weight returns the bytes held (keys, values and a per-entry overhead).
func (m *Memory) Weight() uint64 { return m.c.WeightedSize() }
