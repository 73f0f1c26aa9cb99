package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/deploy"
)

func ingest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kernelrank ingest (--data DIR | --redis URL) [--stop-on-error] CORPUS...\n\n"+
			"CORPUS is a JSONL file ({\"id\",\"tags\":[...],\"title\",\"image\":\"path\"} or \"features\":[...] a line)\n"+
			"or a directory (holding corpus.jsonl, or images with NAME.tags sidecar files).\n"+
			"With --redis the docs go into the corpus change log that every server of the deployment applies,\n"+
			"and the images into its blob store.")
		fs.PrintDefaults()
	}
	data := fs.String("data", "", "index directory to create or update")
	redisURL := fs.String("redis", "", "the Redis of a deployment (redis://HOST:PORT/DB or redis+cluster://H1:P1,...): ingest into its corpus change log")
	cf := addCorpusFlags(fs)
	stop := fs.Bool("stop-on-error", false, "stop at the first bad line or image instead of skipping it")
	if err := parse(fs, args); err != nil {
		return err
	}
	if (*data == "") == (*redisURL == "") || fs.NArg() == 0 {
		fs.Usage()
		return errors.New("ingest needs one of --data DIR and --redis URL, and at least one corpus")
	}
	progress := func(done, total int) {
		fmt.Fprintf(stderr, "\ringested %d/%d", done, total)
		if done == total {
			fmt.Fprintln(stderr)
		}
	}
	var rep index.Report
	var err error
	if *redisURL != "" {
		rep, err = deploy.IngestRedis(ctx, *redisURL, cf.blobOptions(), fs.Args(), *stop, progress)
	} else {
		rep, err = deploy.IngestFiles(ctx, *data, fs.Args(), *stop, progress)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(stdout, "skipped %s:%d %s: %s\n", p.File, p.Line, p.ID, p.Reason)
	}
	fmt.Fprintf(stdout, "added %d, skipped %d\n", rep.Added, rep.Skipped)
	return err
}
