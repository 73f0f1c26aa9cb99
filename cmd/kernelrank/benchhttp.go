package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kernelrank/kernelrank/internal/bench"
)

// defaultBenchQueries are frequent tags of the demo corpus.
const defaultBenchQueries = "computer,food,shape,symbol,people,sign,geometry,stars,animal,flag,card,icon," +
	"menu,mammal,transport,recreation,fruit,office,pattern,arrow,tool,map,plant,building"

func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && args[0] == "http":
		return benchHTTP(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "corpus":
		return benchCorpus(ctx, args[1:], stdout, stderr)
	}
	return errors.New("bench: usage: kernelrank bench http|corpus [flags] (see kernelrank bench http -h, kernelrank bench corpus -h)")
}

func benchHTTP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench http", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("url", "", "base URL of a running server to measure; empty: start one in-process on 127.0.0.1 with its caches and rate limit off (--no-cache --rate-limit 0)")
	duration := fs.Duration("duration", 5*time.Second, "time spent on each row")
	maxRequests := fs.Int("requests", 10000, "most requests of each row")
	concurrency := fs.String("concurrency", "1,8", "comma-separated numbers of concurrent clients; each gives a row per request kind")
	queries := fs.String("queries", defaultBenchQueries, "comma-separated queries the searches cycle through (frequent demo tags)")
	user := fs.String("user", "u001", "the user whose friends are asked for")
	ready := fs.Duration("ready-timeout", 10*time.Minute, "how long to wait for /readyz (the first start on the demo builds its index)")
	data := fs.String("data", "", "in-process server: index directory (empty: the demo corpus)")
	social := fs.String("social", "", "in-process server: social data (empty: the demo network)")
	cacheRoot := fs.String("cache-dir", "", "in-process server: its --cache-dir (empty: serve's default, where the demo is kept)")
	if err := parse(fs, args); err != nil {
		return err
	}
	clients, err := parseCounts(*concurrency)
	if err != nil {
		return fmt.Errorf("bench http: --concurrency: %w", err)
	}
	qs := strings.Split(*queries, ",")
	if *duration <= 0 || *maxRequests <= 0 || slices.Contains(qs, "") {
		return errors.New("bench http: --duration and --requests must be positive, --queries non-empty")
	}
	o := bench.HTTPOptions{URL: *target, Duration: *duration, Requests: *maxRequests, Clients: clients, Queries: qs, User: *user, Ready: *ready}
	if *target == "" {
		// Every client is 127.0.0.1: the per-client rate limit is off.
		serveArgs := []string{"--no-cache", "--rate-limit", "0", "--log-level", "warn"}
		for name, v := range map[string]string{"--data": *data, "--social": *social, "--cache-dir": *cacheRoot} {
			if v != "" { // unset, serve's default or KERNELRANK_* variable applies
				serveArgs = append(serveArgs, name, v)
			}
		}
		o.Serve = func(ctx context.Context, addr string) error {
			return serve(ctx, append([]string{"--addr", addr}, serveArgs...), stderr)
		}
	}
	return bench.HTTP(ctx, o, stdout, stderr)
}

func parseCounts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("%q: want integers from 1 to 1024", f)
		}
		out = append(out, n)
	}
	return out, nil
}
