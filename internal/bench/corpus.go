package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/index/blob"
	"github.com/kernelrank/kernelrank/index/replica"
	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/internal/deploy"
	"github.com/redis/go-redis/v9"
)

// CorpusOptions are what bench corpus measures.
type CorpusOptions struct {
	Redis         string        // the Redis to measure on
	Rates         []int         // upload rates (per second) of the lag rows
	Duration      time.Duration // time spent at each rate
	IngestDocs    int           // synthetic docs of the ingest rows
	BootstrapDocs int           // synthetic docs of the start-up rows (0: skip them)
}

// Corpus measures the replicated corpus on a Redis, under keys of its own
// that it removes: replication lag at given upload rates, the Redis bytes
// of an image, ingest through the log against a local ingest, and the
// start-up of a new replica on a large corpus.
func Corpus(ctx context.Context, o CorpusOptions, stdout, stderr io.Writer) error {
	r, err := cache.OpenRedis(ctx, o.Redis, "")
	if err != nil {
		return err
	}
	defer r.Close()
	var suffix [4]byte
	rand.Read(suffix[:])
	b := &corpusBench{ctx: ctx, rc: r.Client(), prefix: "bench-" + hex.EncodeToString(suffix[:]) + ":", stderr: stderr}
	b.dir, err = os.MkdirTemp("", "kernelrank-bench-corpus-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(b.dir)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	defer tw.Flush()

	fmt.Fprintln(tw, "uploads/s asked\tuploads/s made\tuploads\tack p50\tack p99\tlag p50\tlag p99\tlag max")
	for _, rate := range o.Rates {
		row, err := b.lag(rate, o.Duration)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%d\t%.0f\t%d\t%v\t%v\t%v\t%v\t%v\n", rate, row.perSecond, row.n, row.ack[0], row.ack[1], row.lag[0], row.lag[1], row.lag[2])
	}
	fmt.Fprintln(tw)
	if err := b.bytesPerImage(tw); err != nil {
		return err
	}
	fmt.Fprintln(tw)
	if err := b.ingest(tw, o.IngestDocs); err != nil {
		return err
	}
	if o.BootstrapDocs > 0 {
		fmt.Fprintln(tw)
		return b.bootstrap(tw, o.BootstrapDocs)
	}
	return nil
}

type corpusBench struct {
	ctx    context.Context
	rc     redis.UniversalClient
	prefix string
	dir    string
	n      int // replicas opened, for their directories
	stderr io.Writer
}

// replica opens a new replica of l, following it until ctx ends when run.
func (b *corpusBench) replica(l *replica.Log, run bool) (*index.Index, *replica.Follower, func(), error) {
	b.n++
	ix, err := index.Open(filepath.Join(b.dir, fmt.Sprintf("replica-%d", b.n)))
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := replica.NewFollower(l, ix, replica.Options{})
	if err != nil {
		ix.Close()
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	if run {
		go func() { f.Run(ctx); close(done) }()
	} else {
		close(done)
	}
	return ix, f, func() { cancel(); <-done; ix.Close() }, nil
}

// newLog returns a log of the bench's own, dropped by the returned func.
func (b *corpusBench) newLog(name string) (*replica.Log, func()) {
	l := replica.NewLog(b.rc, b.prefix+name+":")
	return l, func() { l.Drop(context.WithoutCancel(b.ctx)) }
}

func syntheticDoc(rng *mrand.Rand, id string) index.Doc {
	f := make([]float32, 297)
	for j := range f {
		f[j] = rng.Float32()
	}
	var h [32]byte
	for j := range h {
		h[j] = byte(rng.UintN(256))
	}
	return index.Doc{ID: id, Tags: []string{"w" + strconv.Itoa(rng.IntN(500)), "synthetic"}, Title: "synthetic " + id,
		Features: f, ImageSHA256: hex.EncodeToString(h[:])}
}

type lagRow struct {
	n         int
	perSecond float64          // uploads sent a second
	ack, lag  [3]time.Duration // p50, p99, max
}

// lag writes one-doc entries at rate a second for d through replica A, as
// a server takes uploads (append, then wait for its own replica), and
// measures how long after A acknowledged each one replica B applied it.
func (b *corpusBench) lag(rate int, d time.Duration) (lagRow, error) {
	l, drop := b.newLog("lag" + strconv.Itoa(rate))
	defer drop()
	_, fa, closeA, err := b.replica(l, true)
	if err != nil {
		return lagRow{}, err
	}
	defer closeA()
	_, fb, closeB, err := b.replica(l, true)
	if err != nil {
		return lagRow{}, err
	}
	defer closeB()
	rng := mrand.New(mrand.NewPCG(uint64(rate), 1))
	var mu sync.Mutex
	var acks, lags []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	// Open loop: upload i is sent at i/rate s, however long the others
	// take, as independent clients would.
	total := int(d.Seconds() * float64(rate))
	begin := time.Now()
	for i := range total {
		time.Sleep(time.Until(begin.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		e := replica.Entry{Add: []index.Doc{syntheticDoc(rng, "lag-"+strconv.Itoa(i))}}
		wg.Go(func() {
			start := time.Now()
			p, _, err := fa.Write(b.ctx, e)
			acked := time.Now()
			if err == nil {
				_, err = fb.WaitFor(b.ctx, p)
			}
			seen := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = errors.Join(firstErr, err)
				return
			}
			acks = append(acks, acked.Sub(start))
			lags = append(lags, max(0, seen.Sub(acked)))
		})
	}
	sent := time.Since(begin)
	wg.Wait()
	if firstErr != nil {
		return lagRow{}, firstErr
	}
	return lagRow{n: len(acks), perSecond: float64(len(acks)) / sent.Seconds(), ack: quantiles(acks), lag: quantiles(lags)}, nil
}

func quantiles(ds []time.Duration) [3]time.Duration {
	if len(ds) == 0 {
		return [3]time.Duration{}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration {
		return ds[min(len(ds)-1, int(math.Ceil(q*float64(len(ds))))-1)].Round(10 * time.Microsecond)
	}
	return [3]time.Duration{at(0.5), at(0.99), ds[len(ds)-1].Round(10 * time.Microsecond)}
}

// bytesPerImage measures what one image costs Redis: its log entry (a doc
// with a 297-d vector) and, for the demo's images, the blobs of the
// original and its thumbnail.
func (b *corpusBench) bytesPerImage(w io.Writer) error {
	l, drop := b.newLog("bytes")
	defer drop()
	rng := mrand.New(mrand.NewPCG(3, 4))
	const n = 1000
	var payload int
	for i := range n {
		e := replica.Entry{Add: []index.Doc{syntheticDoc(rng, "bytes-"+strconv.Itoa(i))}}
		j, _ := json.Marshal(e)
		payload += len(j)
		if _, err := l.Append(b.ctx, e); err != nil {
			return err
		}
	}
	mem, err := l.Bytes(b.ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "log entry of one image (297-d features)\t%d bytes of JSON\t%d bytes of Redis memory (MEMORY USAGE / %d)\n", payload/n, mem/n, n)
	// Blobs: the demo's first 200 images and their thumbnails.
	dir := filepath.Join(b.dir, "demo")
	jsonl, err := extractDemo(dir)
	if err != nil {
		return err
	}
	store := blob.NewRedis(b.rc, b.prefix+"blob:", 0, 0)
	images := index.NewImages(store)
	var raw, thumb, memRaw, memThumb int64
	seen := map[string]bool{}
	for _, name := range jsonl[:min(200, len(jsonl))] {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		ref := blob.Ref(data)
		if seen[ref] {
			continue
		}
		seen[ref] = true
		if err := store.Put(b.ctx, ref, data); err != nil {
			return err
		}
		t, err := images.Thumbnail(b.ctx, index.Doc{ImageSHA256: ref})
		if err != nil {
			return err
		}
		raw += int64(len(data))
		thumb += int64(len(t))
		for name, dst := range map[string]*int64{ref: &memRaw, blob.ThumbName(ref): &memThumb} {
			m, err := b.rc.MemoryUsage(b.ctx, b.prefix+"blob:"+name, 0).Result()
			if err != nil {
				return err
			}
			*dst += m
		}
	}
	_ = store.Walk(b.ctx, func(name string) error { return store.Delete(b.ctx, name) })
	b.rc.Del(b.ctx, b.prefix+"blob:stats")
	k := int64(len(seen))
	fmt.Fprintf(w, "blobs of one demo image (%d distinct)\toriginal %d bytes, thumbnail %d bytes\t%d + %d bytes of Redis memory\n", k, raw/k, thumb/k, memRaw/k, memThumb/k)
	return nil
}

// extractDemo writes the demo corpus into dir and returns its images'
// paths, relative to dir.
func extractDemo(dir string) ([]string, error) {
	jsonl, err := demo.Extract(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(jsonl)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	dec := json.NewDecoder(f)
	for {
		var rec struct{ Image string }
		if err := dec.Decode(&rec); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out = append(out, rec.Image)
	}
}

// WriteSyntheticJSONL writes n synthetic docs (297-d features, no image)
// as JSON Lines to path.
func WriteSyntheticJSONL(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	rng := mrand.New(mrand.NewPCG(5, 6))
	for i := range n {
		if err := enc.Encode(syntheticDoc(rng, "doc-"+strconv.Itoa(i))); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// ingest times one JSONL of n docs with features into a local index and
// into the log, then a replica applying that log.
func (b *corpusBench) ingest(w io.Writer, n int) error {
	path := filepath.Join(b.dir, "ingest.jsonl")
	if err := WriteSyntheticJSONL(path, n); err != nil {
		return err
	}
	start := time.Now()
	if _, err := deploy.IngestFiles(b.ctx, filepath.Join(b.dir, "ingest-local"), []string{path}, true, nil); err != nil {
		return err
	}
	local := time.Since(start)
	l, drop := b.newLog("ingest")
	defer drop()
	start = time.Now()
	if _, err := deploy.IngestToLog(b.ctx, l, nil, []string{path}, true, nil); err != nil {
		return err
	}
	toLog := time.Since(start)
	_, f, closeR, err := b.replica(l, false)
	if err != nil {
		return err
	}
	defer closeR()
	start = time.Now()
	if err := f.CatchUp(b.ctx); err != nil {
		return err
	}
	apply := time.Since(start)
	rate := func(d time.Duration) string { return fmt.Sprintf("%.0f docs/s", float64(n)/d.Seconds()) }
	fmt.Fprintf(w, "ingest of %d docs with features\ttime\trate\n", n)
	fmt.Fprintf(w, "local (kernelrank ingest --data)\t%v\t%s\n", local.Round(time.Millisecond), rate(local))
	fmt.Fprintf(w, "into the log (kernelrank ingest --redis)\t%v\t%s\n", toLog.Round(time.Millisecond), rate(toLog))
	fmt.Fprintf(w, "a replica applying that log\t%v\t%s\n", apply.Round(time.Millisecond), rate(apply))
	return nil
}

// bootstrap writes n docs through the log, has a replica write a snapshot
// (trimming the log), and times a new replica's start: from the log alone
// before the snapshot, and from the snapshot.
func (b *corpusBench) bootstrap(w io.Writer, n int) error {
	l, drop := b.newLog("boot")
	defer drop()
	rng := mrand.New(mrand.NewPCG(7, 8))
	for i := 0; i < n; i += 500 {
		var docs []index.Doc
		for j := i; j < min(n, i+500); j++ {
			docs = append(docs, syntheticDoc(rng, "boot-"+strconv.Itoa(j)))
		}
		if _, err := l.Append(b.ctx, replica.Entry{Add: docs}); err != nil {
			return err
		}
	}
	_, first, closeFirst, err := b.replica(l, false)
	if err != nil {
		return err
	}
	defer closeFirst()
	start := time.Now()
	if err := first.CatchUp(b.ctx); err != nil {
		return err
	}
	fromLog := time.Since(start)
	start = time.Now()
	s, err := first.WriteSnapshot(b.ctx)
	if err != nil {
		return err
	}
	snap := time.Since(start)
	_, second, closeSecond, err := b.replica(l, false)
	if err != nil {
		return err
	}
	defer closeSecond()
	start = time.Now()
	if err := second.CatchUp(b.ctx); err != nil {
		return err
	}
	fromSnap := time.Since(start)
	fmt.Fprintf(w, "a new replica of %d docs\ttime\n", n)
	fmt.Fprintf(w, "from the log (%d entries)\t%v\n", (n+499)/500, fromLog.Round(time.Millisecond))
	fmt.Fprintf(w, "writing the snapshot (%d chunks)\t%v\n", s.Chunks, snap.Round(time.Millisecond))
	fmt.Fprintf(w, "from the snapshot\t%v\n", fromSnap.Round(time.Millisecond))
	return nil
}
