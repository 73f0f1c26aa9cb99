package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/changelog"
	"github.com/prometheus/client_golang/prometheus"
)

// Options tune a Follower. Zero values take the defaults.
type Options struct {
	// Batch is the most entries read from Redis at once (default 16: an
	// ingest's entries are about 1.5 MB each, and a read must fit in the
	// client's read timeout).
	Batch int
	// Block is how long a read waits for a new entry (default 1 s); it
	// bounds how long Run takes to notice that its context ended.
	Block time.Duration
	Log   *slog.Logger // default: discard
	// SnapshotEvery: once the replica is this many entries past the newest
	// snapshot, Run writes one (one replica at a time, by a lock in Redis)
	// and trims the log below it; 0 writes none.
	SnapshotEvery int64
	// Registry receives the follower's metrics; nil: none.
	Registry prometheus.Registerer
}

func (o *Options) fill() {
	if o.Batch <= 0 {
		o.Batch = 16
	}
	if o.Block <= 0 {
		o.Block = time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
}

// resultsKept bounds the entries whose result is kept for their writers.
const resultsKept = 1024

// result is what applying an entry did: the docs it replaced or deleted,
// or why the replica refused it.
type result struct {
	gone []index.Doc
	err  error
}

// Follower applies a Log to an index, the replica, and is where a
// process writes to the corpus (Write). It is safe for concurrent use.
type Follower struct {
	log *Log
	ix  *index.Index
	o   Options
	m   *metrics

	// applyMu serialises applying entries and reading the replica for a
	// snapshot or a blob's references (Locked).
	applyMu sync.Mutex

	mu       sync.Mutex
	applied  Pos
	advanced chan struct{}     // closed, and replaced, whenever applied moves
	results  map[string]result // of the last resultsKept entries applied, by ID
	order    []string          // results' keys, oldest first

	snapN int64 // ordinal of the newest snapshot seen (Run's goroutine only)
}

// NewFollower returns the follower of l applying to ix, from the position
// ix recorded (index.Mark).
func NewFollower(l *Log, ix *index.Index, o Options) (*Follower, error) {
	o.fill()
	p, err := changelog.ParsePos(string(ix.Mark()))
	if err != nil {
		return nil, err
	}
	f := &Follower{log: l, ix: ix, o: o, applied: p, advanced: make(chan struct{}), results: map[string]result{}}
	f.m = newMetrics(o.Registry)
	return f, nil
}

// Applied returns the position of the last entry applied.
func (f *Follower) Applied() Pos {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied
}

// Log returns the log followed.
func (f *Follower) Log() *Log { return f.log }

// Run applies the log until ctx ends, waiting for new entries; a failing
// Redis is retried, with a growing pause, and logged.
func (f *Follower) Run(ctx context.Context) error {
	changelog.Follow(ctx, f.o.Log, "corpus", func(ctx context.Context) error {
		_, err := f.step(ctx, f.o.Block)
		return err
	}, f.maybeSnapshot)
	return nil
}

// maybeSnapshot writes a snapshot when the replica is SnapshotEvery
// entries past the newest one and no other replica is writing one.
func (f *Follower) maybeSnapshot(ctx context.Context) {
	every := f.o.SnapshotEvery
	if every <= 0 || f.Applied().N-f.snapN < every {
		return
	}
	if s, ok, err := f.log.Snapshot(ctx); err != nil {
		return
	} else if ok && s.N > f.snapN {
		f.snapN = s.N
		if f.Applied().N-f.snapN < every {
			return
		}
	}
	unlock, ok := f.log.Lock(ctx, "snapshotting", time.Minute)
	if !ok {
		return
	}
	defer unlock()
	start := time.Now()
	s, err := f.WriteSnapshot(ctx)
	if err != nil {
		f.o.Log.Warn("writing a corpus snapshot", "err", err)
		return
	}
	f.snapN = s.N
	f.o.Log.Info("corpus snapshot written; log trimmed below it", "id", s.ID, "docs", s.Items, "took", time.Since(start).Round(time.Millisecond))
}

// CatchUp applies every entry in the log now, and returns when it has.
func (f *Follower) CatchUp(ctx context.Context) error {
	for {
		n, err := f.step(ctx, 0)
		if err != nil || n == 0 {
			return err
		}
	}
}

// step applies the next entries after the replica's position, waiting up
// to block for one, and returns how many it applied. An entry whose
// ordinal does not follow the replica's means entries were trimmed off the
// log: the replica loads the newest snapshot instead.
func (f *Follower) step(ctx context.Context, block time.Duration) (int, error) {
	at := f.Applied()
	recs, err := f.log.Read(ctx, at, f.o.Batch, block)
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	if now := f.Applied(); now != at {
		return 0, nil // a snapshot was loaded meanwhile: read again from there
	}
	if recs[0].Pos.N != at.N+1 {
		s, ok, err := f.log.Snapshot(ctx)
		if err != nil {
			return 0, err
		}
		if ok && changelog.Less(at.ID, s.ID) {
			f.o.Log.Info("the log was trimmed past this replica: loading the snapshot", "applied", at.ID, "snapshot", s.ID, "docs", s.Items)
			return 1, f.loadNewest(ctx, s)
		}
		// No snapshot covers the gap: Redis lost entries (restarted
		// without its append-only file). Go on from here.
		f.o.Log.Warn("entries missing from the corpus log, and no snapshot to fill the gap", "applied", at.String(), "next", recs[0].Pos.String())
	}
	for i := 0; i < len(recs); {
		// A run of add entries goes into the index as one batch: one
		// batch per upload could not keep up with a hundred a second.
		j, docs := i, 0
		for j < len(recs) && recs[j].Err == nil && len(recs[j].Entry.Add) > 0 && docs < maxRunDocs {
			docs += len(recs[j].Entry.Add)
			j++
		}
		if j-i > 1 {
			err := f.applyRun(recs[i:j])
			if err == nil {
				i = j
				continue
			}
			if !errors.Is(err, index.ErrInvalid) {
				return 0, err
			}
			// An entry of the run is invalid: apply them one by one, so
			// that only it is refused.
		}
		if err := f.apply(recs[i]); err != nil {
			return 0, err
		}
		i++
	}
	return len(recs), nil
}

// maxRunDocs bounds the docs of the add entries applied as one batch.
const maxRunDocs = 5000

// applyRun applies add entries as one index batch, recording the last
// one's position; each entry's result (the docs it replaced) is as if
// they had been applied one by one, in order.
func (f *Follower) applyRun(run []Record) error {
	var docs []index.Doc
	for _, r := range run {
		docs = append(docs, r.Entry.Add...)
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	stored, err := f.ix.GetMany(ids)
	if err != nil {
		return err
	}
	cur := make(map[string]index.Doc, len(docs))
	for _, d := range stored {
		if d.ID != "" {
			cur[d.ID] = d
		}
	}
	results := make([]result, len(run))
	for k, r := range run {
		seen := map[string]bool{}
		for _, d := range r.Entry.Add {
			if old, ok := cur[d.ID]; ok && !seen[d.ID] {
				results[k].gone = append(results[k].gone, old)
			}
			seen[d.ID] = true
		}
		for _, d := range r.Entry.Add {
			cur[d.ID] = d
		}
	}
	if _, err := f.ix.AddAt(docs, []byte(run[len(run)-1].Pos.String())); err != nil {
		return err
	}
	f.m.applied.Add(float64(len(run)))
	for k, r := range run {
		f.advance(r.Pos, &results[k])
	}
	return nil
}

// apply applies one entry with its position, in one index batch. An entry
// the index refuses as invalid is refused alike by every replica: its
// position alone is recorded, and its error kept for its writer.
func (f *Follower) apply(r Record) error {
	mark := []byte(r.Pos.String())
	res := result{err: r.Err}
	if res.err == nil {
		if len(r.Entry.Add) > 0 {
			res.gone, res.err = f.ix.AddAt(r.Entry.Add, mark)
		} else {
			res.gone, res.err = f.ix.DeleteAt(r.Entry.Delete, mark)
		}
		if res.err != nil && !errors.Is(res.err, index.ErrInvalid) {
			return res.err // the index failed: try again
		}
	}
	if res.err != nil {
		if _, err := f.ix.DeleteAt(nil, mark); err != nil {
			return err
		}
		f.o.Log.Warn("corpus log entry refused", "id", r.Pos.ID, "err", res.err)
	}
	f.m.applied.Inc()
	f.advance(r.Pos, &res)
	return nil
}

// advance moves the position to p, keeping the result of its entry.
func (f *Follower) advance(p Pos, res *result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied = p
	if res != nil {
		f.results[p.ID] = *res
		if f.order = append(f.order, p.ID); len(f.order) > resultsKept {
			delete(f.results, f.order[0])
			f.order = f.order[1:]
		}
	}
	close(f.advanced)
	f.advanced = make(chan struct{})
}

// loadNewest loads snapshot s or, when a newer snapshot replaces it while
// it loads (its chunks are dropped), the newer one.
func (f *Follower) loadNewest(ctx context.Context, s Snapshot) error {
	for range 5 {
		err := f.load(ctx, s)
		if !errors.Is(err, changelog.ErrSnapshotGone) {
			return err
		}
		newer, ok, rerr := f.log.Snapshot(ctx)
		if rerr != nil || !ok || newer.ID == s.ID {
			return errors.Join(err, rerr)
		}
		f.o.Log.Info("a newer snapshot replaced the one loading: loading it", "snapshot", newer.ID)
		s = newer
	}
	return fmt.Errorf("replica: snapshots replaced faster than one loads")
}

// load replaces the replica's docs by the snapshot's: its docs are
// added chunk by chunk, then the docs it lacks are deleted, with its
// position, in the last batch. Interrupted, the replica keeps its old
// position and loads the snapshot again.
func (f *Follower) load(ctx context.Context, s Snapshot) error {
	stale := map[string]bool{}
	if _, err := f.ix.Walk(func(d index.Doc) error { stale[d.ID] = true; return nil }); err != nil {
		return err
	}
	// Chunk i+1 is read from Redis while chunk i is indexed.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type chunk struct {
		docs []index.Doc
		err  error
	}
	next := make(chan chunk, 1)
	go func() {
		defer close(next)
		for i := range s.Chunks {
			docs, err := f.log.readChunk(ctx, s, i)
			select {
			case next <- chunk{docs, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for i := range s.Chunks {
		c, ok := <-next
		if !ok {
			return ctx.Err()
		}
		docs, err := c.docs, c.err
		if err != nil {
			return err
		}
		if err := f.ix.Add(docs); err != nil {
			return fmt.Errorf("replica: snapshot %s chunk %d: %w", s.ID, i, err)
		}
		for _, d := range docs {
			delete(stale, d.ID)
		}
	}
	ids := make([]string, 0, len(stale))
	for id := range stale {
		ids = append(ids, id)
	}
	if _, err := f.ix.DeleteAt(ids, []byte(s.Pos().String())); err != nil {
		return err
	}
	f.advance(s.Pos(), nil)
	return nil
}

// Write appends e to the log and returns once the replica has applied it
// (Run must be running), with the stored docs it replaced or deleted: a
// process reads its own writes. Its error wraps index.ErrInvalid when the
// replica refused the entry.
func (f *Follower) Write(ctx context.Context, e Entry) (Pos, []index.Doc, error) {
	p, err := f.log.Append(ctx, e)
	if err != nil {
		return p, nil, err
	}
	gone, err := f.WaitFor(ctx, p)
	return p, gone, err
}

// WaitFor returns once the replica has applied the entry at p, with the
// docs it replaced or deleted, or the error that refused it (when the
// entry is among the last resultsKept applied), or when ctx ends.
func (f *Follower) WaitFor(ctx context.Context, p Pos) ([]index.Doc, error) {
	for {
		f.mu.Lock()
		done, ch, res := !changelog.Less(f.applied.ID, p.ID), f.advanced, f.results[p.ID]
		f.mu.Unlock()
		if done {
			return res.gone, res.err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("replica: waiting for entry %s to be applied: %w", p.ID, ctx.Err())
		case <-ch:
		}
	}
}

// Settled runs fn once the replica has applied every entry appended
// before the call, while it applies no other.
func (f *Follower) Settled(ctx context.Context, fn func()) error {
	head, err := f.log.Head(ctx)
	if err != nil {
		return err
	}
	if _, err := f.WaitFor(ctx, head); err != nil && !errors.Is(err, index.ErrInvalid) {
		return err
	}
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	fn()
	return nil
}

// WriteSnapshot stores the replica's docs as the newest snapshot, at its
// position, and trims the log below it. Entries are not applied
// meanwhile.
func (f *Follower) WriteSnapshot(ctx context.Context) (Snapshot, error) {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	p := f.Applied()
	if p.ID == "" {
		return Snapshot{}, errors.New("replica: nothing applied yet: no snapshot to write")
	}
	return f.log.writeSnapshot(ctx, p, f.ix.Version(), func(fn func(index.Doc) error) error {
		_, err := f.ix.Walk(fn)
		return err
	})
}

// Status is how far a replica is behind its log.
type Status struct {
	Applied    string  `json:"applied"`     // stream ID of the last entry applied
	Head       string  `json:"head"`        // of the last entry appended
	LagEntries int64   `json:"lag_entries"` // entries appended, not yet applied
	LagSeconds float64 `json:"lag_seconds"` // since the oldest of them was appended
	Snapshot   string  `json:"snapshot"`    // stream ID the newest snapshot covers
}

// Status reads the log's head and reports the replica's lag.
func (f *Follower) Status(ctx context.Context) (Status, error) {
	at := f.Applied()
	head, err := f.log.Head(ctx)
	if err != nil {
		return Status{Applied: at.ID}, err
	}
	st := Status{Applied: at.ID, Head: head.ID, LagEntries: max(0, head.N-at.N)}
	if s, ok, err := f.log.Snapshot(ctx); err == nil && ok {
		st.Snapshot = s.ID
	}
	if changelog.Less(at.ID, head.ID) {
		next, err := f.log.Read(ctx, at, 1, 0)
		if err != nil {
			return st, err
		}
		if len(next) > 0 {
			st.LagSeconds = max(0, float64(time.Now().UnixMilli()-changelog.Millis(next[0].Pos.ID))/1000)
		}
	}
	f.m.lagEntries.Set(float64(st.LagEntries))
	f.m.lagSeconds.Set(st.LagSeconds)
	return st, nil
}

// Writer is the index.Writer of a replicated corpus: each batch is one
// entry of the log, acknowledged once the local replica has applied it.
type Writer struct{ F *Follower }

// Add implements index.Writer.
func (w Writer) Add(ctx context.Context, docs []index.Doc) ([]index.Doc, error) {
	_, gone, err := w.F.Write(ctx, Entry{Add: docs})
	return gone, err
}

// Delete implements index.Writer.
func (w Writer) Delete(ctx context.Context, ids []string) ([]index.Doc, error) {
	_, gone, err := w.F.Write(ctx, Entry{Delete: ids})
	return gone, err
}

// Settled implements index.Writer.
func (w Writer) Settled(ctx context.Context, fn func()) error { return w.F.Settled(ctx, fn) }
