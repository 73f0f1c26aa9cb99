package jobs

import (
	"context"
	"slices"
	"sync"
	"time"
)

// DefaultKeep is how many finished jobs a Local queue remembers.
const DefaultKeep = 100

// Local runs jobs inside the process, one at a time in the order they
// were queued (a single runner goroutine), for a server without Redis. It
// remembers the last keep finished jobs; a job runs once (no retries).
type Local struct {
	h    Handler
	keep int

	mu      sync.Mutex
	wake    *sync.Cond
	jobs    map[string]*localJob
	order   []string // every remembered id, oldest first
	pending []string // queued ids, oldest first
	closed  bool
	done    chan struct{} // closed when the runner returns
}

type localJob struct {
	Job
	cancel    context.CancelFunc // of a running job
	cancelled bool               // a cancel was requested while it ran
	ended     chan struct{}      // closed when the job is final
}

// NewLocal starts a queue running h; keep <= 0 remembers DefaultKeep
// finished jobs. Close stops it.
func NewLocal(h Handler, keep int) *Local {
	if keep <= 0 {
		keep = DefaultKeep
	}
	l := &Local{h: h, keep: keep, jobs: map[string]*localJob{}, done: make(chan struct{})}
	l.wake = sync.NewCond(&l.mu)
	go l.run()
	return l
}

// Enqueue implements Queue.
func (l *Local) Enqueue(_ context.Context, spec Spec) (Job, error) {
	if err := spec.Validate(); err != nil {
		return Job{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Job{}, ErrClosed
	}
	j := &localJob{Job: Job{ID: newID(), Spec: spec, Status: Queued, EnqueuedAt: time.Now()}, ended: make(chan struct{})}
	l.jobs[j.ID] = j
	l.order = append(l.order, j.ID)
	l.pending = append(l.pending, j.ID)
	l.wake.Signal()
	return j.Job, nil
}

// Get implements Queue.
func (l *Local) Get(_ context.Context, id string) (Job, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if j, ok := l.jobs[id]; ok {
		return j.Job, nil
	}
	return Job{}, ErrNotFound
}

// List implements Queue.
func (l *Local) List(_ context.Context, n int) ([]Job, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Job, 0, max(0, min(n, len(l.order))))
	for i := len(l.order) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, l.jobs[l.order[i]].Job)
	}
	return out, nil
}

// Cancel implements Queue.
func (l *Local) Cancel(ctx context.Context, id string) (Job, error) {
	l.mu.Lock()
	j, ok := l.jobs[id]
	switch {
	case !ok:
		l.mu.Unlock()
		return Job{}, ErrNotFound
	case j.Status.Final():
		l.mu.Unlock()
		return j.Job, ErrFinished
	case j.Status == Queued:
		l.pending = slices.DeleteFunc(l.pending, func(p string) bool { return p == id })
		j.finish(Cancelled)
		l.mu.Unlock()
		return j.Job, nil
	}
	j.cancelled = true
	j.cancel()
	l.mu.Unlock()
	ctx, stop := context.WithTimeout(ctx, cancelWait)
	defer stop()
	select {
	case <-j.ended:
	case <-ctx.Done():
	}
	return l.Get(ctx, id)
}

// Close cancels the running job and the queued ones, and waits for the
// runner to return.
func (l *Local) Close() error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		for _, id := range l.pending {
			l.jobs[id].finish(Cancelled)
		}
		l.pending = nil
		for _, j := range l.jobs {
			if j.Status == Running {
				j.cancelled = true
				j.cancel()
			}
		}
		l.wake.Broadcast()
	}
	l.mu.Unlock()
	<-l.done
	return nil
}

func (l *Local) run() {
	defer close(l.done)
	for {
		j, ctx := l.next()
		if j == nil {
			return
		}
		progress := func(stage string, f float64) {
			l.mu.Lock()
			j.Stage, j.Fraction = stage, clamp(f)
			l.mu.Unlock()
		}
		version, err := l.h(ctx, j.ID, j.Spec, progress)
		l.mu.Lock()
		j.cancel()
		st := ended(err, j.cancelled, false)
		if st == Succeeded {
			j.Version, j.Fraction = version, 1
		} else {
			j.Error = err.Error()
		}
		j.finish(st)
		l.forget()
		l.mu.Unlock()
	}
}

// next waits for a queued job and marks it running; nil when closed.
func (l *Local) next() (*localJob, context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.pending) == 0 && !l.closed {
		l.wake.Wait()
	}
	if l.closed {
		return nil, nil
	}
	j := l.jobs[l.pending[0]]
	l.pending = l.pending[1:]
	ctx, cancel := context.WithCancel(context.Background())
	j.cancel, j.Status, j.StartedAt, j.Attempts = cancel, Running, time.Now(), 1
	return j, ctx
}

// finish makes j final; l.mu is held.
func (j *localJob) finish(st Status) {
	j.Status, j.FinishedAt = st, time.Now()
	close(j.ended)
}

// forget drops the oldest finished jobs beyond keep; l.mu is held.
func (l *Local) forget() {
	finished := 0
	for _, id := range l.order {
		if l.jobs[id].Status.Final() {
			finished++
		}
	}
	l.order = slices.DeleteFunc(l.order, func(id string) bool {
		if finished > l.keep && l.jobs[id].Status.Final() {
			delete(l.jobs, id)
			finished--
			return true
		}
		return false
	})
}
