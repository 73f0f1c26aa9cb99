package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/jobs"
)

// worker runs the retraining jobs queued in Redis until interrupted; any
// number of workers may share a queue.
func worker(ctx context.Context, args []string, stderr io.Writer, handler func(jobDeps) jobs.Handler) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	redisURL := fs.String("redis", "", "the Redis of the job queue: redis://HOST:PORT/DB or redis+cluster://H1:P1,H2:P2 (required)")
	concurrency := fs.Int("concurrency", 1, "jobs run at once")
	queue := fs.String("queue", "kernelrank", "job queue name")
	social := fs.String("social", "", "social data of the jobs that name none; empty: the generated demo network")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	format := fs.String("log-format", "text", "text or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("worker: unexpected arguments %q", fs.Args())
	}
	if *redisURL == "" {
		return errors.New("worker: --redis is required (the queue the server and `kernelrank retrain --redis` fill)")
	}
	ro, err := cache.ParseRedisURL(*redisURL)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, *level, *format)
	if err != nil {
		return err
	}
	h := handler(jobDeps{social: *social, log: log})
	return jobs.Worker(ctx, ro, jobs.Options{Queue: *queue, Log: log}, *concurrency, h)
}
