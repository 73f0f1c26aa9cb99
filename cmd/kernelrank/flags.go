package main

import (
	"flag"
	"path/filepath"
	"strings"
	"time"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/deploy"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/rerank"
	"github.com/kernelrank/kernelrank/search"
)

// sharedFlags are the flags of every process of a deployment (serve,
// worker, retrain): where the shared state lives and what it is computed
// from. Processes that should see each other's work give the same values.
type sharedFlags struct {
	redis, cacheDir *string
	data, social    *string
	learner         *string
	window          *int
	validation      *string
	fromClicks      *bool
}

func addSharedFlags(fs *flag.FlagSet, learnerFlag string) sharedFlags {
	return sharedFlags{
		redis: fs.String("redis", "", "Redis shared by the servers and workers of a deployment (cache, models, jobs): "+
			"redis://HOST:PORT/DB or redis+cluster://H1:P1,H2:P2,H3:P3; empty: the in-process cache, models under --cache-dir, jobs run in the server"),
		cacheDir: fs.String("cache-dir", filepath.Join(cacheDir(), "kernelrank"), "where the demo data and, without --redis, the trained models (models/) are kept"),
		data:     fs.String("data", "", "index directory (built by kernelrank ingest); empty: the bundled demo corpus"),
		social: fs.String("social", "", "social data for the recommendations: a directory in the import format, "+
			"or ego-Facebook / BlogCatalog as published; empty: the generated demo network"),
		learner: fs.String(learnerFlag, recommend.DefaultLearner, "kernel-combination learner of the recommenders"),
		window:  fs.Int("window", search.DefaultWindow, "default candidate window re-ranked per query (servers and workers must agree for precomputed rankings to hit)"),
		validation: fs.String("validation", "", "labelled validation queries of this corpus, JSON Lines {\"q\": ..., \"relevant\": [ids]}: "+
			"the default re-ranker, with its parameters, becomes the best of "+strings.Join(search.SelectCandidates, ", ")+" on them (P@10); empty: "+
			"the demo corpus's built-in validation queries when --data is empty, else "+rerank.DefaultStrategy),
		fromClicks: fs.Bool("validation-from-clicks", false, "without --validation: choose the default re-ranker on the judgments the logged search clicks give "+
			"(POST /v1/events; a position-based click model removes the rank's bias, docs/evaluation.md), at start; no judgments yet: as without"),
	}
}

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

// options are the corpus options of the flags cf and sh, with the replica
// (with --redis and no --data) in replicaDir.
func (cf corpusFlags) options(sh sharedFlags, replicaDir string) deploy.CorpusOptions {
	return deploy.CorpusOptions{Data: *sh.data, CacheDir: *sh.cacheDir, ReplicaDir: replicaDir, Blobs: cf.blobOptions(), SnapshotEvery: *cf.snapshotEvery}
}

func (cf corpusFlags) blobOptions() deploy.BlobOptions {
	return deploy.BlobOptions{Where: *cf.blobs, Max: *cf.blobMax, Budget: *cf.blobBudget}
}
