// Package deploy opens what a kernelrank process of a deployment runs on,
// below the command's flags and above the facades: the cache and the model
// store (in-process or Redis), the corpus (a local index, or a replica
// following the change log of a deployment's Redis), ingest into either,
// the search engine with its default re-ranker chosen on validation
// queries, the social recommender service, and the bundled demo's index
// and social network, built on first use.
package deploy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/eval"
	"github.com/kernelrank/kernelrank/internal/feedback"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/search"
	"github.com/kernelrank/kernelrank/social/live"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.etcd.io/bbolt"
)

// redisLog sends go-redis' own messages (a failed dial, a pool event) to
// the process's log at debug level: the cache counts and reports a Redis
// that fails (/readyz, metrics), and a Redis gone would otherwise print a
// line on every attempt.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// Backends are what the processes of a deployment share: the cache of
// rankings and learned kernels, and the store of model versions.
type Backends struct {
	Redis  *cache.Redis // nil without --redis
	Cache  cache.Cache  // nil: caching off
	Loader *cache.Loader
	Store  cache.Store
}

// OpenBackends opens Redis when redisURL is given (failing when it does not
// answer), otherwise an in-process cache of cacheBytes (none when noCache)
// and a model store under cacheRoot/models. reg receives the cache metrics,
// log the Redis client's messages.
func OpenBackends(ctx context.Context, redisURL, cacheRoot string, cacheBytes int64, noCache bool, reg prometheus.Registerer, log *slog.Logger) (*Backends, error) {
	b := &Backends{}
	if redisURL != "" {
		redis.SetLogger(redisLog{log})
		r, err := cache.OpenRedis(ctx, redisURL, "")
		if err != nil {
			return nil, err
		}
		b.Redis, b.Store = r, cache.NewRedisStore(r)
		if !noCache {
			b.Cache = r
		}
	} else {
		store, err := cache.NewDirStore(filepath.Join(cacheRoot, "models"))
		if err != nil {
			return nil, fmt.Errorf("model store: %w", err)
		}
		b.Store = store
		if !noCache {
			mem, err := cache.NewMemory(cacheBytes)
			if err != nil {
				return nil, err
			}
			b.Cache = mem
		}
	}
	if b.Cache != nil {
		b.Loader = cache.NewLoader(b.Cache, cache.NewMetrics(reg, b.Cache.Backend()))
	}
	return b, nil
}

// Close closes the cache, or Redis when caching is off.
func (b *Backends) Close() {
	if b.Cache != nil {
		b.Cache.Close()
	} else if b.Redis != nil {
		b.Redis.Close()
	}
}

// BackendName names the cache of b in the log: off, or its backend.
func (b *Backends) BackendName() string {
	if b.Cache == nil {
		return "off"
	}
	return b.Cache.Backend()
}

// StoreName names the model store of b in the log: redis, or its directory under cacheRoot.
func (b *Backends) StoreName(cacheRoot string) string {
	if b.Redis != nil {
		return "redis"
	}
	return filepath.Join(cacheRoot, "models")
}

