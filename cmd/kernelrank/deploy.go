package main

import (
	"flag"
	"path/filepath"
	"strings"

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
			"the default re-ranker, with its parameters, becomes the best of "+strings.Join(search.SelectCandidates, ", ")+" on them (P@10); empty: "+rerank.DefaultStrategy),
	}
}
