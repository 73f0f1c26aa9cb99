package index

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kernelrank/kernelrank/features"
	"github.com/kernelrank/kernelrank/index/blob"
)

const (
	// ingestBatch is the number of records written per index batch: large
	// enough to amortise a scorch segment, small enough that a failure or a
	// cancellation loses little work.
	ingestBatch = 500
	// maxLineLen bounds one JSONL record (a 297-d vector in decimal is ~6 KB).
	maxLineLen = 16 << 20
	// CorpusFile is the file IngestDir looks for first.
	CorpusFile = "corpus.jsonl"
)

// ErrNoDocs is returned by an ingest whose input yields no usable document.
var ErrNoDocs = errors.New("index: no usable documents in the input")

// IngestOptions tune IngestJSONL and IngestDir.
type IngestOptions struct {
	// StopOnError stops at the first bad record, returning its Problem as
	// the error, instead of skipping it. Records before it are written.
	StopOnError bool
	// Progress, if set, is called after each written batch with the number
	// of records processed so far (added or skipped) and the total number of
	// records, or -1 when unknown (IngestJSONL reads a stream).
	Progress func(done, total int)
	// Write, if set, takes each batch instead of the index's Add: a change
	// log, say, that replicas apply. The index then only validates.
	Write func(ctx context.Context, docs []Doc) error
	// Blobs, if set, receives the bytes of every image file, under their
	// hash, and the docs keep no path: any machine reading the store can
	// serve them.
	Blobs blob.Store
}

// Problem is a record that was skipped, and why.
type Problem struct {
	File   string // the JSONL file (empty for an unnamed reader) or the image file
	Line   int    // 1-based line in File; 0 when the input is not line-based
	ID     string // the doc id, when known
	Reason string
}

func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	if p.ID != "" {
		fmt.Fprintf(&b, " (id %q)", p.ID)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(p.Reason)
	return b.String()
}

// Report summarises an ingest. Added counts records written, a later record
// with the id of an earlier one replacing it; Skipped counts Problems.
type Report struct {
	Added, Skipped int
	Problems       []Problem
}

// IngestJSONL adds the documents of r, one JSON object per line with the
// fields of Doc:
//
//	{"id":"1","tags":["sky","sea"],"title":"...","image":"img/1.png","features":[...],"labels":[...]}
//
// A relative image path is resolved against baseDir and stored absolute.
// The image file of a record is read, by GOMAXPROCS workers, for its
// SHA-256 (unless the record gives image_sha256) and, when the record has
// no features, for its features. A bad record
// (malformed JSON, unreadable or corrupt image, invalid doc) is reported in
// the Report and skipped, unless opts.StopOnError. Documents are written in
// batches of 500; when the ingest fails or ctx is cancelled, the batches
// already written stay and nothing else in the index changes. An input with
// no usable record is an error wrapping ErrNoDocs.
func IngestJSONL(ctx context.Context, ix *Index, r io.Reader, baseDir string, opts IngestOptions) (Report, error) {
	base, err := filepath.Abs(baseDir)
	if err != nil {
		return Report{}, err
	}
	var name string
	if f, ok := r.(interface{ Name() string }); ok {
		name = f.Name()
	}
	return ingest(ctx, ix, jsonlSource(r, name, base), -1, opts)
}

// IngestDir adds the documents of dir. If dir holds CorpusFile, that file is
// ingested as by IngestJSONL with image paths relative to dir. Otherwise
// every image file directly in dir (.png, .jpg, .jpeg, .gif; no recursion)
// becomes a doc whose id is the file name, whose features are computed from
// the image, and whose tags come from the sidecar file with the same name
// stem and the extension .tags (preferred) or .txt: one tag per line and/or
// comma-separated, blank entries ignored. An image without a sidecar is a
// Problem.
func IngestDir(ctx context.Context, ix *Index, dir string, opts IngestOptions) (Report, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Report{}, err
	}
	corpus := filepath.Join(dir, CorpusFile)
	f, err := os.Open(corpus)
	if err == nil {
		defer f.Close()
		total := countRecords(f)
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return Report{}, err
		}
		return ingest(ctx, ix, jsonlSource(f, corpus, dir), total, opts)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return Report{}, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Report{}, err
	}
	var images []string
	for _, e := range entries {
		if !e.IsDir() && imageExts[strings.ToLower(filepath.Ext(e.Name()))] {
			images = append(images, e.Name())
		}
	}
	return ingest(ctx, ix, sidecarSource(dir, images), len(images), opts)
}

var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true}

// record is one input document on its way to the index; err is why it must
// be skipped.
type record struct {
	file string
	line int
	doc  Doc
	err  error
}

// source yields records in input order until yield returns false; its error
// is a failure of the input itself (unreadable file), which ends the ingest.
type source func(yield func(record) bool) error

func newScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineLen)
	return sc
}

func jsonlSource(r io.Reader, name, baseDir string) source {
	return func(yield func(record) bool) error {
		sc := newScanner(r)
		line := 0
		for sc.Scan() {
			line++
			b := bytes.TrimSpace(sc.Bytes())
			if len(b) == 0 {
				continue
			}
			rec := record{file: name, line: line}
			if err := json.Unmarshal(b, &rec.doc); err != nil {
				rec.err = fmt.Errorf("malformed JSON: %v", err)
			} else if rec.doc.Image != "" && !filepath.IsAbs(rec.doc.Image) {
				rec.doc.Image = filepath.Join(baseDir, rec.doc.Image)
			}
			if !yield(rec) {
				return nil
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("index: %s: after line %d: %w", name, line, err)
		}
		return nil
	}
}

// countRecords counts the non-blank lines of r, for progress reports.
func countRecords(r io.Reader) int {
	n := 0
	for sc := newScanner(r); sc.Scan(); {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			n++
		}
	}
	return n
}