// NewEngine is the search engine of a deployment's process over ix, with
// opt. With validation (the path of --validation) it reads the queries
// (failing on a bad file); else, with clicks (--validation-from-clicks),
// it judges the clicks logged when the choice is made (ClickValidation);
// on the demo corpus (demo: no --data) it takes the demo's built-in
// queries when there are no others. It returns a function that makes the
// default re-ranker the best on them, logging the choice; with no queries
// that function does nothing.
func NewEngine(ix *index.Index, b *Backends, validation string, clicks feedback.Log, demo bool, opt search.Options, log *slog.Logger) (*search.Engine, func(context.Context) error, error) {
	engine := search.New(ix, b.Loader, opt)
	var queries []search.LabelledQuery
	from := "--validation"
	switch {
	case validation != "":
		f, err := os.Open(validation)
		if err != nil {
			return nil, nil, fmt.Errorf("--validation: %w", err)
		}
		defer f.Close()
		queries, err = search.ReadValidation(f)
		if err == nil && len(queries) == 0 {
			err = errors.New("no query in the file")
		}
		if err != nil {
			return nil, nil, fmt.Errorf("--validation %s: %w", validation, err)
		}
	case demo || clicks != nil:
		if demo { // the demo validates itself, as any deployment
			var err error
			if queries, err = eval.DemoValidation(); err != nil {
				return nil, nil, err
			}
			from = "the demo's validation queries"
		}
	default:
		return engine, func(context.Context) error { return nil }, nil
	}
	choose := func(ctx context.Context) error {
		queries, from := queries, from
		if validation == "" && clicks != nil {
			judged, err := ClickValidation(ctx, clicks, log)
			if err != nil {
				return fmt.Errorf("--validation-from-clicks: %w", err)
			}
			if len(judged) > 0 {
				queries, from = judged, "--validation-from-clicks"
			}
		}
		if len(queries) == 0 {
			log.Info("no validation queries: the default re-ranker stays " + engine.DefaultStrategy())
			return nil
		}
		log.Info("choosing the default re-ranker", "queries", len(queries), "from", from, "candidates", strings.Join(search.SelectCandidates, ","))
		start := time.Now()
		sel, err := engine.SelectDefault(ctx, queries)
		if err != nil {
			return fmt.Errorf("%s: %w", from, err)
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
		if d := engine.Decision(); d != nil {
			log.Info("per-query decision fitted on the validation queries", "adopted", d.Adopted, "rule", d.Text, "reason", d.Reason)
		}
		return nil
	}
	return engine, choose, nil
}

// ClickValidation is the validation queries, as a --validation file gives
// them, that the search clicks of events judge (feedback.Judgments, with
// its defaults), logging how many.
func ClickValidation(ctx context.Context, events feedback.Log, log *slog.Logger) ([]search.LabelledQuery, error) {
	c, err := feedback.CollectLog(ctx, events)
	if err != nil {
		return nil, err
	}
	judged, m := feedback.Judgments(c.Lists(feedback.Search), feedback.JudgeOptions{})
	queries := make([]search.LabelledQuery, len(judged))
	relevant := 0
	for i, j := range judged {
		queries[i] = search.LabelledQuery{Query: j.Query, Relevant: make(map[string]bool, len(j.Relevant))}
		for _, id := range j.Relevant {
			queries[i].Relevant[id] = true
		}
		relevant += len(j.Relevant)
	}
	log.Info("click judgments", "events", c.Events(), "queries", len(queries), "relevant", relevant, "em_iterations", m.Iter, "log", events.Where())
	return queries, nil
}

// OpenEvents opens the event log of a deployment's server: the stream of
// b's Redis, or files under cacheRoot/events, kept within ret.
func OpenEvents(b *Backends, cacheRoot string, ret feedback.Retention) (feedback.Log, error) {
	if b.Redis != nil {
		return feedback.NewRedisLog(b.Redis.Client(), "", ret)
	}
	return feedback.OpenFileLog(filepath.Join(cacheRoot, "events"), ret)
}

// OpenIndex opens the index in dir, or the demo index (built on first use
// under cacheRoot, reporting its progress) when dir is empty.
func OpenIndex(ctx context.Context, dir, cacheRoot string, log *slog.Logger, progress func(stage string, done, total int)) (*index.Index, string, error) {
	demo := dir == ""
	if demo {
		var err error
		if dir, err = DemoIndex(ctx, cacheRoot, log, func(done, total int) {
			progress("building the demo index", done, total)
		}); err != nil {
			return nil, "", err
		}
	} else if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err != nil {
		return nil, "", fmt.Errorf("no index in %s: build one with `kernelrank ingest --data %s CORPUS`", dir, dir)
	}
	progress("opening the index", 0, 0)
	ix, err := OpenUnheld(dir)
	if errors.Is(err, index.ErrIncompatible) && demo {
		// A demo index an older version built: build it again.
		log.Info("rebuilding the demo index in the current format", "dir", dir, "was", err)
		if err = os.RemoveAll(dir); err == nil {
			return OpenIndex(ctx, "", cacheRoot, log, progress)
		}
	}
	if err != nil {
		return nil, "", err
	}
	return ix, dir, nil
}

// OpenUnheld opens (or creates) the index in dir, saying which process
// holds it when another does, not the bare "timeout" of bolt's lock: a
// restart while the old process still shuts down meets it too.
func OpenUnheld(dir string) (*index.Index, error) {
	ix, err := index.Open(dir)
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, fmt.Errorf("another kernelrank process holds %s (the lock of %s; an index is opened by one process at a time): "+
			"stop it (a server that is shutting down lets go within its --shutdown-timeout), or use another --cache-dir, "+
			"or a copy of the index with --data", dir, filepath.Join(dir, "store", "root.bolt"))
	}
	return ix, err
}

// NewSocialService serves the social data in dir (the social store under
// cacheRoot when empty, or the generated demo network when there is none)
// with the models of b's store, for a process that only trains; with
// Redis, servers starting together train a missing model once (b's locks).
// It returns the directory served ("" for the store's data).
func NewSocialService(ctx context.Context, dir, learner, cacheRoot string, b *Backends, log *slog.Logger) (*recommend.Service, string, error) {
	opts := recommend.ServiceOptions{Options: recommend.Options{Learner: learner, Log: log}}
	if b.Redis != nil {
		opts.Locks = b.Redis
	}
	if dir == "" {
		ds, ok, err := live.ReadDir(filepath.Join(cacheRoot, "social"))
		if err != nil {
			return nil, "", err
		}
		if ok {
			svc, err := recommend.NewService(ctx, fixedSource{ds}, b.Store, opts)
			return svc, "", err
		}
		if dir, err = DemoSocial(cacheRoot, log); err != nil {
			return nil, "", err
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	svc, err := recommend.NewService(ctx, recommend.DirSource{Dir: dir, Log: log}, b.Store, opts)
	return svc, dir, err
}
