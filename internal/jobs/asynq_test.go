package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// asynqEnv is a queue of its own on a test Redis, its options, and the
// workers started on it; the queue's keys are deleted when the test ends.
type asynqEnv struct {
	t  *testing.T
	ro *redis.UniversalOptions
	o  Options
	q  *Asynq
}

func newAsynqEnv(t *testing.T, url string) *asynqEnv {
	t.Helper()
	ro, err := cache.ParseRedisURL(url)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Queue: strings.TrimSuffix(redistest.Prefix(t), ":"), MaxRetry: 2, RetryDelay: 100 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	q, err := NewAsynq(context.Background(), ro, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The workers have stopped by now (cleanups run last first).
		if err := deleteQueue(q.rc, q.o.Queue); err != nil {
			t.Errorf("deleting the queue's keys: %v", err)
		}
		q.Close()
	})
	return &asynqEnv{t: t, ro: ro, o: o, q: q}
}

// worker runs a Worker with h until the test ends.
func (e *asynqEnv) worker(h Handler) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Worker(ctx, e.ro, e.o, 1, h) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("worker: %v", err)
		}
	})
}

func (e *asynqEnv) enqueue(spec Spec) Job {
	e.t.Helper()
	j, err := e.q.Enqueue(context.Background(), spec)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

const long = 20 * time.Second // generous: workers poll every second

func TestAsynqRunsAJob(t *testing.T) {
	t.Parallel()
	redistest.EachServer(t, func(t *testing.T, u string) {
		t.Parallel()
		e := newAsynqEnv(t, u)
		w := &work{hold: make(chan struct{})}
		e.worker(w.handle)
		j := e.enqueue(Spec{Target: TargetSocial, Learner: "mkl-align"})
		if j.Status != Queued || j.Attempts != 0 {
			t.Errorf("just queued: %+v", j)
		}
		j = waitFor(t, e.q, j.ID, long, "running", stage("loading"))
		if j.Fraction != 0.25 || j.Attempts != 1 || j.StartedAt.IsZero() || j.Spec.Learner != "mkl-align" {
			t.Errorf("running: %+v", j)
		}
		w.hold <- struct{}{}
		j = waitFor(t, e.q, j.ID, long, "succeeded", status(Succeeded))
		if j.Version != j.ID || j.Fraction != 1 || j.Error != "" || j.FinishedAt.Before(j.StartedAt) {
			t.Errorf("succeeded: %+v", j)
		}
		runs, published := w.counts()
		if !slices.Equal(runs, []string{j.ID}) || !slices.Equal(published, []string{j.ID}) {
			t.Errorf("runs %v, published %v; want one of each", runs, published)
		}
		// asynq keeps the completed task (Retention) beside the record.
		if info, err := e.q.insp.GetTaskInfo(e.o.Queue, j.ID); err != nil || info.State != asynq.TaskStateCompleted {
			t.Errorf("asynq task: %v, %v; want completed", info, err)
		}
	})
}

func TestAsynqCancel(t *testing.T) {
	t.Parallel()
	e := newAsynqEnv(t, redistest.URL(t))
	ctx := context.Background()
	queued := e.enqueue(Spec{Target: TargetSearch})
	j, err := e.q.Cancel(ctx, queued.ID)
	if err != nil || j.Status != Cancelled || j.FinishedAt.IsZero() {
		t.Fatalf("cancel queued: %+v, %v", j, err)
	}

	w := &work{hold: make(chan struct{})}
	e.worker(w.handle)
	running := e.enqueue(Spec{Target: TargetSocial})
	waitFor(t, e.q, running.ID, long, "running", stage("loading"))
	j, err = e.q.Cancel(ctx, running.ID)
	if err != nil || j.Status != Cancelled || j.Version != "" {
		t.Fatalf("cancel running: %+v, %v", j, err)
	}
	// Past the retry delay, a job that ran after it must have started
	// after the cancelled one.
	after := e.enqueue(Spec{Target: TargetSocial})
	waitFor(t, e.q, after.ID, long, "running", stage("loading"))
	w.hold <- struct{}{}
	waitFor(t, e.q, after.ID, long, "succeeded", status(Succeeded))
	time.Sleep(3 * e.o.RetryDelay)
	runs, published := w.counts()
	if !slices.Equal(runs, []string{running.ID, after.ID}) || !slices.Equal(published, []string{after.ID}) {
		t.Errorf("runs %v, published %v: the queued job must never run, the cancelled one run once and publish nothing", runs, published)
	}
	if j, _ := e.q.Get(ctx, running.ID); j.Status != Cancelled {
		t.Errorf("cancelled job later: %+v", j)
	}
	if _, err := e.q.Cancel(ctx, running.ID); !errors.Is(err, ErrFinished) {
		t.Errorf("cancel a cancelled job: %v, want ErrFinished", err)
	}
	if _, err := e.q.Cancel(ctx, after.ID); !errors.Is(err, ErrFinished) {
		t.Errorf("cancel a succeeded job: %v, want ErrFinished", err)
	}
	if _, err := e.q.Cancel(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("cancel unknown: %v, want ErrNotFound", err)
	}
	if _, err := e.q.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("get unknown: %v, want ErrNotFound", err)
	}
}