func sidecarSource(dir string, images []string) source {
	return func(yield func(record) bool) error {
		for _, name := range images {
			path := filepath.Join(dir, name)
			rec := record{file: path, doc: Doc{ID: name, Image: path}}
			rec.doc.Tags, rec.err = readSidecar(dir, strings.TrimSuffix(name, filepath.Ext(name)))
			if !yield(rec) {
				return nil
			}
		}
		return nil
	}
}

func readSidecar(dir, stem string) ([]string, error) {
	for _, ext := range []string{".tags", ".txt"} {
		b, err := os.ReadFile(filepath.Join(dir, stem+ext))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var tags []string
		for _, t := range strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' || r == ',' }) {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, t)
			}
		}
		return tags, nil
	}
	return nil, fmt.Errorf("no sidecar %s.tags or %s.txt", stem, stem)
}

// ingester writes the records of one ingest batch by batch.
type ingester struct {
	ctx   context.Context
	ix    *Index
	opts  IngestOptions
	total int
	v     validator // carries the feature dimension across batches
	rep   Report
}

func ingest(ctx context.Context, ix *Index, src source, total int, opts IngestOptions) (Report, error) {
	in := &ingester{ctx: ctx, ix: ix, opts: opts, total: total, v: validator{an: ix.an, dim: ix.Dim()}}
	batch := make([]record, 0, ingestBatch)
	var err error
	srcErr := src(func(rec record) bool {
		if err = ctx.Err(); err != nil {
			return false
		}
		if batch = append(batch, rec); len(batch) == ingestBatch {
			err = in.flush(batch)
			batch = batch[:0]
		}
		return err == nil
	})
	if err == nil {
		err = srcErr
	}
	if err == nil {
		err = in.flush(batch)
	}
	if err == nil && in.rep.Added == 0 {
		err = fmt.Errorf("%w (%d records skipped)", ErrNoDocs, in.rep.Skipped)
	}
	return in.rep, err
}

// flush computes missing features, validates and writes batch. With
// StopOnError it writes the records before the first bad one and returns
// its Problem.
func (in *ingester) flush(batch []record) error {
	in.readImages(batch)
	if err := in.ctx.Err(); err != nil {
		return err
	}
	docs := make([]Doc, 0, len(batch))
	for i := range batch {
		rec := &batch[i]
		if rec.err == nil {
			rec.err = in.v.check(&rec.doc)
		}
		if rec.err == nil {
			docs = append(docs, rec.doc)
			continue
		}
		p := Problem{File: rec.file, Line: rec.line, ID: rec.doc.ID, Reason: rec.err.Error()}
		in.rep.Problems = append(in.rep.Problems, p)
		in.rep.Skipped++
		if in.opts.StopOnError {
			if err := in.write(docs); err != nil {
				return err
			}
			return p
		}
	}
	return in.write(docs)
}

func (in *ingester) write(docs []Doc) error {
	if len(docs) == 0 {
		return nil
	}
	var err error
	if in.opts.Write != nil {
		err = in.opts.Write(in.ctx, docs)
	} else {
		err = in.ix.Add(docs)
	}
	if err != nil {
		return err
	}
	in.rep.Added += len(docs)
	if in.opts.Progress != nil {
		in.opts.Progress(in.rep.Added+in.rep.Skipped, in.total)
	}
	return nil
}

// readImages fills, in parallel, the image hash of the records that have an
// image file and no hash, and their features when they have none; a
// failure becomes the record's error.
func (in *ingester) readImages(batch []record) {
	var todo []*record
	for i := range batch {
		if r := &batch[i]; r.err == nil && r.doc.Image != "" && (len(r.doc.Features) == 0 || r.doc.ImageSHA256 == "" || in.opts.Blobs != nil) {
			todo = append(todo, r)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		wg.Go(func() {
			for in.ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(todo) {
					return
				}
				todo[i].err = in.readImage(&todo[i].doc)
			}
		})
	}
	wg.Wait()
}

// readImage reads d's image file: its hash, and its features if d has none;
// with a blob store, it stores the bytes there instead of the path.
func (in *ingester) readImage(d *Doc) error {
	raw, err := os.ReadFile(d.Image)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoImage, err)
	}
	if hash := ContentHash(raw); d.ImageSHA256 == "" || in.opts.Blobs != nil {
		d.ImageSHA256 = hash
	}
	if in.opts.Blobs != nil {
		if err := in.opts.Blobs.Put(in.ctx, d.ImageSHA256, raw); err != nil {
			return fmt.Errorf("%s: %w", d.Image, err)
		}
		d.Image = ""
	}
	if len(d.Features) > 0 {
		return nil
	}
	img, err := features.Decode(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s: %w", d.Image, err)
	}
	v := features.Visual(img)
	d.Features = make([]float32, len(v))
	for j, x := range v {
		d.Features[j] = float32(x)
	}
	return nil
}
