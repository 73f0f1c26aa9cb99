package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/search"
	"github.com/kernelrank/kernelrank/server"
	"github.com/prometheus/client_golang/prometheus"
)

type serveFlags struct {
	set               *flag.FlagSet
	shared            sharedFlags
	addr, token       *string
	level, format     *string
	timeout           *time.Duration
	maxK, maxWindow   *int
	noSocial, noCache *bool
	cacheBytes        *int64
}

func newServeFlags(stderr io.Writer) serveFlags {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	return serveFlags{
		set:        fs,
		shared:     addSharedFlags(fs, "recommend-learner"),
		addr:       fs.String("addr", "127.0.0.1:8080", "address to listen on"),
		token:      fs.String("admin-token", "", "bearer token for the admin endpoints (POST/DELETE /v1/images, /v1/jobs); empty disables them"),
		timeout:    fs.Duration("request-timeout", 30*time.Second, "per-request deadline"),
		maxK:       fs.Int("max-k", 1000, "largest k a search may ask for"),
		maxWindow:  fs.Int("max-window", 1000, "largest candidate window a search may ask for"),
		level:      fs.String("log-level", "info", "debug, info, warn or error"),
		format:     fs.String("log-format", "text", "text or json"),
		noSocial:   fs.Bool("no-social", false, "serve no recommendations (the /v1/users endpoints answer 404)"),
		cacheBytes: fs.Int64("cache-bytes", cache.DefaultBytes, "byte budget of the in-process cache of rankings and learned kernels (without --redis)"),
		noCache:    fs.Bool("no-cache", false, "cache no ranking or kernel: every search computes (its rerank.cache says \"off\")"),
	}
}

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	f := newServeFlags(stderr)
	if err := parse(f.set, args); err != nil {
		return err
	}
	if f.set.NArg() > 0 {
		return fmt.Errorf("serve: unexpected arguments %q", f.set.Args())
	}
	log, err := newLogger(stderr, *f.level, *f.format)
	if err != nil {
		return err
	}
	sh := f.shared
	reg := prometheus.NewRegistry()
	b, err := openBackends(ctx, *sh.redis, *sh.cacheDir, *f.cacheBytes, *f.noCache, reg, log)
	if err != nil {
		return err
	}
	defer b.Close()
	ix, dir, err := openIndex(ctx, *sh.data, *sh.cacheDir, log)
	if err != nil {
		return err
	}
	defer ix.Close()
	engine, choose, err := newEngine(ix, b, sh, log)
	if err != nil {
		return err
	}
	// The server answers with the built-in default until the choice is made.
	go func() {
		if err := choose(ctx); err != nil && ctx.Err() == nil {
			log.Error("the default re-ranker stays "+engine.DefaultStrategy(), "err", err)
		}
	}()
	deps := jobDeps{social: *sh.social, log: log, search: func(context.Context) (*search.Engine, error) { return engine, nil }}
	var svc *recommend.Service
	var socialDir string
	if !*f.noSocial {
		if svc, socialDir, err = newSocialService(ctx, *sh.social, *sh.learner, *sh.cacheDir, b, log); err != nil {
			return err
		}
		if err := svc.Start(); err != nil {
			return fmt.Errorf("--recommend-learner: %w", err)
		}
		deps.recommend = func(context.Context) (*recommend.Service, error) { return svc, nil }
	}
	// Without --redis jobs run here, one at a time; with it, in the
	// `kernelrank worker` processes that share the queue.
	queue, err := openQueue(ctx, *sh.redis, jobs.DefaultQueue, newHandler(deps), log)
	if err != nil {
		return err
	}
	defer queue.Close()
	log.Info("cache", "backend", backendName(b), "models", storeName(b, *sh.cacheDir))
	srv := server.New(ix, server.Config{
		Jobs:           queue,
		Social:         svc,
		SocialData:     socialDir,
		AdminToken:     *f.token,
		MaxK:           *f.maxK,
		MaxWindow:      *f.maxWindow,
		RequestTimeout: *f.timeout,
		ImageDir:       filepath.Join(dir, "uploads"),
		Search:         engine,
		Registry:       reg,
	}, log)
	return srv.Serve(ctx, *f.addr)
}

func backendName(b *backends) string {
	if b.cache == nil {
		return "off"
	}
	return b.cache.Backend()
}

func storeName(b *backends, cacheRoot string) string {
	if b.redis != nil {
		return "redis"
	}
	return filepath.Join(cacheRoot, "models")
}

// demoSocial returns the directory of the generated demo network, writing
// it on first use (under root/demo).
func demoSocial(root string, log *slog.Logger) (string, error) {
	dir := filepath.Join(root, "demo", fmt.Sprintf("social-%d", demo.DefaultSocialSeed))
	if _, err := os.Stat(filepath.Join(dir, "users.jsonl")); err == nil {
		return dir, nil
	}
	log.Info("generating the demo social network (first start only)", "dir", dir)
	d, err := demo.GenerateSocial(demo.DefaultSocialSeed, demo.SocialOptions{})
	if err != nil {
		return "", err
	}
	tmp := dir + ".building"
	_ = os.RemoveAll(tmp)
	if err := d.WriteDir(tmp); err != nil {
		return "", err
	}
	return dir, os.Rename(tmp, dir)
}

func cacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return dir
	}
	return os.TempDir()
}

// demoIndex returns the demo index directory, building it from the bundled
// corpus on first use (under cacheRoot/demo).
func demoIndex(ctx context.Context, cacheRoot string, log *slog.Logger) (string, error) {
	root := filepath.Join(cacheRoot, "demo")
	dir := filepath.Join(root, "index")
	if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err == nil {
		log.Info("serving the demo corpus", "index", dir)
		return dir, nil
	}
	log.Info("building the demo index (first start only)", "dir", root)
	jsonl, err := demo.Extract(filepath.Join(root, "corpus"))
	if err != nil {
		return "", err
	}
	tmp := dir + ".building"
	_ = os.RemoveAll(tmp)
	rep, err := ingestFiles(ctx, tmp, []string{jsonl}, false, func(done, total int) {
		if done == total || done%500 == 0 {
			log.Info("ingesting demo images", "done", done, "total", total)
		}
	})
	if err != nil {
		return "", err
	}
	log.Info("demo index built", "added", rep.Added, "skipped", rep.Skipped)
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return dir, nil
}
