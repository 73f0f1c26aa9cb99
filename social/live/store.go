package live

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kernelrank/kernelrank/social"
)

// OnChange receives every data set the store makes, in order, with the ids
// of the users changed since the previous one (deleted users included).
type OnChange func(ctx context.Context, ds *social.Dataset, changed []string) error

// Options tune a Store. Zero values take the defaults.
type Options struct {
	Log *slog.Logger // default: discard
	// SnapshotEvery is the number of entries after which a snapshot is
	// written (in Redis, by one process at a time; or the snapshot file)
	// and the log trimmed below it (default 1000).
	SnapshotEvery int64
	// Block is how long a read of the Redis log waits for an entry
	// (default 1 s); it bounds how long Close takes.
	Block time.Duration
}

func (o *Options) fill() {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.SnapshotEvery <= 0 {
		o.SnapshotEvery = 1000
	}
	if o.Block <= 0 {
		o.Block = time.Second
	}
}

// Store is the social data, changed by Write and Import, followed (with
// Redis) from the log every process shares. It is safe for concurrent use.
type Store struct {
	o Options

	// mu guards the state and orders applying: each applied entry is
	// followed by its data set (cur) and the OnChange call.
	mu       sync.Mutex
	st       *state
	onChange OnChange
	cur      atomic.Pointer[social.Dataset]

	file *fileLog // without Redis
	// The writes waiting for the file log, and whether one of their
	// writers is committing them (writeFile).
	qmu     sync.Mutex
	queue   []*fileWrite
	leading bool
	rl      *redisLog // with Redis
	stop    func()    // stops following
	life    context.Context
}

func newStore(o Options) *Store {
	o.fill()
	return &Store{o: o, st: newState()}
}

// Dataset returns the data set of every entry applied so far.
func (s *Store) Dataset() *social.Dataset { return s.cur.Load() }

// SetOnChange makes fn receive the data sets made from now on.
func (s *Store) SetOnChange(fn OnChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onChange = fn
}

// Close stops following the log and closes the file log.
func (s *Store) Close() {
	if s.stop != nil {
		s.stop()
	}
	if s.file != nil {
		s.file.close()
	}
}

// Result is what a write did.
type Result struct {
	Changed []string `json:"changed"` // the users whose data changed
	Version string   `json:"version"` // of the data set once applied
}

// Write applies ops, all or none, and returns once they are durable (in
// the log) and applied here: a following read sees them. A refused entry
// returns an *OpError wrapping ErrInvalid or ErrNotFound, and changes
// nothing anywhere. Write does not Check ops: callers of the API do.
func (s *Store) Write(ctx context.Context, ops []Op) (Result, error) {
	if len(ops) == 0 {
		return Result{}, invalid("no operation")
	}
	if s.file != nil {
		return s.writeFile(ops)
	}
	return s.rl.write(ctx, s, ops)
}

// writeFile applies ops, appends them to the file log and makes their
// data set. Writes that arrive meanwhile are committed together: their
// entries go to the log in one write and one fsync, and make one data set.
func (s *Store) writeFile(ops []Op) (Result, error) {
	w := &fileWrite{ops: ops, done: make(chan struct{})}
	s.qmu.Lock()
	s.queue = append(s.queue, w)
	lead := !s.leading
	s.leading = true
	s.qmu.Unlock()
	for lead {
		s.qmu.Lock()
		batch := s.queue
		s.queue = nil
		if lead = len(batch) > 0; !lead {
			s.leading = false
		}
		s.qmu.Unlock()
		if lead {
			s.commitFile(batch)
		}
	}
	<-w.done
	return w.res, w.err
}

// fileWrite is a write waiting for its commit.
type fileWrite struct {
	ops  []Op
	res  Result
	err  error
	done chan struct{}
}

// commitFile applies each write of batch, in order, all or nothing each,
// appends those applied and makes their data set.
func (s *Store) commitFile(batch []*fileWrite) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		for _, w := range batch {
			close(w.done)
		}
	}()
	var applied []*fileWrite
	var undos []func()
	var entries [][]Op
	changed := set{}
	for _, w := range batch {
		ids, undo, err := s.st.apply(w.ops)
		if w.err = err; err != nil {
			continue
		}
		w.res.Changed = ids
		applied, undos, entries = append(applied, w), append(undos, undo), append(entries, w.ops)
		for _, id := range ids {
			changed[id] = struct{}{}
		}
	}
	if len(applied) == 0 {
		return
	}
	if err := s.file.append(entries...); err != nil {
		for k := len(undos) - 1; k >= 0; k-- {
			undos[k]()
		}
		for _, w := range applied {
			w.err = fmt.Errorf("live: the social log did not take the change: %w", err)
		}
		return
	}
	if s.file.entries >= s.o.SnapshotEvery {
		if err := s.file.compact(s.st); err != nil {
			s.o.Log.Warn("compacting the social log", "err", err)
		}
	}
	ds, err := s.commit(sortedKeys(changed))
	version := ds.Version()
	for _, w := range applied {
		w.res.Version, w.err = version, err
	}
}

// commit makes the data set of the state and hands it to OnChange. The
// caller holds mu.
func (s *Store) commit(changed []string) (*social.Dataset, error) {
	ds, err := s.st.next(s.cur.Load())
	if err != nil {
		// The operations keep the state consistent: a failure is a bug.
		return s.cur.Load(), fmt.Errorf("live: the state makes no data set: %w", err)
	}
	s.cur.Store(ds)
	if s.onChange != nil && len(changed) > 0 {
		if err := s.onChange(s.life, ds, changed); err != nil {
			s.o.Log.Warn("the recommender did not take a social data change", "err", err, "changed", len(changed))
		}
	}
	return ds, nil
}

// User returns the stored user of id with its friends and groups (in
// natural order).
func (s *Store) User(id string) (u social.User, friends, groups []string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.users[id]
	if p == nil {
		return u, nil, nil, false
	}
	friends, groups = sortedNatural(s.st.friends[id]), sortedNatural(s.st.groupsOf[id])
	return *p, friends, groups, true
}

func sortedNatural(s set) []string {
	out := make([]string, 0, len(s))
	for x := range s {
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b string) int {
		switch {
		case social.NaturalLess(a, b):
			return -1
		case social.NaturalLess(b, a):
			return 1
		}
		return 0
	})
	return out
}

// Import makes the store hold ds, the data of a directory: it writes the
// difference between them, in entries of up to maxEntryOps operations,
// unless ds is the data imported last (its version is recorded), so that
// the same directory twice changes nothing and the writes made since it
// was imported stay. With Redis one process imports at a time. It returns
// the number of operations written.
func (s *Store) Import(ctx context.Context, ds *social.Dataset) (int, error) {
	if s.rl != nil {
		unlock, err := s.rl.lockImport(ctx, s)
		if err != nil {
			return 0, err
		}
		defer unlock()
	}
	version := ds.Version()
	s.mu.Lock()
	if s.st.source == version {
		s.mu.Unlock()
		return 0, nil
	}
	next, err := fromDataset(ds, version)
	var ops []Op
	if err == nil {
		ops = diff(s.st, next)
	}
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	total := len(ops)
	if s.file != nil {
		// One entry, all or nothing, made a snapshot at once.
		if len(ops) > 0 {
			if _, err := s.writeFile(ops); err != nil {
				return 0, fmt.Errorf("live: importing: %w", err)
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return total, s.file.compact(s.st)
	}
	if err := s.rl.appendAll(ctx, s, ops); err != nil {
		return 0, fmt.Errorf("live: importing: %w", err)
	}
	return total, nil
}
