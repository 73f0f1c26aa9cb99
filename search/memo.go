package search

import (
	"hash/maphash"
	"sync"
)

// memo is a bounded in-process map of values computed from their keys,
// for what is pure given its key: a resolved plan given its options, a
// decoded ranking given its stored bytes. It starts afresh when full (the
// values are recomputed on demand), so that requests with ever new keys
// cannot grow it.
type memo[V any] struct {
	mu  sync.RWMutex
	m   map[string]V
	max int
}

func newMemo[V any](max int) *memo[V] { return &memo[V]{m: map[string]V{}, max: max} }

func (c *memo[V]) get(k string) (V, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

func (c *memo[V]) put(k string, v V) {
	c.mu.Lock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = v
	c.mu.Unlock()
}

// decoded is a ranking decoded from the cached bytes of digest sum: a hit
// whose bytes have that digest reuses it rather than decoding them again.
type decoded struct {
	sum uint64
	r   *ranking
}

var digestSeed = maphash.MakeSeed()

func digest(b []byte) uint64 { return maphash.Bytes(digestSeed, b) }
