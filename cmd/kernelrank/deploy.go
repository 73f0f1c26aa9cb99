package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/rerank"
	"github.com/kernelrank/kernelrank/search"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.etcd.io/bbolt"
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

// newEngine is the search engine of a deployment's process over ix, with
// opt and the window of sh. With
// --validation it reads the queries (failing on a bad file) and returns a
// function that makes the default re-ranker the best on them, logging the
// choice; without, that function does nothing.
func newEngine(ix *index.Index, b *backends, sh sharedFlags, opt search.Options, log *slog.Logger) (*search.Engine, func(context.Context) error, error) {
	opt.Window = *sh.window
	engine := search.New(ix, b.loader, opt)
	if *sh.validation == "" {
		return engine, func(context.Context) error { return nil }, nil
	}
	f, err := os.Open(*sh.validation)
	if err != nil {
		return nil, nil, fmt.Errorf("--validation: %w", err)
	}
	defer f.Close()
	queries, err := search.ReadValidation(f)
	if err == nil && len(queries) == 0 {
		err = errors.New("no query in the file")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--validation %s: %w", *sh.validation, err)
	}
	choose := func(ctx context.Context) error {
		log.Info("choosing the default re-ranker", "queries", len(queries), "candidates", strings.Join(search.SelectCandidates, ","))
		start := time.Now()
		sel, err := engine.SelectDefault(ctx, queries)
		if err != nil {
			return fmt.Errorf("--validation: %w", err)
		}
		attrs := []any{"rerank", sel.Strategy, "params", string(sel.Params), "took", time.Since(start).Round(time.Millisecond)}
		for _, s := range sel.Precision {
			attrs = append(attrs, s.Strategy, fmt.Sprintf("%.3f", s.Precision))
		}
		for _, name := range search.SelectCandidates {
			if why, ok := sel.Skipped[name]; ok {
				attrs = append(attrs, name, "skipped: "+why)
			}
		}
		log.Info("default re-ranker chosen on the validation queries (P@10)", attrs...)
		return nil
	}
	return engine, choose, nil
}

// redisLog sends go-redis' own messages (a failed dial, a pool event) to
// the process's log at debug level: the cache counts and reports a Redis
// that fails (/readyz, metrics), and a Redis gone would otherwise print a
// line on every attempt.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// backends are what the processes of a deployment share: the cache of
// rankings and learned kernels, and the store of model versions.
type backends struct {
	redis  *cache.Redis // nil without --redis
	cache  cache.Cache  // nil: caching off
	loader *cache.Loader
	store  cache.Store
}

// openBackends opens Redis when redisURL is given (failing when it does not
// answer), otherwise an in-process cache of cacheBytes (none when noCache)
// and a model store under cacheRoot/models. reg receives the cache metrics,
// log the Redis client's messages.
func openBackends(ctx context.Context, redisURL, cacheRoot string, cacheBytes int64, noCache bool, reg prometheus.Registerer, log *slog.Logger) (*backends, error) {
	b := &backends{}
	if redisURL != "" {
		redis.SetLogger(redisLog{log})
		r, err := cache.OpenRedis(ctx, redisURL, "")
		if err != nil {
			return nil, err
		}
		b.redis, b.store = r, cache.NewRedisStore(r)
		if !noCache {
			b.cache = r
		}
	} else {
		store, err := cache.NewDirStore(filepath.Join(cacheRoot, "models"))
		if err != nil {
			return nil, fmt.Errorf("model store: %w", err)
		}
		b.store = store
		if !noCache {
			mem, err := cache.NewMemory(cacheBytes)
			if err != nil {
				return nil, err
			}
			b.cache = mem
		}
	}
	if b.cache != nil {
		b.loader = cache.NewLoader(b.cache, cache.NewMetrics(reg, b.cache.Backend()))
	}
	return b, nil
}

func (b *backends) Close() {
	if b.cache != nil {
		b.cache.Close()
	} else if b.redis != nil {
		b.redis.Close()
	}
}

// openIndex opens the index in dir, or the demo index (built on first use
// under cacheRoot, reporting its progress) when dir is empty.
func openIndex(ctx context.Context, dir, cacheRoot string, log *slog.Logger, progress func(stage string, done, total int)) (*index.Index, string, error) {
	demo := dir == ""
	if demo {
		var err error
		if dir, err = demoIndex(ctx, cacheRoot, log, func(done, total int) {
			progress("building the demo index", done, total)
		}); err != nil {
			return nil, "", err
		}
	} else if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err != nil {
		return nil, "", fmt.Errorf("no index in %s: build one with `kernelrank ingest --data %s CORPUS`", dir, dir)
	}
	progress("opening the index", 0, 0)
	ix, err := openUnheld(dir)
	if errors.Is(err, index.ErrIncompatible) && demo {
		// A demo index an older version built: build it again.
		log.Info("rebuilding the demo index in the current format", "dir", dir, "was", err)
		if err = os.RemoveAll(dir); err == nil {
			return openIndex(ctx, "", cacheRoot, log, progress)
		}
	}
	if err != nil {
		return nil, "", err
	}
	return ix, dir, nil
}

// openUnheld opens (or creates) the index in dir, saying which process
// holds it when another does, not the bare "timeout" of bolt's lock: a
// restart while the old process still shuts down meets it too.
func openUnheld(dir string) (*index.Index, error) {
	ix, err := index.Open(dir)
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, fmt.Errorf("another kernelrank process holds %s (the lock of %s; an index is opened by one process at a time): "+
			"stop it (a server that is shutting down lets go within its --shutdown-timeout), or use another --cache-dir, "+
			"or a copy of the index with --data", dir, filepath.Join(dir, "store", "root.bolt"))
	}
	return ix, err
}

// newSocialService serves the social data in dir (the generated demo
// network when empty) with the models of b's store; with Redis, servers
// starting together train a missing model once (b's locks). It returns the
// directory served.
func newSocialService(ctx context.Context, dir, learner, cacheRoot string, b *backends, log *slog.Logger) (*recommend.Service, string, error) {
	if dir == "" {
		var err error
		if dir, err = demoSocial(cacheRoot, log); err != nil {
			return nil, "", err
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	opts := recommend.ServiceOptions{Options: recommend.Options{Learner: learner, Log: log}}
	if b.redis != nil {
		opts.Locks = b.redis
	}
	svc, err := recommend.NewService(ctx, recommend.DirSource{Dir: dir, Log: log}, b.store, opts)
	return svc, dir, err
}
