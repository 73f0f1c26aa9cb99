package retrain

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/deploy"
	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/internal/redistest"
	_ "github.com/kernelrank/kernelrank/learners/kit/all"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

// TestSocialJobInShardsOnTwoWorkers: a social job queued in Redis (the
// cluster's split jobs are tested in package jobs) is
// trained by one of two workers, each with a recommend service of its own
// over one Redis model store, its lists precomputed in shards by both, and
// published once: one version, the job's, whose lists are those of the
// model a single process trains and precomputes (WithTop), for every
// user; the staged versions are removed.
func TestSocialJobInShardsOnTwoWorkers(t *testing.T) {
	url := redistest.URL(t)
	ctx := context.Background()
	dir, err := deploy.DemoSocial(t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ro, err := cache.ParseRedisURL(url)
	if err != nil {
		t.Fatal(err)
	}
	prefix := redistest.Prefix(t)
	opts := recommend.ServiceOptions{Options: recommend.Options{Learner: "uniform"}, TopK: 10, ShardUsers: 25, PollInterval: time.Hour}
	newService := func(store cache.Store) *recommend.Service {
		life, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		svc, err := recommend.NewService(life, recommend.DirSource{Dir: dir, Options: social.ImportOptions{StopOnError: true}}, store, opts)
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	redisStore := func() cache.Store {
		r, err := cache.OpenRedis(ctx, url, prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return cache.NewRedisStore(r)
	}
	jo := jobs.Options{Queue: strings.TrimSuffix(prefix, ":"), MaxRetry: 2, RetryDelay: 100 * time.Millisecond, Log: slog.New(slog.DiscardHandler)}
	ran := map[string]*atomic.Int64{} // shards run, by worker
	for _, name := range []string{"A", "B"} {
		svc := newService(redisStore())
		ran[name] = &atomic.Int64{}
		d := Deps{Log: slog.New(slog.DiscardHandler), Recommend: func(context.Context) (*recommend.Service, error) { return svc, nil }}
		o := jo
		split := NewSplit(d)
		o.Split = func(spec jobs.Spec) *jobs.Split {
			sp := split(spec)
			shard := sp.Shard
			sp.Shard = func(ctx context.Context, id string, spec jobs.Spec, i, n int) error {
				time.Sleep(200 * time.Millisecond) // long enough for both workers to take shards
				err := shard(ctx, id, spec, i, n)
				if err == nil {
					ran[name].Add(1)
				}
				return err
			}
			return sp
		}
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- jobs.Worker(wctx, ro, o, 1, NewHandler(d)) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker %s: %v", name, err)
			}
		})
	}
	q, err := jobs.NewAsynq(ctx, ro, jo)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	j, err := q.Enqueue(ctx, jobs.Spec{Target: jobs.TargetSocial})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if j, err = q.Get(ctx, j.ID); err != nil || j.Status.Final() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	refStore, err := cache.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ref := newService(refStore)
	want, err := ref.Model(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	n := want.Dataset().N()
	shards := (n + opts.ShardUsers - 1) / opts.ShardUsers
	if err != nil || j.Status != jobs.Succeeded || j.Version != j.ID || j.Shards != shards || j.ShardsDone != shards {
		t.Fatalf("job %+v (%v): want succeeded, version = id, %d shards done", j, err, shards)
	}
	if a, b := ran["A"].Load(), ran["B"].Load(); a+b != int64(shards) || a == 0 || b == 0 {
		t.Errorf("shards run by the workers: %d and %d, want %d in all, on both", a, b, shards)
	}

	store := redisStore()
	name, err := recommend.StoreName(opts.Options)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := store.Versions(ctx, name); err != nil || !slices.Equal(v, []string{j.ID}) {
		t.Errorf("versions %v (%v), want the job's only", v, err)
	}
	if v, err := store.Versions(ctx, recommend.StagedName(name)); err != nil || len(v) != 0 {
		t.Errorf("staged versions left: %v (%v)", v, err)
	}
	ds := want.Dataset()
	got, err := recommend.Load(ctx, store, name, j.ID, ds, ds.Version())
	if err != nil {
		t.Fatal(err)
	}
	if got.TopK() != 10 || want.TopK() != 10 {
		t.Fatalf("top k: published %d, single process %d", got.TopK(), want.TopK())
	}
	for u := range n {
		sameLists(t, want, got, u, 10)
	}
}

// sameLists checks that a and b recommend u the same friends and groups
// with the same scores.
func sameLists(t *testing.T, a, b *recommend.Model, u, k int) {
	t.Helper()
	if la, lb := lists(t, a, u, k), lists(t, b, u, k); !slices.Equal(la, lb) {
		t.Fatalf("user %d: %v vs %v", u, la, lb)
	}
}

// lists returns u's friends and groups with their scores, in order.
func lists(t *testing.T, m *recommend.Model, u, k int) []string {
	t.Helper()
	f, err := m.RecommendFriends(u, k)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.RecommendGroups(u, k)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range f.Items {
		out = append(out, fmt.Sprint("friend ", x.User, " ", x.Score))
	}
	for _, x := range g.Items {
		out = append(out, fmt.Sprint("group ", x.Group, " ", x.Score))
	}
	return out
}
