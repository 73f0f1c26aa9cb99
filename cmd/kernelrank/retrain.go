package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/deploy"
	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/internal/retrain"
	"github.com/kernelrank/kernelrank/recommend"
)

// retrainCommand runs a retraining job and prints the versions it published:
// in this process without --redis, otherwise through the Redis queue
// (a `kernelrank worker` runs it), following it until it ends unless
// --detach. Interrupting it cancels the job.
func retrainCommand(ctx context.Context, args []string, stdout, stderr io.Writer, handler func(retrain.Deps) jobs.Handler) error {
	fs := flag.NewFlagSet("retrain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("target", "", "what to retrain: social, search or all")
	redisURL := fs.String("redis", "", "queue the job in Redis for the \"kernelrank worker\" processes (redis://HOST:PORT/DB or redis+cluster://H1:P1,H2:P2); empty runs it here")
	queue := fs.String("queue", jobs.DefaultQueue, "job queue name (with --redis)")
	social := fs.String("social", "", "social data to learn from (social and all); empty: the worker's, or the demo network here")
	learner := fs.String("learner", "", "kernel-combination learner; empty: the default")
	root := fs.String("cache-dir", filepath.Join(cacheDir(), "kernelrank"), "without --redis: where the models are published (models/); the --cache-dir of the servers that serve them")
	queries := fs.Int("queries", 0, "how many of the most frequent queries to precompute (search and all); 0: the default")
	detach := fs.Bool("detach", false, "print the job id and return without following it (with --redis); the job waits for a worker if none runs yet")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("retrain: unexpected arguments %q", fs.Args())
	}
	if *detach && *redisURL == "" {
		return errors.New("retrain: --detach needs --redis (a job run here ends with the command)")
	}
	spec := jobs.Spec{Target: *target, Social: *social, Learner: *learner, Queries: *queries}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("retrain: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	deps := retrain.Deps{Log: log}
	if *redisURL == "" {
		if spec.Target != jobs.TargetSocial {
			return fmt.Errorf("retrain --target %s: %w", spec.Target, retrain.ErrNoSearchHere)
		}
		// Run here: publish to the model store the servers of this
		// machine read.
		deps.Recommend = (&retrain.Lazy[*recommend.Service]{Open: func(ctx context.Context) (*recommend.Service, error) {
			store, err := cache.NewDirStore(filepath.Join(*root, "models"))
			if err != nil {
				return nil, err
			}
			svc, _, err := deploy.NewSocialService(ctx, *social, cmp.Or(*learner, recommend.DefaultLearner), *root, &deploy.Backends{Store: store}, log)
			return svc, err
		}}).Get
	}
	q, err := retrain.OpenQueue(ctx, *redisURL, *queue, handler(deps), []string{jobs.TargetSocial}, log)
	if err != nil {
		return err
	}
	defer q.Close()
	if *redisURL != "" && !*detach {
		// Followed, a job no worker takes would wait at "0% queued" until
		// interrupted.
		if err := retrain.NeedWorker(ctx, *redisURL, *queue); err != nil {
			return err
		}
	}
	j, err := q.Enqueue(ctx, spec)
	if err != nil {
		return fmt.Errorf("retrain: %w", err)
	}
	if *detach {
		fmt.Fprintln(stdout, j.ID)
		return nil
	}
	j, err = retrain.Follow(ctx, q, j.ID, retrain.NewProgressBar(stderr))
	switch {
	case err != nil:
		return fmt.Errorf("retrain: job %s: %w", j.ID, err)
	case j.Status != jobs.Succeeded:
		return fmt.Errorf("retrain: job %s %s: %s", j.ID, j.Status, j.Error)
	}
	retrain.PrintVersions(stdout, spec.Target, j.Version)
	return nil
}
