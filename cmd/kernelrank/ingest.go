package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/index/blob"
	"github.com/kernelrank/kernelrank/index/replica"
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
		rep, err = ingestRedis(ctx, *redisURL, cf, fs.Args(), *stop, progress)
	} else {
		rep, err = ingestFiles(ctx, *data, fs.Args(), *stop, progress)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(stdout, "skipped %s:%d %s: %s\n", p.File, p.Line, p.ID, p.Reason)
	}
	fmt.Fprintf(stdout, "added %d, skipped %d\n", rep.Added, rep.Skipped)
	return err
}

// ingestRedis ingests the corpora into the change log of the deployment
// on redisURL.
func ingestRedis(ctx context.Context, redisURL string, cf corpusFlags, corpora []string, stop bool, progress func(done, total int)) (index.Report, error) {
	r, err := cache.OpenRedis(ctx, redisURL, "")
	if err != nil {
		return index.Report{}, err
	}
	defer r.Close()
	b := &backends{redis: r}
	return ingestToLog(ctx, replica.NewLog(r.Client(), replica.DefaultPrefix), newBlobs(cf, b), corpora, stop, progress)
}

// ingestFiles ingests each corpus (JSONL file or directory) into the index at dir.
func ingestFiles(ctx context.Context, dir string, corpora []string, stopOnError bool, progress func(done, total int)) (index.Report, error) {
	ix, err := openUnheld(dir)
	if err != nil {
		return index.Report{}, err
	}
	defer ix.Close()
	return ingestInto(ctx, ix, corpora, index.IngestOptions{StopOnError: stopOnError, Progress: progress})
}

// ingestToLog ingests each corpus into the corpus change log: the images
// into blobs, each batch of docs as one entry. A scratch index validates
// the docs as a replica will.
func ingestToLog(ctx context.Context, l *replica.Log, blobs blob.Store, corpora []string, stopOnError bool, progress func(done, total int)) (index.Report, error) {
	tmp, err := os.MkdirTemp("", "kernelrank-ingest-")
	if err != nil {
		return index.Report{}, err
	}
	defer os.RemoveAll(tmp)
	ix, err := index.Open(tmp)
	if err != nil {
		return index.Report{}, err
	}
	defer ix.Close()
	return ingestInto(ctx, ix, corpora, index.IngestOptions{
		StopOnError: stopOnError,
		Progress:    progress,
		Blobs:       blobs,
		Write: func(ctx context.Context, docs []index.Doc) error {
			_, err := l.Append(ctx, replica.Entry{Add: docs})
			return err
		},
	})
}

// ingestInto ingests each corpus (JSONL file or directory) with opts.
func ingestInto(ctx context.Context, ix *index.Index, corpora []string, opts index.IngestOptions) (index.Report, error) {
	var total index.Report
	for _, path := range corpora {
		info, err := os.Stat(path)
		if err != nil {
			return total, err
		}
		var rep index.Report
		if info.IsDir() {
			rep, err = index.IngestDir(ctx, ix, path, opts)
		} else {
			f, ferr := os.Open(path)
			if ferr != nil {
				return total, ferr
			}
			rep, err = index.IngestJSONL(ctx, ix, f, filepath.Dir(path), opts)
			f.Close()
		}
		total.Added += rep.Added
		total.Skipped += rep.Skipped
		total.Problems = append(total.Problems, rep.Problems...)
		if err != nil {
			return total, fmt.Errorf("%s: %w", path, err)
		}
	}
	return total, nil
}
