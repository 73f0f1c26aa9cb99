package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/index/blob"
	"github.com/kernelrank/kernelrank/index/replica"
	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/prometheus/client_golang/prometheus"
)

// corpusFlags say where a process keeps the corpus's image bytes and, with
// --redis, how its replica of the corpus follows the change log.
type corpusFlags struct {
	blobs               *string
	blobMax, blobBudget *int64
	maxLagEntries       *int64
	maxLagSeconds       *time.Duration
	snapshotEvery       *int64
}

func addCorpusFlags(fs *flag.FlagSet) corpusFlags {
	return corpusFlags{
		blobs: fs.String("blobs", "", "where image bytes (uploads, thumbnails) are kept: \"redis\" or a directory every server can read; "+
			"empty: redis with --redis, otherwise uploads/ beside the index"),
		blobMax:       fs.Int64("blob-max-bytes", index.MaxImageBytes, "with --blobs redis: the largest image kept (413 above)"),
		blobBudget:    fs.Int64("blob-budget", 4<<30, "with --blobs redis: the bytes all images may take (507 past them; 0: no bound)"),
		maxLagEntries: fs.Int64("max-lag-entries", 1000, "with --redis: /readyz and /v1/status say \"degraded\" when the replica is more entries behind the corpus log (0: no bound)"),
		maxLagSeconds: fs.Duration("max-lag-seconds", 10*time.Second, "with --redis: ... or this far behind (0: no bound)"),
		snapshotEvery: fs.Int64("snapshot-every", 10000, "with --redis: write a corpus snapshot (and trim the log below it) every this many entries (0: never)"),
	}
}

// corpus is the index a process serves or computes on, with its image
// store and, with --redis, the follower that keeps it a replica of the
// corpus change log.
type corpus struct {
	ix       *index.Index
	dir      string
	images   *index.Images
	follower *replica.Follower // nil without --redis
	stop     func()            // stops the follower
}

func (c *corpus) Close() {
	if c.stop != nil {
		c.stop()
	}
	c.ix.Close()
}

// writer is what the server writes image changes through.
func (c *corpus) writer() index.Writer {
	if c.follower == nil {
		return nil
	}
	return replica.Writer{F: c.follower}
}

// openCorpus opens the corpus of a process. Without Redis: the index of
// --data (or the demo's) and its uploads directory. With Redis: the
// replica in replicaDir (--data if given), caught up with the log before
// it returns and followed until Close; the first process of a deployment
// to find the log empty, and no --data, loads the demo corpus into it.
func openCorpus(ctx context.Context, sh sharedFlags, cf corpusFlags, b *backends, replicaDir string, reg prometheus.Registerer,
	log *slog.Logger, progress func(stage string, done, total int)) (*corpus, error) {
	if b.redis == nil {
		ix, dir, err := openIndex(ctx, *sh.data, *sh.cacheDir, log, progress)
		if err != nil {
			return nil, err
		}
		blobDir := *cf.blobs
		if blobDir == "" || blobDir == "redis" {
			if blobDir == "redis" {
				ix.Close()
				return nil, errors.New("--blobs redis needs --redis")
			}
			blobDir = filepath.Join(dir, "uploads")
		}
		return &corpus{ix: ix, dir: dir, images: index.NewImages(blob.NewDir(blobDir))}, nil
	}
	dir := *sh.data
	if dir == "" {
		dir = replicaDir
	}
	ix, err := openUnheld(dir)
	if err != nil {
		return nil, err
	}
	if ix.Count() > 0 && ix.Mark() == nil {
		ix.Close()
		return nil, fmt.Errorf("--data %s holds an index that is not a replica of a deployment's corpus: with --redis the servers serve the corpus "+
			"of the change log; load the corpus into it with `kernelrank ingest --redis URL CORPUS`, and give --data an empty "+
			"directory (or leave it out: the replica goes under --cache-dir)", dir)
	}
	c := &corpus{ix: ix, dir: dir, images: index.NewImages(newBlobs(cf, b))}
	l := replica.NewLog(b.redis.Client(), replica.DefaultPrefix)
	f, err := replica.NewFollower(l, ix, replica.Options{Log: log, Registry: reg, SnapshotEvery: *cf.snapshotEvery})
	if err != nil {
		ix.Close()
		return nil, err
	}
	c.follower = f
	if *sh.data == "" {
		if err := seedDemo(ctx, l, c.images.Blobs(), *sh.cacheDir, log, progress); err != nil {
			ix.Close()
			return nil, err
		}
	}
	progress("catching up with the corpus log", 0, 0)
	start := time.Now()
	if err := f.CatchUp(ctx); err != nil {
		ix.Close()
		return nil, fmt.Errorf("catching up with the corpus log: %w", err)
	}
	log.Info("replica caught up with the corpus log", "dir", dir, "images", ix.Count(), "version", ix.Version(),
		"applied", f.Applied().ID, "took", time.Since(start).Round(time.Millisecond))
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { f.Run(runCtx); close(done) }()
	c.stop = func() { cancel(); <-done }
	return c, nil
}

// newBlobs is the blob store of --blobs with Redis.
func newBlobs(cf corpusFlags, b *backends) blob.Store {
	if d := *cf.blobs; d != "" && d != "redis" {
		return blob.NewDir(d)
	}
	return blob.NewRedis(b.redis.Client(), blob.DefaultPrefix, *cf.blobMax, *cf.blobBudget)
}

// seedDemo loads the demo corpus into an empty log: images into blobs,
// docs as entries. Of processes starting together, one does (a lock in
// Redis); the others follow its entries.
func seedDemo(ctx context.Context, l *replica.Log, blobs blob.Store, cacheRoot string, log *slog.Logger, progress func(string, int, int)) error {
	if head, err := l.Head(ctx); err != nil || head.ID != "" {
		return err
	}
	if _, ok, err := l.Snapshot(ctx); err != nil || ok {
		return err
	}
	unlock, ok := l.Lock(ctx, "seeding", 10*time.Minute)
	if !ok {
		return nil
	}
	defer unlock()
	log.Info("the corpus log is empty: loading the demo corpus into it")
	jsonl, err := demo.Extract(filepath.Join(cacheRoot, "demo", "corpus"))
	if err != nil {
		return err
	}
	rep, err := ingestToLog(ctx, l, blobs, []string{filepath.Dir(jsonl)}, false, func(done, total int) {
		progress("loading the demo corpus into the corpus log", done, total)
	})
	if err != nil {
		return err
	}
	log.Info("demo corpus in the corpus log", "added", rep.Added, "skipped", rep.Skipped)
	return nil
}
