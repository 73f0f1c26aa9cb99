package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestCacheContract runs the Cache contract on every backend.
func TestCacheContract(t *testing.T) {
	runContract(t, backends, map[string]func(*testing.T, Cache){
		"GetSetDelete":    testGetSetDelete,
		"TTL":             testTTL,
		"Lock":            testLock,
		"LockExpiry":      testLockExpiry,
		"Counters":        testCounters,
		"CountersBounded": testCountersBounded,
	})
}

func mustGet(t *testing.T, c Cache, key string) []byte {
	t.Helper()
	b, err := c.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return b
}

func mustMiss(t *testing.T, c Cache, key string) {
	t.Helper()
	if b, err := c.Get(context.Background(), key); !errors.Is(err, ErrMiss) {
		t.Fatalf("get %s: %d bytes, %v; want ErrMiss", key, len(b), err)
	}
}

func mustSet(t *testing.T, c Cache, key string, val []byte, ttl time.Duration) {
	t.Helper()
	if err := c.Set(context.Background(), key, val, ttl); err != nil {
		t.Fatalf("set %s: %v", key, err)
	}
}

func testGetSetDelete(t *testing.T, c Cache) {
	ctx := context.Background()
	mustMiss(t, c, "a")
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	mustSet(t, c, "a", all, time.Hour)
	if got := mustGet(t, c, "a"); !slices.Equal(got, all) {
		t.Fatalf("get a: % x", got)
	}
	mustSet(t, c, "a", []byte("second"), time.Hour)
	if got := mustGet(t, c, "a"); string(got) != "second" {
		t.Fatalf("get a after overwrite: %q", got)
	}
	mustSet(t, c, "empty", nil, time.Hour)
	if got := mustGet(t, c, "empty"); len(got) != 0 {
		t.Fatalf("get empty: %q", got)
	}
	if err := c.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	mustMiss(t, c, "a")
	if err := c.Delete(ctx, "never set"); err != nil {
		t.Fatalf("delete of an absent key: %v", err)
	}
	// Many keys: on a cluster they spread over the nodes.
	for i := range 64 {
		mustSet(t, c, fmt.Sprint("k", i), []byte(fmt.Sprint("v", i)), time.Hour)
	}
	for i := range 64 {
		if got := mustGet(t, c, fmt.Sprint("k", i)); string(got) != fmt.Sprint("v", i) {
			t.Fatalf("k%d = %q", i, got)
		}
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
}

func testTTL(t *testing.T, c Cache) {
	mustSet(t, c, "short", []byte("s"), 30*time.Millisecond)
	mustSet(t, c, "long", []byte("l"), time.Hour)
	mustSet(t, c, "forever", []byte("f"), 0)
	eventually(t, "the short TTL expires", func() bool {
		_, err := c.Get(context.Background(), "short")
		return errors.Is(err, ErrMiss)
	})
	mustGet(t, c, "long")
	mustGet(t, c, "forever")
}

func mustLock(t *testing.T, c Cache, name string, ttl time.Duration) func() {
	t.Helper()
	unlock, ok, err := c.Lock(context.Background(), name, ttl)
	if err != nil || !ok {
		t.Fatalf("lock %s: ok %v, %v", name, ok, err)
	}
	return unlock
}

func mustNotLock(t *testing.T, c Cache, name string) {
	t.Helper()
	if _, ok, err := c.Lock(context.Background(), name, time.Minute); err != nil || ok {
		t.Fatalf("lock %s while held: ok %v, %v", name, ok, err)
	}
}

func testLock(t *testing.T, c Cache) {
	unlock := mustLock(t, c, "l", time.Minute)
	mustNotLock(t, c, "l")
	mustLock(t, c, "other", time.Minute)
	// A lock and a value of one name are apart.
	mustSet(t, c, "l", []byte("value"), time.Hour)
	mustNotLock(t, c, "l")
	unlock()
	again := mustLock(t, c, "l", time.Minute)
	if got := mustGet(t, c, "l"); string(got) != "value" {
		t.Errorf("the value of the lock's name: %q", got)
	}
	unlock() // released already: must not release the new holder's lock
	mustNotLock(t, c, "l")
	again()
	mustLock(t, c, "l", time.Minute)
}

func testLockExpiry(t *testing.T, c Cache) {
	stale := mustLock(t, c, "e", 30*time.Millisecond)
	var fresh func()
	eventually(t, "the lock expires", func() bool {
		unlock, ok, err := c.Lock(context.Background(), "e", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		fresh = unlock
		return ok
	})
	stale() // the first holder, late: the lock is the second holder's
	mustNotLock(t, c, "e")
	fresh()
	mustLock(t, c, "e", time.Minute)
}

func incr(t *testing.T, c Cache, set string, counts map[string]int) {
	t.Helper()
	for m, n := range counts {
		for range n {
			if err := c.Incr(context.Background(), set, m); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func top(t *testing.T, c Cache, set string, n int) []Count {
	t.Helper()
	got, err := c.Top(context.Background(), set, n)
	if err != nil {
		t.Fatalf("top %d of %s: %v", n, set, err)
	}
	return got
}

func testCounters(t *testing.T, c Cache) {
	incr(t, c, "q", map[string]int{"dog": 3, "cat": 2, "ant": 2, "bee": 1, "cow": 1, "elk": 1, "fox": 1})
	incr(t, c, "other", map[string]int{"zebra": 9})
	all := []Count{{"dog", 3}, {"ant", 2}, {"cat", 2}, {"bee", 1}, {"cow", 1}, {"elk", 1}, {"fox", 1}}
	for _, n := range []int{-1, 0, 1, 2, 3, 4, 5, 7, 100} {
		want := all[:max(min(n, len(all)), 0)]
		if got := top(t, c, "q", n); !slices.Equal(got, want) {
			t.Errorf("top %d: %v, want %v", n, got, want)
		}
	}
	if got := top(t, c, "empty", 3); len(got) != 0 {
		t.Errorf("top of an empty set: %v", got)
	}
	if got := top(t, c, "other", 3); !slices.Equal(got, []Count{{"zebra", 9}}) {
		t.Errorf("top of other: %v", got)
	}
}

// testCountersBounded: a counter set keeps its highest counts, at most a
// tenth more than keep.
func testCountersBounded(t *testing.T, c Cache) {
	const keep = 20
	switch c := c.(type) {
	case *Memory:
		c.keep = keep
	case *Redis:
		c.keep = keep
	default:
		t.Fatalf("%T: no bound to set", c)
	}
	incr(t, c, "b", map[string]int{"hot": 5, "warm": 3})
	for i := range 200 {
		incr(t, c, "b", map[string]int{fmt.Sprintf("m%03d", i): 1})
	}
	got := top(t, c, "b", 1000)
	if len(got) < keep || len(got) > keep+keep/10 {
		t.Fatalf("%d members kept, want %d..%d", len(got), keep, keep+keep/10)
	}
	if !slices.Equal(got[:2], []Count{{"hot", 5}, {"warm", 3}}) {
		t.Errorf("top: %v", got[:2])
	}
}
