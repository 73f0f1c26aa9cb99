package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/eval"
	"github.com/kernelrank/kernelrank/internal/feedback"
)

const evalClicksUsage = "usage: kernelrank eval clicks [--redis URL | --events DIR] [--generate SESSIONS [--seed N]] [--json]"

// evalClicks reports click-through and MRR of clicks per ranker from the
// event log a server keeps, or from a click log it first generates.
func evalClicks(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval clicks", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, evalClicksUsage); fs.PrintDefaults() }
	redisURL := fs.String("redis", "", "read the event stream of this Redis (the servers' --redis)")
	dir := fs.String("events", filepath.Join(cacheDir(), "kernelrank", "events"), "without --redis: the event files of a server (its --cache-dir/events)")
	generate := fs.Int("generate", 0, "first write a click log of this many simulated sessions to --events (which must hold none): "+
		"three re-rankers (sharp, blurred, random) of 20 queries, clicks from a position-based model; sharp is the best")
	seed := fs.Uint64("seed", 1, "with --generate: the simulation's seed")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("eval clicks: unexpected arguments %q", fs.Args())
	}
	if *generate < 0 || *generate > 0 && *redisURL != "" {
		return fmt.Errorf("eval clicks: --generate takes a positive count and writes to --events, not to --redis")
	}
	var log feedback.Log
	if *redisURL != "" {
		r, err := cache.OpenRedis(ctx, *redisURL, "")
		if err != nil {
			return err
		}
		defer r.Close()
		if log, err = feedback.NewRedisLog(r.Client(), "", feedback.Retention{}); err != nil {
			return err
		}
	} else {
		if _, err := os.Stat(*dir); err != nil && *generate == 0 {
			return fmt.Errorf("eval clicks: no event log: %w", err)
		}
		l, err := feedback.OpenFileLog(*dir, feedback.Retention{})
		if err != nil {
			return err
		}
		defer l.Close()
		log = l
	}
	if *generate > 0 {
		if err := writeSimulated(ctx, log, *generate, *seed); err != nil {
			return err
		}
	}
	c, err := feedback.CollectLog(ctx, log)
	if err != nil {
		return err
	}
	if c.Events() == 0 {
		return fmt.Errorf("eval clicks: no events in %s", log.Where())
	}
	rep := eval.Clicks(c)
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	fmt.Fprintln(stdout, "events of", log.Where())
	eval.PrintClicks(stdout, rep)
	return nil
}

// writeSimulated appends a simulated click log of sessions sessions to an
// empty log.
func writeSimulated(ctx context.Context, log feedback.Log, sessions int, seed uint64) error {
	some := false
	if err := log.Scan(ctx, func(feedback.Event) error { some = true; return io.EOF }); err != nil && err != io.EOF {
		return err
	}
	if some {
		return fmt.Errorf("eval clicks: --generate writes to an empty log only: %s holds events", log.Where())
	}
	sim, err := feedback.Simulate(feedback.SimOptions{
		Rankers: []feedback.SimRanker{{Name: "sharp", Noise: 0.1}, {Name: "blurred", Noise: 0.4}, {Name: "random", Noise: 5}},
		Queries: 20, Items: 30, K: 10, Sessions: sessions, Relevant: 0.3, High: 0.8, Low: 0.1, Seed: seed,
	})
	if err != nil {
		return err
	}
	for i := 0; i < len(sim.Events); i += feedback.MaxBatch {
		if err := log.Append(ctx, sim.Events[i:min(i+feedback.MaxBatch, len(sim.Events))]); err != nil {
			return err
		}
	}
	return nil
}