func TestAsynqRetriesThenFails(t *testing.T) {
	t.Parallel()
	e := newAsynqEnv(t, redistest.URL(t))
	w := &work{fail: errors.New("no data yet")}
	e.worker(w.handle)
	j := e.enqueue(Spec{Target: TargetSocial})
	j = waitFor(t, e.q, j.ID, long, "failed", status(Failed))
	if j.Attempts != e.o.MaxRetry+1 || j.Error != "no data yet" || j.Version != "" || j.FinishedAt.IsZero() {
		t.Errorf("failed: %+v; want %d attempts", j, e.o.MaxRetry+1)
	}
	if runs, _ := w.counts(); len(runs) != e.o.MaxRetry+1 {
		t.Errorf("%d runs, want %d", len(runs), e.o.MaxRetry+1)
	}

	// A spec the handler cannot run is not retried.
	e2 := newAsynqEnv(t, redistest.URL(t))
	e2.worker(Dispatch(w.handle, nil))
	j = e2.enqueue(Spec{Target: TargetSearch})
	j = waitFor(t, e2.q, j.ID, long, "failed", status(Failed))
	if j.Attempts != 1 || !strings.Contains(j.Error, "not available") {
		t.Errorf("unavailable target: %+v; want one attempt", j)
	}
}

func TestAsynqWorkersShareTheQueue(t *testing.T) {
	t.Parallel()
	e := newAsynqEnv(t, redistest.URL(t))
	var mu sync.Mutex
	ranOn := map[string]string{} // job id -> worker
	both := make(chan struct{})
	for _, name := range []string{"A", "B"} {
		e.worker(func(ctx context.Context, id string, _ Spec, _ func(string, float64)) (string, error) {
			mu.Lock()
			ranOn[id] = name
			if len(ranOn) == 2 {
				close(both)
			}
			mu.Unlock()
			// Hold until both jobs run: each worker has one slot, so the
			// two jobs must be on the two workers at once.
			select {
			case <-both:
				return id, nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
	}
	a, b := e.enqueue(Spec{Target: TargetSocial}), e.enqueue(Spec{Target: TargetSearch})
	for _, j := range []Job{a, b} {
		if j := waitFor(t, e.q, j.ID, long, "succeeded", status(Succeeded)); j.Attempts != 1 {
			t.Errorf("%+v: want one attempt", j)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if ranOn[a.ID] == ranOn[b.ID] {
		t.Errorf("both jobs ran on worker %s", ranOn[a.ID])
	}
}

func TestAsynqListAndBadInput(t *testing.T) {
	t.Parallel()
	e := newAsynqEnv(t, redistest.URL(t))
	ctx := context.Background()
	var ids []string
	for _, target := range []string{TargetSocial, TargetSearch, TargetAll} {
		ids = append(ids, e.enqueue(Spec{Target: target}).ID)
	}
	list, err := e.q.List(ctx, 2)
	if err != nil || len(list) != 2 || list[0].ID != ids[2] || list[1].ID != ids[1] || list[0].Status != Queued {
		t.Errorf("List(2) = %+v, %v; want %v, %v queued", list, err, ids[2], ids[1])
	}
	if list, _ := e.q.List(ctx, 10); len(list) != 3 || list[2].ID != ids[0] || list[2].Spec.Target != TargetSocial {
		t.Errorf("List(10) = %+v", list)
	}
	if _, err := e.q.Enqueue(ctx, Spec{Target: "images"}); !errors.Is(err, ErrSpec) {
		t.Errorf("bad spec: %v", err)
	}
	if list, _ := e.q.List(ctx, 10); len(list) != 3 {
		t.Errorf("a rejected spec was listed: %d jobs", len(list))
	}

	// Redis that does not answer is an error, at once.
	ro, _ := cache.ParseRedisURL("redis://127.0.0.1:1/0")
	if _, err := NewAsynq(ctx, ro, Options{}); err == nil {
		t.Error("NewAsynq without Redis: no error")
	}
	if err := Worker(ctx, ro, Options{}, 1, nil); err == nil {
		t.Error("Worker without Redis: no error")
	}
	if err := Worker(ctx, e.ro, Options{}, 0, nil); err == nil || !strings.Contains(err.Error(), "concurrency") {
		t.Errorf("Worker with concurrency 0: %v", err)
	}
}

// deleteQueue deletes every key of queue: asynq's (tasks, stats) and the
// job records, on every master of a cluster.
func deleteQueue(rc redis.UniversalClient, queue string) error {
	del := func(ctx context.Context, c *redis.Client) error {
		for _, pattern := range []string{"asynq:{" + queue + "}:*", "kernelrank:jobs:{" + queue + "}:*"} {
			it := c.Scan(ctx, 0, pattern, 100).Iterator()
			for it.Next(ctx) {
				if err := c.Del(ctx, it.Val()).Err(); err != nil {
					return err
				}
			}
			if err := it.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	ctx := context.Background()
	var err error
	if cc, ok := rc.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, del)
	} else {
		err = del(ctx, rc.(*redis.Client))
	}
	return errors.Join(err, rc.SRem(ctx, "asynq:queues", queue).Err())
}
