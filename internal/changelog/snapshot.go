package changelog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ErrSnapshotGone is the error of reading a snapshot whose chunks a newer
// one dropped.
var ErrSnapshotGone = errors.New("changelog: the snapshot is gone (a newer one replaced it)")

// Snapshot describes the newest snapshot: the items of a follower at one
// position of the log, in Chunks keys.
type Snapshot struct {
	ID      string `json:"id"`
	N       int64  `json:"n"`
	Version string `json:"version"` // the content version of the items
	Items   int    `json:"docs"`    // "docs": the corpus' snapshots came first
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

// chunk is the JSON of one snapshot key; "add" is the corpus' entry form,
// which its snapshots used first.
type chunk[T any] struct {
	Items []T `json:"add"`
}

// WriteSnapshot stores the items walk yields, per to a key, as the snapshot
// at pos with the given version, then makes it the newest, drops the
// previous one's chunks and trims the log below pos: entries at and after
// pos stay.
func WriteSnapshot[T any](ctx context.Context, l *Log, pos Pos, version string, per int, walk func(yield func(T) error) error) (Snapshot, error) {
	s := Snapshot{ID: pos.ID, N: pos.N, Version: version}
	var items []T
	flush := func() error {
		if len(items) == 0 {
			return nil
		}
		b, err := json.Marshal(chunk[T]{items})
		if err == nil {
			err = l.rc.Set(ctx, l.chunk(s.ID, s.Chunks), b, 0).Err()
		}
		s.Chunks++
		items = items[:0]
		return err
	}
	err := walk(func(x T) error {
		s.Items++
		if items = append(items, x); len(items) == per {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return s, fmt.Errorf("changelog: snapshot: %w", err)
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

// ReadChunk returns the items of chunk i of s; its error wraps
// ErrSnapshotGone when a newer snapshot dropped it.
func ReadChunk[T any](ctx context.Context, l *Log, s Snapshot, i int) ([]T, error) {
	b, err := l.rc.Get(ctx, l.chunk(s.ID, i)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: chunk %d of snapshot %s", ErrSnapshotGone, i, s.ID)
	}
	var c chunk[T]
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	return c.Items, err
}

// ChunkExists reports whether chunk i of the snapshot at id is stored.
func (l *Log) ChunkExists(ctx context.Context, id string, i int) (bool, error) {
	n, err := l.rc.Exists(ctx, l.chunk(id, i)).Result()
	return n > 0, err
}

// Drop removes the log, its snapshot and its counters.
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
