package feedback

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Log keeps events in the order they were appended, within its Retention.
type Log interface {
	// Append stores events, all or none.
	Append(ctx context.Context, events []Event) error
	// Scan calls f on every event kept, oldest first, until f fails.
	Scan(ctx context.Context, f func(Event) error) error
	// Where names the log for people: its Redis key or its directory.
	Where() string
	Close() error
}

// Retention bounds a Log: it keeps about the newest MaxEvents events
// (0: no bound on the count) and none older than MaxAge (0: no bound on
// the age). Each log says how far above the count it may go.
type Retention struct {
	MaxEvents int64
	MaxAge    time.Duration
}

// Validate reports a negative bound.
func (r Retention) Validate() error {
	if r.MaxEvents < 0 || r.MaxAge < 0 {
		return fmt.Errorf("event retention %d events, %s: bounds are 0 (none) or positive", r.MaxEvents, r.MaxAge)
	}
	return nil
}

// All returns every event of l, oldest first.
func All(ctx context.Context, l Log) ([]Event, error) {
	var out []Event
	err := l.Scan(ctx, func(e Event) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// ParseRetention reads a retention bound as a flag gives it: a count
// ("1000000"), an age ("720h"), or both ("1000000,720h"); "0" is no bound.
func ParseRetention(s string) (Retention, error) {
	var r Retention
	var count, age bool
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if n, err := strconv.ParseInt(part, 10, 64); err == nil && !count {
			r.MaxEvents, count = n, true
		} else if d, err := time.ParseDuration(part); err == nil && !age && strings.ContainsAny(part, "hmsun") {
			r.MaxAge, age = d, true
		} else {
			return Retention{}, fmt.Errorf("event retention %q: give a count, an age (e.g. 720h) or both, comma-separated", s)
		}
	}
	return r, r.Validate()
}
