package feedback

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisKey is the stream of events, after the caller's prefix. Its hash tag
// puts any key the events grow beside it in the same cluster slot.
const RedisKey = "kernelrank:{events}:log"

// RedisLog is a Log in a Redis stream: one entry an event (its JSON in
// field "e"), trimmed as it grows. The count bound is approximate, as
// XADD's MAXLEN ~ trims whole stream nodes: the stream keeps at least
// MaxEvents and at most one node more (stream-node-max-entries, 100 by
// default). The age bound trims by entry id (XTRIM MINID ~), the Redis
// server's clock.
type RedisLog struct {
	rc  redis.UniversalClient
	key string
	ret Retention
}

// NewRedisLog keeps events in rc under prefix+RedisKey. Closing it leaves
// rc open.
func NewRedisLog(rc redis.UniversalClient, prefix string, ret Retention) (*RedisLog, error) {
	if err := ret.Validate(); err != nil {
		return nil, err
	}
	return &RedisLog{rc: rc, key: prefix + RedisKey, ret: ret}, nil
}

// Append adds events in one MULTI/EXEC, then trims the stream.
func (l *RedisLog) Append(ctx context.Context, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	_, err := l.rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, e := range events {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			p.XAdd(ctx, &redis.XAddArgs{Stream: l.key, MaxLen: l.ret.MaxEvents, Approx: true, Values: []any{"e", b}})
		}
		if l.ret.MaxAge > 0 {
			p.XTrimMinIDApprox(ctx, l.key, strconv.FormatInt(time.Now().Add(-l.ret.MaxAge).UnixMilli(), 10), 0)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("events: redis %s: %w", l.key, err)
	}
	return nil
}

// scanPage is how many entries one XRANGE reads.
const scanPage = 1000

// Scan reads the stream in pages, oldest first.
func (l *RedisLog) Scan(ctx context.Context, f func(Event) error) error {
	start := "-"
	for {
		msgs, err := l.rc.XRangeN(ctx, l.key, start, "+", scanPage).Result()
		if err != nil {
			return fmt.Errorf("events: redis %s: %w", l.key, err)
		}
		for _, m := range msgs {
			s, _ := m.Values["e"].(string)
			var e Event
			if err := json.Unmarshal([]byte(s), &e); err != nil {
				return fmt.Errorf("events: redis %s entry %s: %w", l.key, m.ID, err)
			}
			if err := f(e); err != nil {
				return err
			}
		}
		if len(msgs) < scanPage {
			return nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}

// Where is the stream's key.
func (l *RedisLog) Where() string { return "redis " + l.key }

// Close does nothing: the client is the caller's.
func (l *RedisLog) Close() error { return nil }
