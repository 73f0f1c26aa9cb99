package search

import (
	"context"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/redistest"
)

// The engine's cache tests on a real Redis, standalone and cluster, each
// under a key prefix of its own (so the cache starts empty).
func TestEngineCacheRedis(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, u string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := cache.OpenRedis(ctx, u, redistest.Prefix(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		testEngineCache(t, r)
	})
}
