package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kernelrank/kernelrank/index"
)

func ingest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kernelrank ingest --data DIR [--stop-on-error] CORPUS...\n\n"+
			"CORPUS is a JSONL file ({\"id\",\"tags\":[...],\"title\",\"image\":\"path\"} or \"features\":[...] a line)\n"+
			"or a directory (holding corpus.jsonl, or images with NAME.tags sidecar files).")
		fs.PrintDefaults()
	}
	data := fs.String("data", "", "index directory to create or update (required)")
	stop := fs.Bool("stop-on-error", false, "stop at the first bad line or image instead of skipping it")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *data == "" || fs.NArg() == 0 {
		fs.Usage()
		return errors.New("ingest needs --data DIR and at least one corpus")
	}
	rep, err := ingestFiles(ctx, *data, fs.Args(), *stop, func(done, total int) {
		fmt.Fprintf(stderr, "\ringested %d/%d", done, total)
		if done == total {
			fmt.Fprintln(stderr)
		}
	})
	for _, p := range rep.Problems {
		fmt.Fprintf(stdout, "skipped %s:%d %s: %s\n", p.File, p.Line, p.ID, p.Reason)
	}
	fmt.Fprintf(stdout, "added %d, skipped %d\n", rep.Added, rep.Skipped)
	return err
}

// ingestFiles ingests each corpus (JSONL file or directory) into the index at dir.
func ingestFiles(ctx context.Context, dir string, corpora []string, stopOnError bool, progress func(done, total int)) (index.Report, error) {
	var total index.Report
	ix, err := openUnheld(dir)
	if err != nil {
		return total, err
	}
	defer ix.Close()
	opts := index.IngestOptions{StopOnError: stopOnError, Progress: progress}
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
