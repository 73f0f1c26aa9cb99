package recommend_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

// TestShardsPublishOnlyWhole: a staged model's version is not published
// while a shard's lists are missing; a second process, loading the staged
// model from the store, ranks a shard as the first would; once every
// shard is in, the version is published whole, with the lists a process
// that precomputes them all at once serves, and its staged versions go.
func TestShardsPublishOnlyWhole(t *testing.T) {
	ctx := context.Background()
	dir := copyDemo(t)
	store, err := cache.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts := recommend.ServiceOptions{Options: recommend.Options{Learner: "uniform"}, TopK: 10, ShardUsers: 40, PollInterval: poll}
	newSvc := func(store cache.Store) *recommend.Service {
		life, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		s, err := recommend.NewService(life, recommend.DirSource{Dir: dir, Options: social.ImportOptions{StopOnError: true}}, store, opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := newSvc(store), newSvc(store)
	req := recommend.RetrainRequest{Version: "job-7"}
	if _, err := a.Stage(ctx, recommend.RetrainRequest{}, nil); err == nil {
		t.Error("staged without a version")
	}
	shards, err := a.Stage(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := a.Dataset().N()
	if want := (n + 39) / 40; shards != want || shards < 3 {
		t.Fatalf("%d shards for %d users of 40 a shard, want %d (at least 3 for this test)", shards, n, want)
	}
	for _, bad := range [][2]int{{-1, shards}, {shards, shards}, {0, shards + 1}} {
		if err := b.PrecomputeShard(ctx, req, bad[0], bad[1], nil); err == nil || !strings.Contains(err.Error(), "shards") {
			t.Errorf("shard %d of %d: %v, want an error", bad[0], bad[1], err)
		}
	}
	if err := b.PrecomputeShard(ctx, recommend.RetrainRequest{Version: "no-such-job"}, 0, shards, nil); !errors.Is(err, cache.ErrMiss) {
		t.Errorf("a shard of a version never staged: %v, want ErrMiss", err)
	}
	name, err := recommend.StoreName(opts.Options)
	if err != nil {
		t.Fatal(err)
	}
	for shard := range shards - 1 { // the last one is missing
		s := a
		if shard%2 == 1 {
			s = b // loads the staged model from the store
		}
		if err := s.PrecomputeShard(ctx, req, shard, shards, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.PublishShards(ctx, req, shards); err == nil || !strings.Contains(err.Error(), "is not in") {
		t.Fatalf("published with a shard missing: %v", err)
	}
	if _, err := a.PublishShards(ctx, req, shards+1); err == nil {
		t.Error("published with the wrong number of shards")
	}
	if v, err := store.Current(ctx, name); !errors.Is(err, cache.ErrMiss) {
		t.Fatalf("current version %q (%v) with a shard missing", v, err)
	}
	if err := b.PrecomputeShard(ctx, req, shards-1, shards, nil); err != nil {
		t.Fatal(err)
	}
	if v, err := b.PublishShards(ctx, req, shards); err != nil || v != req.Version {
		t.Fatalf("publish: %q, %v", v, err)
	}
	if v, err := a.PublishShards(ctx, req, shards); err != nil || v != req.Version { // a retried publish
		t.Fatalf("publish again: %q, %v", v, err)
	}
	if v, err := store.Versions(ctx, recommend.StagedName(name)); err != nil || len(v) != 0 {
		t.Errorf("staged versions left: %v (%v)", v, err)
	}
	got, err := recommend.Load(ctx, store, name, req.Version, a.Dataset(), a.Dataset().Version())
	if err != nil {
		t.Fatal(err)
	}
	refStore, err := cache.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := model(t, newSvc(refStore)) // trained and precomputed in one process
	if got.TopK() != 10 || want.TopK() != 10 {
		t.Fatalf("top k %d and %d, want 10", got.TopK(), want.TopK())
	}
	for u := range n {
		sameAnswers(t, want, got, u, 10, 0)
	}
}
