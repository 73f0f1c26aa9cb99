// Package replica replicates the corpus over Redis. Every change (a batch
// of docs added or replaced, or of ids deleted) is one entry of the
// corpus' change log (internal/changelog, under the hash tag {kr-corpus});
// every server and worker runs a Follower that applies the log, in order,
// to its own bleve index, recording the entry's position in the batch that
// applies it (index.AddAt), so a restart resumes where the index is and a
// crash neither loses nor repeats an entry. A snapshot (the docs at one
// position, in chunks) lets a new replica start without the whole log, and
// lets the log be trimmed: entries below the newest snapshot are dropped,
// and a replica whose position is below what was dropped loads the
// snapshot again.
package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/changelog"
	"github.com/redis/go-redis/v9"
)

// Entry is one change: docs added or replaced (Add), or ids deleted
// (Delete). An entry is applied whole or, when a replica's index refuses
// it (an invalid doc), not at all, identically on every replica.
type Entry struct {
	Add    []index.Doc `json:"add,omitempty"`
	Delete []string    `json:"delete,omitempty"`
}

// Pos is a position in the log.
type Pos = changelog.Pos

// Snapshot describes the newest snapshot of the corpus.
type Snapshot = changelog.Snapshot

// Log is the change log and the snapshots of one corpus in Redis.
type Log struct{ *changelog.Log }

// DefaultPrefix leaves a deployment's keys as {kr-corpus}:...
const DefaultPrefix = ""

// NewLog returns the log of rc under prefix (tests give each a prefix of
// its own).
func NewLog(rc redis.UniversalClient, prefix string) *Log {
	return &Log{changelog.New(rc, prefix+"{kr-corpus}")}
}

// Append adds e to the log and returns its position. Once it returns, the
// entry is in Redis (durable as Redis' persistence makes it).
func (l *Log) Append(ctx context.Context, e Entry) (Pos, error) {
	if len(e.Add) == 0 && len(e.Delete) == 0 {
		return Pos{}, errors.New("replica: empty entry")
	}
	b, err := json.Marshal(e)
	if err != nil {
		return Pos{}, err
	}
	return l.Log.Append(ctx, b)
}

// Record is an entry read from the log.
type Record struct {
	Pos   Pos
	Entry Entry
	Err   error // the entry does not decode: replicas skip it alike
}

// Read returns up to count entries after pos, waiting up to block for the
// first when there is none (block 0: do not wait).
func (l *Log) Read(ctx context.Context, after Pos, count int, block time.Duration) ([]Record, error) {
	raw, err := l.Log.Read(ctx, after, count, block)
	if err != nil {
		return nil, err
	}
	out := make([]Record, len(raw))
	for i, r := range raw {
		out[i] = decode(r)
	}
	return out, nil
}

func decode(r changelog.Record) Record {
	out := Record{Pos: r.Pos, Err: r.Err}
	if out.Err == nil {
		if err := json.Unmarshal(r.Payload, &out.Entry); err != nil {
			out.Err = fmt.Errorf("replica: entry %s: %v", r.Pos.ID, err)
		}
	}
	return out
}
