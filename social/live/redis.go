package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kernelrank/kernelrank/internal/changelog"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix leaves a deployment's keys as {kr-social}:...
const DefaultPrefix = ""

// resultsKept bounds the entries whose result is kept for their writers.
const resultsKept = 1024

// snapChunk is the number of operations per snapshot key (about 250 KB of
// friendships).
const snapChunk = 5000

// redisLog follows the social change log in Redis.
type redisLog struct {
	log *changelog.Log

	// Guarded by Store.mu.
	applied  changelog.Pos
	advanced chan struct{}     // closed, and replaced, whenever applied moves
	results  map[string]result // of the last resultsKept entries, by ID
	order    []string
	snapN    int64 // ordinal of the newest snapshot seen (the follower's goroutine only)
}

type result struct {
	changed []string
	version string
	err     error
}

// OpenRedis opens the social data of the deployment whose Redis is rc
// (keys under prefix, "" for a deployment's): the newest snapshot and the
// log after it are applied before it returns, and the log is followed
// until Close.
func OpenRedis(ctx context.Context, rc redis.UniversalClient, prefix string, o Options) (*Store, error) {
	s := newStore(o)
	s.rl = &redisLog{log: changelog.New(rc, prefix+"{kr-social}"), advanced: make(chan struct{}), results: map[string]result{}}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.life = life
	s.mu.Lock()
	_, err := s.commit(nil)
	s.mu.Unlock()
	if err == nil {
		err = s.rl.catchUp(ctx, s)
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("live: catching up with the social log: %w", err)
	}
	done := make(chan struct{})
	go func() { s.rl.run(life, s); close(done) }()
	s.stop = func() { cancel(); <-done }
	return s, nil
}

// Drop removes the social log, its snapshot and counters from Redis (a
// store without Redis has none).
func (s *Store) Drop(ctx context.Context) error {
	if s.rl == nil {
		return nil
	}
	return s.rl.log.Drop(ctx)
}

// write checks ops on the local state, caught up with the log's head (a
// client's write on another server before is seen; a refusal costs no
// entry), appends them and waits until they are applied here.
func (rl *redisLog) write(ctx context.Context, s *Store, ops []Op) (Result, error) {
	if err := rl.settle(ctx, s); err != nil {
		return Result{}, err
	}
	s.mu.Lock()
	_, undo, err := s.st.apply(ops)
	if err == nil {
		undo()
	}
	s.mu.Unlock()
	if err != nil {
		return Result{}, err
	}
	b, err := json.Marshal(Entry{Ops: ops})
	if err != nil {
		return Result{}, err
	}
	p, err := rl.log.Append(ctx, b)
	if err != nil {
		return Result{}, fmt.Errorf("live: the social log did not take the change: %w", err)
	}
	return rl.waitFor(ctx, s, p)
}

// appendAll appends ops in entries of up to maxEntryOps operations, then
// waits until they are applied here: followers apply entries in runs,
// making one data set a run, not one an entry.
func (rl *redisLog) appendAll(ctx context.Context, s *Store, ops []Op) error {
	var appended []changelog.Pos
	for len(ops) > 0 {
		n := min(len(ops), maxEntryOps)
		b, err := json.Marshal(Entry{Ops: ops[:n]})
		if err != nil {
			return err
		}
		p, err := rl.log.Append(ctx, b)
		if err != nil {
			return err
		}
		appended = append(appended, p)
		ops = ops[n:]
	}
	for _, p := range appended {
		if _, err := rl.waitFor(ctx, s, p); err != nil {
			return err
		}
	}
	return nil
}

// waitFor returns the result of the entry at p once it is applied here.
func (rl *redisLog) waitFor(ctx context.Context, s *Store, p changelog.Pos) (Result, error) {
	for {
		s.mu.Lock()
		done, ch, res := !changelog.Less(rl.applied.ID, p.ID), rl.advanced, rl.results[p.ID]
		s.mu.Unlock()
		if done {
			return Result{Changed: res.changed, Version: res.version}, res.err
		}
		select {
		case <-ctx.Done():
			return Result{}, fmt.Errorf("live: waiting for the social log entry %s to be applied: %w", p.ID, ctx.Err())
		case <-ch:
		}
	}
}

// catchUp applies every entry in the log now.
func (rl *redisLog) catchUp(ctx context.Context, s *Store) error {
	for {
		n, err := rl.step(ctx, s, 0)
		if err != nil || n == 0 {
			return err
		}
	}
}

// run applies the log until ctx ends, retrying a failing Redis with a
// growing pause, and writes snapshots.
func (rl *redisLog) run(ctx context.Context, s *Store) {
	changelog.Follow(ctx, s.o.Log, "social", func(ctx context.Context) error {
		_, err := rl.step(ctx, s, s.o.Block)
		return err
	}, func(ctx context.Context) { rl.maybeSnapshot(ctx, s) })
}

