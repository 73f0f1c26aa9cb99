// Package changelog is a durable, ordered change log in Redis that every
// process of a deployment follows: a Redis Stream whose entries (JSON
// payloads) are numbered by the script that appends them, the position of
// the last one, named locks, and chunked snapshots that let a new follower
// start without the whole log and let the log be trimmed below them. The
// corpus (index/replica) and the social data (social/live) each keep one
// under a hash tag of their own, so that all keys of a log live in one slot
// of a Redis Cluster and the appending script can touch them all.
package changelog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pos is a position in the log: the stream ID of an entry and its ordinal
// (1 for the first entry ever appended), which gives a lag in entries.
type Pos struct {
	ID string
	N  int64
}

// String is the form a follower stores: "ID N".
func (p Pos) String() string { return p.ID + " " + strconv.FormatInt(p.N, 10) }

// ParsePos parses a Pos.String; "" is the zero Pos (nothing applied).
func ParsePos(s string) (Pos, error) {
	if s == "" {
		return Pos{}, nil
	}
	id, n, ok := strings.Cut(s, " ")
	v, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || !validID(id) {
		return Pos{}, fmt.Errorf("changelog: bad position %q", s)
	}
	return Pos{ID: id, N: v}, nil
}

// Log is one change log and its snapshots in Redis.
type Log struct {
	rc redis.UniversalClient
	ns string // prefix + the hash tag; every key starts with it
}

// New returns the log of rc whose keys start with ns, which must hold a
// hash tag ("{kr-corpus}", or a test's prefix before it).
func New(rc redis.UniversalClient, ns string) *Log {
	return &Log{rc: rc, ns: ns}
}

func (l *Log) stream() string { return l.ns + ":log" }
func (l *Log) seq() string    { return l.ns + ":seq" }  // ordinal of the last entry
func (l *Log) head() string   { return l.ns + ":head" } // Pos of the last entry
func (l *Log) snap() string   { return l.ns + ":snap" } // the newest snapshot's meta
func (l *Log) chunk(id string, i int) string {
	return l.ns + ":snap:" + id + ":" + strconv.Itoa(i)
}

// appendScript numbers an entry and appends it, atomically: its keys share
// one slot.
var appendScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[2])
local id = redis.call('XADD', KEYS[1], '*', 'n', n, 'e', ARGV[1])
redis.call('SET', KEYS[3], id .. ' ' .. n)
return {id, n}
`)

// Append adds the payload to the log and returns its position. Once it
// returns, the entry is in Redis (durable as Redis' persistence makes it).
func (l *Log) Append(ctx context.Context, payload []byte) (Pos, error) {
	v, err := appendScript.Run(ctx, l.rc, []string{l.stream(), l.seq(), l.head()}, payload).Slice()
	if err != nil {
		return Pos{}, fmt.Errorf("changelog: append: %w", err)
	}
	id, _ := v[0].(string)
	n, _ := v[1].(int64)
	return Pos{ID: id, N: n}, nil
}

// Record is an entry read from the log.
type Record struct {
	Pos     Pos
	Payload []byte
	Err     error // the entry has no valid ordinal: followers skip it alike
}

// Read returns up to count entries after pos, waiting up to block for the
// first when there is none (block 0: do not wait).
func (l *Log) Read(ctx context.Context, after Pos, count int, block time.Duration) ([]Record, error) {
	if block <= 0 {
		block = -1 // go-redis: no BLOCK argument
	}
	res, err := l.rc.XRead(ctx, &redis.XReadArgs{Streams: []string{l.stream(), cmpID(after.ID)}, Count: int64(count), Block: block}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, s := range res {
		for _, m := range s.Messages {
			out = append(out, decode(m))
		}
	}
	return out, nil
}

// Last returns the last entry of the log; ok is false when it is empty.
func (l *Log) Last(ctx context.Context) (r Record, ok bool, err error) {
	last, err := l.rc.XRevRangeN(ctx, l.stream(), "+", "-", 1).Result()
	if err != nil || len(last) == 0 {
		return r, false, err
	}
	return decode(last[0]), true, nil
}

// Len returns the number of entries the stream holds (after trimming).
func (l *Log) Len(ctx context.Context) (int64, error) {
	return l.rc.XLen(ctx, l.stream()).Result()
}

// cmpID is the ID to read after: "0-0" for the zero position.
func cmpID(id string) string {
	if id == "" {
		return "0-0"
	}
	return id
}

func decode(m redis.XMessage) Record {
	r := Record{Pos: Pos{ID: m.ID}}
	n, _ := m.Values["n"].(string)
	e, _ := m.Values["e"].(string)
	r.Payload = []byte(e)
	var err error
	if r.Pos.N, err = strconv.ParseInt(n, 10, 64); err != nil {
		r.Err = fmt.Errorf("changelog: entry %s: bad ordinal %q", m.ID, n)
	}
	return r
}

// Head returns the position of the last entry appended, the zero Pos when
// none was.
func (l *Log) Head(ctx context.Context) (Pos, error) {
	s, err := l.rc.Get(ctx, l.head()).Result()
	if errors.Is(err, redis.Nil) {
		return Pos{}, nil
	}
	if err != nil {
		return Pos{}, err
	}
	return ParsePos(s)
}

// parseID splits a stream ID "ms-seq".
func parseID(id string) (ms, seq uint64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return ms, seq, found && err1 == nil && err2 == nil
}

func validID(id string) bool {
	_, _, ok := parseID(id)
	return ok
}

// Less reports whether stream ID a is before b; "" is before everything.
func Less(a, b string) bool {
	if a == "" || b == "" {
		return a == "" && b != ""
	}
	am, as, _ := parseID(a)
	bm, bs, _ := parseID(b)
	return am < bm || am == bm && as < bs
}

// Millis is the time, in Unix milliseconds, at which Redis appended the
// entry of id; 0 for "".
func Millis(id string) int64 {
	ms, _, _ := parseID(id)
	return int64(ms)
}

// Lock takes the named lock of the log for ttl, for work one process of a
// deployment does at a time; ok is false when another holder has it (or
// Redis does not answer).
func (l *Log) Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(), ok bool) {
	key := l.ns + ":lock:" + name
	ok, err := l.rc.SetNX(ctx, key, "1", ttl).Result()
	if err != nil || !ok {
		return nil, false
	}
	return func() {
		// A lock left held (Redis restarting as it is released) would stop
		// the work everywhere until it expires: try again for a while.
		ctx := context.WithoutCancel(ctx)
		for range 20 {
			if l.rc.Del(ctx, key).Err() == nil {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
	}, true
}

// Bytes returns the memory Redis reports for the log's stream
// (MEMORY USAGE, all of it sampled).
func (l *Log) Bytes(ctx context.Context) (int64, error) {
	return l.rc.MemoryUsage(ctx, l.stream(), 0).Result()
}
