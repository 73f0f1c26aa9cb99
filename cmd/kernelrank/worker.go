package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/deploy"
	"github.com/kernelrank/kernelrank/internal/feedback"
	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/internal/retrain"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/search"
	"github.com/prometheus/client_golang/prometheus"
)

// worker runs the retraining jobs queued in Redis until interrupted; any
// number of workers may share a queue. It opens what a job needs on the
// first job that needs it: the social data and the model store for social
// jobs, for search jobs its replica of the corpus (under --cache-dir,
// following the corpus change log from then on).
func worker(ctx context.Context, args []string, stderr io.Writer, handler func(retrain.Deps) jobs.Handler, split func(retrain.Deps) func(jobs.Spec) *jobs.Split) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sh := addSharedFlags(fs, "learner")
	cf := addCorpusFlags(fs)
	concurrency := fs.Int("concurrency", 1, "jobs run at once")
	queue := fs.String("queue", jobs.DefaultQueue, "job queue name")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	format := fs.String("log-format", "text", "text or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("worker: unexpected arguments %q", fs.Args())
	}
	if *sh.redis == "" {
		return errors.New("worker: --redis is required (the queue the server and `kernelrank retrain --redis` fill)")
	}
	if *concurrency < 1 {
		return fmt.Errorf("worker: --concurrency must be at least 1, got %d", *concurrency)
	}
	ro, err := cache.ParseRedisURL(*sh.redis)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, *level, *format)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	b, err := deploy.OpenBackends(ctx, *sh.redis, *sh.cacheDir, 0, false, reg, log)
	if err != nil {
		return err
	}
	defer b.Close()
	var c *deploy.Corpus
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	// The worker follows the social store as the servers do: a job trains
	// on what they serve.
	var soc *deploy.Social
	defer func() {
		if soc != nil {
			soc.Close()
		}
	}()
	social := &retrain.Lazy[*recommend.Service]{Open: func(ctx context.Context) (*recommend.Service, error) {
		var err error
		if soc, err = deploy.OpenSocial(ctx, *sh.social, *sh.learner, *sh.cacheDir, b, log); err != nil {
			return nil, err
		}
		return soc.Service, nil
	}}
	images := &retrain.Lazy[*search.Engine]{Open: func(ctx context.Context) (*search.Engine, error) {
		// The worker's replica of the corpus, following the log as the
		// servers' do: its rankings carry the version they serve.
		var err error
		c, err = deploy.OpenCorpus(ctx, cf.options(sh, filepath.Join(*sh.cacheDir, "worker-replica")), b, reg, log, func(string, int, int) {})
		if err != nil {
			return nil, err
		}
		// A worker precomputes what the servers serve: the same choice.
		var clicks feedback.Log
		if *sh.fromClicks { // the servers' log: the worker only reads it
			clicks, err = deploy.OpenEvents(b, *sh.cacheDir, feedback.Retention{})
			if err != nil {
				return nil, err
			}
		}
		engine, choose, err := deploy.NewEngine(c.Ix, b, *sh.validation, clicks, *sh.data == "", search.Options{Window: *sh.window}, log)
		if err != nil {
			return nil, err
		}
		return engine, choose(ctx)
	}}
	deps := retrain.Deps{Social: *sh.social, Log: log, Recommend: social.Get, Search: images.Get}
	o := jobs.Options{Queue: *queue, Log: log}
	if split != nil {
		o.Split = split(deps)
	}
	return jobs.Worker(ctx, ro, o, *concurrency, handler(deps))
}
