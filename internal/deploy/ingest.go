package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/index/blob"
	"github.com/kernelrank/kernelrank/index/replica"
)

// IngestRedis ingests the corpora into the change log of the deployment
// on redisURL, the images into the blob store of bo.
func IngestRedis(ctx context.Context, redisURL string, bo BlobOptions, corpora []string, stop bool, progress func(done, total int)) (index.Report, error) {
	r, err := cache.OpenRedis(ctx, redisURL, "")
	if err != nil {
		return index.Report{}, err
	}
	defer r.Close()
	return IngestToLog(ctx, replica.NewLog(r.Client(), replica.DefaultPrefix), NewBlobs(bo, r), corpora, stop, progress)
}

// IngestFiles ingests each corpus (JSONL file or directory) into the index at dir.
func IngestFiles(ctx context.Context, dir string, corpora []string, stopOnError bool, progress func(done, total int)) (index.Report, error) {
	ix, err := OpenUnheld(dir)
	if err != nil {
		return index.Report{}, err
	}
	defer ix.Close()
	return IngestInto(ctx, ix, corpora, index.IngestOptions{StopOnError: stopOnError, Progress: progress})
}

// IngestToLog ingests each corpus into the corpus change log: the images
// into blobs, each batch of docs as one entry. A scratch index validates
// the docs as a replica will.
func IngestToLog(ctx context.Context, l *replica.Log, blobs blob.Store, corpora []string, stopOnError bool, progress func(done, total int)) (index.Report, error) {
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
	return IngestInto(ctx, ix, corpora, index.IngestOptions{
		StopOnError: stopOnError,
		Progress:    progress,
		Blobs:       blobs,
		Write: func(ctx context.Context, docs []index.Doc) error {
			_, err := l.Append(ctx, replica.Entry{Add: docs})
			return err
		},
	})
}

// IngestInto ingests each corpus (JSONL file or directory) with opts.
func IngestInto(ctx context.Context, ix *index.Index, corpora []string, opts index.IngestOptions) (index.Report, error) {
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
