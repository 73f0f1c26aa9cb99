package deploy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/index/blob"
	"github.com/kernelrank/kernelrank/index/replica"
	"github.com/prometheus/client_golang/prometheus"
)

// CorpusOptions say where a process keeps its corpus: its command's
// --data, --cache-dir, --blobs, --blob-max-bytes, --blob-budget and
// --snapshot-every.
type CorpusOptions struct {
	Data          string // index directory; empty: the demo's, or with Redis ReplicaDir
	CacheDir      string // where the demo is kept
	ReplicaDir    string // with Redis and no Data: the replica's directory
	Blobs         BlobOptions
	SnapshotEvery int64 // with Redis: entries between corpus snapshots (0: never)
}

// BlobOptions say where image bytes are kept: Where is "redis" or a
// directory ("": redis with Redis, otherwise uploads/ beside the index);
// Max and Budget bound a Redis store.
type BlobOptions struct {
	Where       string
	Max, Budget int64
}

// Corpus is the index a process serves or computes on, with its image
// store and, with --redis, the follower that keeps it a replica of the
// corpus change log.
type Corpus struct {
	Ix       *index.Index
	Dir      string
	Images   *index.Images
	Follower *replica.Follower // nil without --redis
	stop     func()            // stops the follower
}

// Close stops the follower and closes the index.
func (c *Corpus) Close() {
	if c.stop != nil {
		c.stop()
	}
	c.Ix.Close()
}

// Writer is what the server writes image changes through.
func (c *Corpus) Writer() index.Writer {
	if c.Follower == nil {
		return nil
	}
	return replica.Writer{F: c.Follower}
}

// OpenCorpus opens the corpus of a process. Without Redis: the index of
// --data (or the demo's) and its uploads directory. With Redis: the
// replica in o.ReplicaDir (--data if given), caught up with the log before
// it returns and followed until Close; the first process of a deployment
// to find the log empty, and no --data, loads the demo corpus into it.
func OpenCorpus(ctx context.Context, o CorpusOptions, b *Backends, reg prometheus.Registerer,
	log *slog.Logger, progress func(stage string, done, total int)) (*Corpus, error) {
	if b.Redis == nil {
		ix, dir, err := OpenIndex(ctx, o.Data, o.CacheDir, log, progress)
		if err != nil {
			return nil, err
		}
		blobDir := o.Blobs.Where
		if blobDir == "" || blobDir == "redis" {
			if blobDir == "redis" {
				ix.Close()
				return nil, errors.New("--blobs redis needs --redis")
			}
			blobDir = filepath.Join(dir, "uploads")
		}
		return &Corpus{Ix: ix, Dir: dir, Images: index.NewImages(blob.NewDir(blobDir))}, nil
	}
	dir := o.Data
	if dir == "" {
		dir = o.ReplicaDir
	}
	ix, err := OpenUnheld(dir)
	if err != nil {
		return nil, err
	}
	if ix.Count() > 0 && ix.Mark() == nil {
		ix.Close()
		return nil, fmt.Errorf("--data %s holds an index that is not a replica of a deployment's corpus: with --redis the servers serve the corpus "+
			"of the change log; load the corpus into it with `kernelrank ingest --redis URL CORPUS`, and give --data an empty "+
			"directory (or leave it out: the replica goes under --cache-dir)", dir)
	}
	c := &Corpus{Ix: ix, Dir: dir, Images: index.NewImages(NewBlobs(o.Blobs, b.Redis))}
	l := replica.NewLog(b.Redis.Client(), replica.DefaultPrefix)
	f, err := replica.NewFollower(l, ix, replica.Options{Log: log, Registry: reg, SnapshotEvery: o.SnapshotEvery})
	if err != nil {
		ix.Close()
		return nil, err
	}
	c.Follower = f
	if o.Data == "" {
		if err := seedDemo(ctx, l, c.Images.Blobs(), o.CacheDir, log, progress); err != nil {
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

// NewBlobs is the blob store of o with Redis r.
func NewBlobs(o BlobOptions, r *cache.Redis) blob.Store {
	if d := o.Where; d != "" && d != "redis" {
		return blob.NewDir(d)
	}
	return blob.NewRedis(r.Client(), blob.DefaultPrefix, o.Max, o.Budget)
}
