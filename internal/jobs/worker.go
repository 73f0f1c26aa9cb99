package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// progressEvery throttles a running job's progress writes to Redis.
const progressEvery = 200 * time.Millisecond

// Worker runs the jobs of the Asynq queue o.Queue with h, concurrency at
// a time, until ctx ends; then it stops taking jobs and gives the running
// ones asynq's shutdown grace (8 s) before handing them back to the queue.
// A worker that dies instead loses its lease: asynq gives its jobs to
// another worker after about a minute (30 s of lease, 30 s of margin for
// clock skew, checked every minute).
func Worker(ctx context.Context, ro *redis.UniversalOptions, o Options, concurrency int, h Handler) error {
	if concurrency < 1 {
		return fmt.Errorf("jobs: concurrency %d: must be at least 1", concurrency)
	}
	o.fill()
	rc, err := connect(ctx, ro)
	if err != nil {
		return err
	}
	defer rc.Close()
	srv := asynq.NewServerFromRedisClient(rc, asynq.Config{
		Concurrency:              concurrency,
		Queues:                   map[string]int{o.Queue: 1},
		RetryDelayFunc:           func(int, error, *asynq.Task) time.Duration { return o.RetryDelay },
		DelayedTaskCheckInterval: time.Second, // a retry runs soon after its delay
		Logger:                   asynqLog{o.Log},
	})
	w := &worker{h: h, o: o, rec: newRecords(rc, o.Queue, o.History), client: asynq.NewClientFromRedisClient(rc), log: o.Log}
	mux := asynq.NewServeMux()
	mux.HandleFunc(taskType, w.process)
	mux.HandleFunc(shardType, w.processPart)
	mux.HandleFunc(finishType, w.processPart)
	if err := srv.Start(mux); err != nil {
		return err
	}
	o.Log.Info("worker started", "queue", o.Queue, "concurrency", concurrency)
	<-ctx.Done()
	srv.Shutdown()
	return nil
}

type worker struct {
	h      Handler
	o      Options
	rec    records
	client *asynq.Client // queues the shards of split jobs
	log    *slog.Logger
}

// split returns how the worker splits spec's job; nil: in one task.
func (w *worker) split(spec Spec) *Split {
	if w.o.Split == nil {
		return nil
	}
	return w.o.Split(spec)
}

// process runs one attempt of a job and keeps its record. Its error tells
// asynq what to do next: nil (done), RevokeTask (cancelled: neither retry
// nor archive), SkipRetry (the spec cannot run) or the handler's (retry,
// or archive when no retries are left).
func (w *worker) process(ctx context.Context, t *asynq.Task) error {
	id, _ := asynq.GetTaskID(ctx)
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	var spec Spec
	if err := json.Unmarshal(t.Payload(), &spec); err != nil {
		return fmt.Errorf("job %s: bad payload: %v: %w", id, err, asynq.SkipRetry)
	}
	if stop, err := w.begin(ctx, id, fStatus, string(Running), fStarted, stamp(time.Now()),
		fAttempts, retried+1, fStage, "", fFraction, 0, fError, ""); stop {
		return err
	}

	hctx, stop := context.WithCancel(ctx)
	defer stop()
	var version string
	var herr error
	if sp := w.split(spec); sp != nil {
		// The job goes on in its shards' tasks, which end it.
		if herr = w.runSplit(hctx, id, spec, sp, w.progress(hctx, id, stop)); herr == nil {
			return nil
		}
	} else {
		version, herr = w.h(hctx, id, spec, w.progress(hctx, id, stop))
	}

	// ctx may be over (cancelled, timed out): the record is written anyway.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	cancelled, err := w.rec.update(wctx, id)
	if err != nil && !isGone(err) {
		w.log.Warn("job record", "id", id, "err", err)
	}
	return w.end(wctx, id, ended(herr, cancelled, retried < maxRetry), version, herr)
}

// begin sets fields fv of job id's record as an attempt starts and says
// whether the attempt stops there, and what to tell asynq: the job has
// finished before (a worker died between its record and asynq's
// bookkeeping, or a cancelled run came back) or was forgotten, and there
// is nothing to do; or a cancel was requested.
func (w *worker) begin(ctx context.Context, id string, fv ...any) (stop bool, err error) {
	cancelled, err := w.rec.update(ctx, id, fv...)
	switch {
	case isGone(err):
		return true, nil
	case err != nil:
		return true, err
	case cancelled:
		return true, w.end(ctx, id, Cancelled, "", errors.New("cancelled before it ran"))
	}
	return false, nil
}

// end writes how an attempt ended, and returns what asynq should do next.
func (w *worker) end(ctx context.Context, id string, st Status, version string, herr error) error {
	fv := []any{fStatus, string(st)}
	switch st {
	case Succeeded:
		fv = append(fv, fVersion, version, fFraction, 1, fError, "")
	default:
		fv = append(fv, fError, herr.Error())
	}
	if st.Final() {
		fv = append(fv, fFinished, stamp(time.Now()))
	}
	if _, err := w.rec.update(ctx, id, fv...); err != nil && !isGone(err) {
		w.log.Warn("job record", "id", id, "status", st, "err", err)
	}
	switch {
	case st == Cancelled:
		return asynq.RevokeTask
	case errors.Is(herr, ErrSpec):
		return fmt.Errorf("%w: %w", herr, asynq.SkipRetry)
	}
	return herr
}

// progress returns the progress function of a running job: it writes at
// most every progressEvery (and at every new stage), and cancels the job
// when its record says a cancel was requested, in case asynq's
// cancellation message was missed.
func (w *worker) progress(ctx context.Context, id string, stop context.CancelFunc) func(string, float64) {
	var mu sync.Mutex
	var last time.Time
	var lastStage string
	return func(stage string, f float64) {
		mu.Lock()
		defer mu.Unlock()
		if stage == lastStage && time.Since(last) < progressEvery {
			return
		}
		last, lastStage = time.Now(), stage
		cancel, err := w.rec.update(ctx, id, fStage, stage, fFraction, clamp(f))
		if err != nil && ctx.Err() == nil {
			w.log.Warn("job progress", "id", id, "err", err)
		}
		if cancel {
			stop()
		}
	}
}
