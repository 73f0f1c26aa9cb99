package changelog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestFollowRetriesThenFollows: a failing step is logged with a doubling
// pause and retried; after runs once a step succeeds; an ended ctx stops
// Follow at once.
func TestFollowRetriesThenFollows(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	ctx, cancel := context.WithCancel(context.Background())
	steps, afters := 0, 0
	Follow(ctx, log, "test", func(context.Context) error {
		if steps++; steps <= 3 {
			return errors.New("redis down")
		}
		return nil
	}, func(context.Context) {
		afters++
		cancel()
	})
	if steps != 4 || afters != 1 {
		t.Fatalf("steps %d, afters %d; want 4 and 1", steps, afters)
	}
	out := buf.String()
	for _, want := range []string{"retry_in=50ms", "retry_in=100ms", "retry_in=200ms"} {
		if !strings.Contains(out, `msg="applying the test log" err="redis down" `+want) {
			t.Fatalf("log lacks %s:\n%s", want, out)
		}
	}
	// Ended: a failing step is not retried nor logged.
	buf.Reset()
	steps = 0
	Follow(ctx, log, "test", func(context.Context) error { steps++; return errors.New("x") }, func(context.Context) {})
	if steps != 0 || buf.Len() != 0 {
		t.Fatalf("after the end: %d steps, log %q", steps, buf.String())
	}
}
