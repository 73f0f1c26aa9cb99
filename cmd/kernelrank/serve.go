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
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/search"
	"github.com/kernelrank/kernelrank/server"
	"github.com/prometheus/client_golang/prometheus"
)

type serveFlags struct {
	set                     *flag.FlagSet
	addr, data, token       *string
	level, format           *string
	timeout                 *time.Duration
	maxK, maxWindow, window *int
	social, learner         *string
	noSocial                *bool
	cacheBytes              *int64
	noCache                 *bool
	cacheDir                *string
}

func newServeFlags(stderr io.Writer) serveFlags {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	return serveFlags{
		set:       fs,
		addr:      fs.String("addr", "127.0.0.1:8080", "address to listen on"),
		data:      fs.String("data", "", "index directory (built with `kernelrank ingest`); empty serves the bundled demo corpus"),
		token:     fs.String("admin-token", "", "bearer token for the admin endpoints (POST/DELETE /v1/images, /v1/jobs); empty disables them"),
		timeout:   fs.Duration("request-timeout", 30*time.Second, "per-request deadline"),
		maxK:      fs.Int("max-k", 1000, "largest k a search may ask for"),
		maxWindow: fs.Int("max-window", 1000, "largest candidate window a search may ask for"),
		window:    fs.Int("window", 200, "default candidate window re-ranked per query"),
		level:     fs.String("log-level", "info", "debug, info, warn or error"),
		format:    fs.String("log-format", "text", "text or json"),
		social: fs.String("social", "", "social data for the /v1/users recommendations: a directory in the import format, "+
			"or ego-Facebook / BlogCatalog as published; empty serves the generated demo network"),
		noSocial: fs.Bool("no-social", false, "serve no recommendations (the /v1/users endpoints answer 404)"),
		learner:  fs.String("recommend-learner", recommend.DefaultLearner, "kernel-combination learner of the recommenders, trained on start"),

		cacheBytes: fs.Int64("cache-bytes", cache.DefaultBytes, "byte budget of the in-process cache of rankings and learned kernels"),
		noCache:    fs.Bool("no-cache", false, "cache nothing: every search computes (its rerank.cache says \"off\")"),
		cacheDir:   fs.String("cache-dir", filepath.Join(cacheDir(), "kernelrank"), "where the demo data and, without Redis, the trained models (models/) are kept"),
	}
}

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	f := newServeFlags(stderr)
	if err := parse(f.set, args); err != nil {
		return err
	}
	log, err := newLogger(stderr, *f.level, *f.format)
	if err != nil {
		return err
	}
	dir := *f.data
	if dir == "" {
		if dir, err = demoIndex(ctx, *f.cacheDir, log); err != nil {
			return err
		}
	} else if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err != nil {
		return fmt.Errorf("no index in %s: build one with `kernelrank ingest --data %s CORPUS`", dir, dir)
	}
	ix, err := index.Open(dir)
	if err != nil {
		return err
	}
	defer ix.Close()
	var svc *recommend.Service
	if !*f.noSocial {
		if svc, err = socialService(ctx, *f.social, *f.learner, *f.cacheDir, log); err != nil {
			return err
		}
	}
	reg := prometheus.NewRegistry()
	var ld *cache.Loader
	if !*f.noCache {
		mem, err := cache.NewMemory(*f.cacheBytes)
		if err != nil {
			return err
		}
		defer mem.Close()
		ld = cache.NewLoader(mem, cache.NewMetrics(reg, mem.Backend()))
	}
	// Jobs run here, one at a time; --redis would share them with workers.
	jobQueue := jobs.NewLocal(newHandler(jobDeps{social: *f.social, log: log}), 0)
	defer jobQueue.Close()
	srv := server.New(ix, server.Config{
		Jobs:           jobQueue,
		Social:         svc,
		AdminToken:     *f.token,
		MaxK:           *f.maxK,
		MaxWindow:      *f.maxWindow,
		RequestTimeout: *f.timeout,
		ImageDir:       filepath.Join(dir, "uploads"),
		Search:         search.New(ix, ld, search.Options{Window: *f.window}),
		Registry:       reg,
	}, log)
	return srv.Serve(ctx, *f.addr)
}

// socialService serves the social data in dir (the generated demo network
// when dir is empty) with the models stored under root/models: the default
// recommender is loaded from there, or trained and stored, in the
// background.
func socialService(ctx context.Context, dir, learner, root string, log *slog.Logger) (*recommend.Service, error) {
	if dir == "" {
		var err error
		if dir, err = demoSocial(root, log); err != nil {
			return nil, err
		}
	}
	store, err := cache.NewDirStore(filepath.Join(root, "models"))
	if err != nil {
		return nil, fmt.Errorf("model store: %w", err)
	}
	svc, err := recommend.NewService(ctx, recommend.DirSource{Dir: dir, Log: log}, store,
		recommend.ServiceOptions{Options: recommend.Options{Learner: learner, Log: log}})
	if err != nil {
		return nil, err
	}
	if err := svc.Start(); err != nil {
		return nil, fmt.Errorf("--recommend-learner: %w", err)
	}
	return svc, nil
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
