package jobs

import (
	"context"
	"sync"
	"testing"
	"time"
)

// work is the Handler of the tests: it reports "loading", waits for a
// token on hold (when hold is set), reports "training", then fails with
// fail or publishes its id, stopping without publishing when its context
// is cancelled.
type work struct {
	hold chan struct{}
	fail error

	mu        sync.Mutex
	runs      []string // an id per run started
	published []string
}

func (w *work) handle(ctx context.Context, id string, _ Spec, progress func(string, float64)) (string, error) {
	w.mu.Lock()
	w.runs = append(w.runs, id)
	w.mu.Unlock()
	progress("loading", 0.25)
	if w.hold != nil {
		select {
		case <-w.hold:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	progress("training", 0.5)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if w.fail != nil {
		return "", w.fail
	}
	w.mu.Lock()
	w.published = append(w.published, id)
	w.mu.Unlock()
	return id, nil
}

func (w *work) counts() (runs, published []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.runs...), append([]string(nil), w.published...)
}

// waitFor polls q until job id satisfies ok, failing after timeout.
func waitFor(t *testing.T, q Queue, id string, timeout time.Duration, what string, ok func(Job) bool) Job {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		j, err := q.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("job %s: %v", id, err)
		}
		if ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: not %s after %v: %+v", id, what, timeout, j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func status(s Status) func(Job) bool { return func(j Job) bool { return j.Status == s } }

func stage(s string) func(Job) bool {
	return func(j Job) bool { return j.Status == Running && j.Stage == s }
}
