package cache

import (
	"context"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// impl opens a fresh, empty implementation of T for a test.
type impl[T any] struct {
	name string
	open func(t testing.TB) T
}

// runContract runs every test of a contract on every implementation, all
// in parallel.
func runContract[T any](t *testing.T, impls []impl[T], tests map[string]func(*testing.T, T)) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			t.Parallel()
			for name, test := range tests {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					test(t, im.open(t))
				})
			}
		})
	}
}

// backends are the Cache implementations every contract test runs on; the
// Redis ones skip without their server.
var backends = []impl[Cache]{
	{"memory", func(t testing.TB) Cache { return newMemory(t, 64<<20) }},
	{"redis", func(t testing.TB) Cache { return openRedis(t, redistest.URL(t)) }},
	{"cluster", func(t testing.TB) Cache { return openRedis(t, redistest.ClusterURL(t)) }},
}

func newMemory(t testing.TB, budget int64) *Memory {
	t.Helper()
	m, err := NewMemory(budget)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// openRedis connects to url under a prefix of the test's own, and deletes
// the test's keys when it ends.
func openRedis(t testing.TB, url string) *Redis {
	t.Helper()
	return openRedisPrefix(t, url, redistest.Prefix(t))
}

// openRedisPrefix connects to url under prefix: two clients with one
// prefix are two servers of one deployment.
func openRedisPrefix(t testing.TB, url, prefix string) *Redis {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := OpenRedis(ctx, url, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := deletePrefix(ctx, r.Client(), prefix); err != nil {
			t.Logf("deleting the keys %s*: %v", prefix, err)
		}
		r.Close()
	})
	return r
}

// deletePrefix deletes the keys that start with prefix, on every master of
// a cluster.
func deletePrefix(ctx context.Context, c redis.UniversalClient, prefix string) error {
	del := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for it.Next(ctx) {
			if err := c.Del(ctx, it.Val()).Err(); err != nil {
				return err
			}
		}
		return it.Err()
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, del)
	}
	return del(ctx, c.(*redis.Client))
}

// eventually polls cond until it holds, failing the test after a generous
// timeout: expiries are checked without assuming exact times.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
