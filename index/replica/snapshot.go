package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kernelrank/kernelrank/index"
	"github.com/redis/go-redis/v9"
)

// errSnapshotGone is the error of reading a snapshot whose chunks a newer
// one dropped.
var errSnapshotGone = errors.New("replica: the snapshot is gone (a newer one replaced it)")

// snapChunk is the number of docs per snapshot key (about 1.5 MB with
// 297-d vectors).
const snapChunk = 500

// Snapshot describes the newest snapshot: the docs of a replica at one
// position of the log, in Chunks keys of up to snapChunk docs.
type Snapshot struct {
	ID      string `json:"id"`
	N       int64  `json:"n"`
	Version string `json:"version"` // the corpus version of the docs
	Docs    int    `json:"docs"`
	Chunks  int    `json:"chunks"`
}

// Pos is the position the snapshot covers.
func (s Snapshot) Pos() Pos { return Pos{ID: s.ID, N: s.N} }

// Snapshot returns the newest snapshot; ok is false when there is none.
func (l *Log) Snapshot(ctx context.Context) (s Snapshot, ok bool, err error) {
	b, err := l.rc.Get(ctx, l.snap()).Bytes()
	if errors.Is(err, redis.Nil) {
		return s, false, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	return s, err == nil, err
}

// writeSnapshot stores the docs walk yields as the snapshot at pos with
// the given version, then makes it the newest, drops the previous one's
// chunks and trims the log below pos: entries at and after pos stay.
func (l *Log) writeSnapshot(ctx context.Context, pos Pos, version string, walk func(func(index.Doc) error) error) (Snapshot, error) {
	s := Snapshot{ID: pos.ID, N: pos.N, Version: version}
	var chunk []index.Doc
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		b, err := json.Marshal(Entry{Add: chunk})
		if err == nil {
			err = l.rc.Set(ctx, l.chunk(s.ID, s.Chunks), b, 0).Err()
		}
		s.Chunks++
		chunk = chunk[:0]
		return err
	}
	err := walk(func(d index.Doc) error {
		s.Docs++
		if chunk = append(chunk, d); len(chunk) == snapChunk {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return s, fmt.Errorf("replica: snapshot: %w", err)
	}
	prev, hadPrev, err := l.Snapshot(ctx)
	if err != nil {
		return s, err
	}
	b, _ := json.Marshal(s)
	if err := l.rc.Set(ctx, l.snap(), b, 0).Err(); err != nil {
		return s, err
	}
	if hadPrev && prev.ID != s.ID {
		for i := range prev.Chunks {
			l.rc.Del(ctx, l.chunk(prev.ID, i))
		}
	}
	return s, l.rc.XTrimMinID(ctx, l.stream(), s.ID).Err()
}

// readChunk returns the docs of chunk i of s.
func (l *Log) readChunk(ctx context.Context, s Snapshot, i int) ([]index.Doc, error) {
	b, err := l.rc.Get(ctx, l.chunk(s.ID, i)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: chunk %d of snapshot %s", errSnapshotGone, i, s.ID)
	}
	var e Entry
	if err == nil {
		err = json.Unmarshal(b, &e)
	}
	return e.Add, err
}

// Drop removes the log, its snapshot and its counters: the corpus of l is
// gone from Redis (its blobs are not).
func (l *Log) Drop(ctx context.Context) error {
	if s, ok, err := l.Snapshot(ctx); err != nil {
		return err
	} else if ok {
		for i := range s.Chunks {
			if err := l.rc.Del(ctx, l.chunk(s.ID, i)).Err(); err != nil {
				return err
			}
		}
	}
	return l.rc.Del(ctx, l.stream(), l.seq(), l.head(), l.snap()).Err()
}

// Bytes returns the memory Redis reports for the log's stream
// (MEMORY USAGE, all of it sampled).
func (l *Log) Bytes(ctx context.Context) (int64, error) {
	return l.rc.MemoryUsage(ctx, l.stream(), 0).Result()
}