// step applies the entries after the applied position, waiting up to
// block for one, and makes one data set of them. An entry whose ordinal
// does not follow means the log was trimmed past this process: it loads
// the newest snapshot.
func (rl *redisLog) step(ctx context.Context, s *Store, block time.Duration) (int, error) {
	s.mu.Lock()
	at := rl.applied
	s.mu.Unlock()
	recs, err := rl.log.Read(ctx, at, 256, block)
	if err != nil || len(recs) == 0 {
		if at.ID == "" && err == nil {
			return rl.loadSnapshot(ctx, s, at)
		}
		return 0, err
	}
	if recs[0].Pos.N != at.N+1 {
		if n, err := rl.loadSnapshot(ctx, s, at); n > 0 || err != nil {
			return n, err
		}
		s.o.Log.Warn("entries missing from the social log, and no snapshot to fill the gap", "applied", at.String(), "next", recs[0].Pos.String())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := set{}
	errs := make([]error, len(recs))
	for i, r := range recs {
		var e Entry
		err := r.Err
		if err == nil {
			err = json.Unmarshal(r.Payload, &e)
		}
		var ids []string
		if err == nil {
			ids, _, err = s.st.apply(e.Ops)
		}
		for _, id := range ids {
			changed[id] = struct{}{}
		}
		errs[i] = err
	}
	ds, err := s.commit(sortedKeys(changed))
	if err != nil {
		return 0, err
	}
	version := ds.Version()
	for i, r := range recs {
		rl.advance(r.Pos, result{version: version, err: errs[i]})
	}
	return len(recs), nil
}

// advance moves the position to p, keeping its entry's result. The caller
// holds Store.mu.
func (rl *redisLog) advance(p changelog.Pos, res result) {
	rl.applied = p
	rl.results[p.ID] = res
	if rl.order = append(rl.order, p.ID); len(rl.order) > resultsKept {
		delete(rl.results, rl.order[0])
		rl.order = rl.order[1:]
	}
	close(rl.advanced)
	rl.advanced = make(chan struct{})
}

// loadSnapshot replaces the state by the newest snapshot when it is past
// at; it returns 1 when it did.
func (rl *redisLog) loadSnapshot(ctx context.Context, s *Store, at changelog.Pos) (int, error) {
	snap, ok, err := rl.log.Snapshot(ctx)
	if err != nil || !ok || !changelog.Less(at.ID, snap.ID) {
		return 0, err
	}
	st := newState()
	for i := range snap.Chunks {
		ops, err := changelog.ReadChunk[Op](ctx, rl.log, snap, i)
		if err == nil {
			_, _, err = st.apply(ops)
		}
		if errors.Is(err, changelog.ErrSnapshotGone) {
			return 0, nil // a newer one replaced it: the next step loads that
		}
		if err != nil {
			return 0, fmt.Errorf("social snapshot %s chunk %d: %w", snap.ID, i, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := set{}
	for id := range s.st.users {
		changed[id] = struct{}{}
	}
	for id := range st.users {
		changed[id] = struct{}{}
	}
	s.st = st
	ds, err := s.commit(sortedKeys(changed))
	if err != nil {
		return 0, err
	}
	rl.advance(snap.Pos(), result{version: ds.Version()})
	s.o.Log.Info("social snapshot loaded", "id", snap.ID, "users", len(st.users))
	return 1, nil
}

// maybeSnapshot writes a snapshot when this process is SnapshotEvery
// entries past the newest one and no other is writing one.
func (rl *redisLog) maybeSnapshot(ctx context.Context, s *Store) {
	s.mu.Lock()
	at := rl.applied
	s.mu.Unlock()
	if at.N-rl.snapN < s.o.SnapshotEvery {
		return
	}
	if snap, ok, err := rl.log.Snapshot(ctx); err != nil {
		return
	} else if ok && snap.N > rl.snapN {
		if rl.snapN = snap.N; at.N-rl.snapN < s.o.SnapshotEvery {
			return
		}
	}
	unlock, ok := rl.log.Lock(ctx, "snapshotting", time.Minute)
	if !ok {
		return
	}
	defer unlock()
	snap, err := rl.writeSnapshot(ctx, s)
	if err != nil {
		s.o.Log.Warn("writing a social snapshot", "err", err)
		return
	}
	rl.snapN = snap.N
	s.o.Log.Info("social snapshot written; log trimmed below it", "id", snap.ID, "ops", snap.Items)
}

// writeSnapshot stores the state, at the position applied, as the newest
// snapshot and trims the log below it.
func (rl *redisLog) writeSnapshot(ctx context.Context, s *Store) (changelog.Snapshot, error) {
	s.mu.Lock()
	at, ops, version := rl.applied, s.st.ops(), s.cur.Load().Version()
	s.mu.Unlock()
	if at.ID == "" {
		return changelog.Snapshot{}, errors.New("live: nothing applied yet: no snapshot to write")
	}
	return changelog.WriteSnapshot(ctx, rl.log, at, version, snapChunk, func(yield func(Op) error) error {
		for _, op := range ops {
			if err := yield(op); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteSnapshot stores the state as the newest snapshot of the Redis log
// and trims the log below it.
func (s *Store) WriteSnapshot(ctx context.Context) (changelog.Snapshot, error) {
	if s.rl == nil {
		return changelog.Snapshot{}, errors.New("live: no Redis log")
	}
	return s.rl.writeSnapshot(ctx, s)
}

// settle returns once every entry appended before the call is applied
// here.
func (rl *redisLog) settle(ctx context.Context, s *Store) error {
	head, err := rl.log.Head(ctx)
	if err != nil {
		return fmt.Errorf("live: the social log does not answer: %w", err)
	}
	_, err = rl.waitFor(ctx, s, head)
	var oe *OpError
	if errors.As(err, &oe) {
		return nil // a refused entry is applied as refused
	}
	return err
}

// lockImport takes the import lock (waiting while another process holds
// it) and catches up with the log, so that the import diffs against every
// entry appended before.
func (rl *redisLog) lockImport(ctx context.Context, s *Store) (func(), error) {
	for {
		unlock, ok := rl.log.Lock(ctx, "importing", 10*time.Minute)
		if ok {
			if err := rl.settle(ctx, s); err != nil {
				unlock()
				return nil, err
			}
			return unlock, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
