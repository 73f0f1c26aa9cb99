package recommend_test

import (
	"context"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/redistest"
)

// The service's store tests on a real Redis, standalone and cluster; each
// store is a Redis client under a prefix of its own.
func TestServiceRedisStore(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, u string) {
		testServiceStore(t, func(t *testing.T) cache.Store {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r, err := cache.OpenRedis(ctx, u, redistest.Prefix(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return cache.NewRedisStore(r)
		})
	})
}
