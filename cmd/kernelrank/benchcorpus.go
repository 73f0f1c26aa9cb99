package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kernelrank/kernelrank/internal/bench"
)

// benchCorpus parses the flags of `kernelrank bench corpus` and runs it.
func benchCorpus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench corpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	redisURL := fs.String("redis", "", "the Redis to measure on (required); the keys it writes have a prefix of their own and are removed")
	rates := fs.String("rates", "10,100", "comma-separated upload rates (per second) of the lag rows")
	duration := fs.Duration("duration", 10*time.Second, "time spent at each rate")
	ingestDocs := fs.Int("ingest-docs", 20000, "synthetic docs (297-d features, no image) of the ingest rows")
	bootDocs := fs.Int("bootstrap-docs", 100000, "synthetic docs of the start-up rows (0: skip them)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *redisURL == "" {
		return errors.New("bench corpus: --redis is required")
	}
	var rateList []int
	for _, s := range strings.Split(*rates, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || r < 1 {
			return fmt.Errorf("bench corpus: --rates: %q is not a positive number", s)
		}
		rateList = append(rateList, r)
	}
	return bench.Corpus(ctx, bench.CorpusOptions{Redis: *redisURL, Rates: rateList, Duration: *duration, IngestDocs: *ingestDocs, BootstrapDocs: *bootDocs}, stdout, stderr)
}
