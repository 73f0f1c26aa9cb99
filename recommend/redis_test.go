package recommend_test

import (
	"context"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
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

// TestServersStartingTogetherTrainOnce: servers that start at once over
// an empty Redis store, sharing its locks, train the model once; the
// others load the version it published.
func TestServersStartingTogetherTrainOnce(t *testing.T) {
	u, prefix, dir := redistest.URL(t), redistest.Prefix(t), copyDemo(t)
	const servers = 3
	svcs := make([]*recommend.Service, servers)
	for i := range svcs {
		r, err := cache.OpenRedis(context.Background(), u, prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		life, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		svcs[i], err = recommend.NewService(life, recommend.DirSource{Dir: dir, Options: social.ImportOptions{StopOnError: true}},
			cache.NewRedisStore(r), recommend.ServiceOptions{Options: recommend.Options{Learner: "uniform"}, TopK: 10, PollInterval: poll, Locks: r})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range svcs {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	var trained, loaded int64
	versions := map[string]bool{}
	for _, s := range svcs {
		m := model(t, s)
		versions[m.Version()] = true
		c := s.Counts()
		trained, loaded = trained+c.Trained, loaded+c.Loaded
	}
	if trained != 1 || loaded != servers-1 || len(versions) != 1 {
		t.Errorf("%d servers: %d trained, %d loaded, versions %v; want one training, the others loading it", servers, trained, loaded, versions)
	}
}
