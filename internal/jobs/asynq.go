package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// taskType is the asynq task type of a job.
const taskType = "kernelrank:retrain"

// DefaultQueue is the queue of a deployment that names none.
const DefaultQueue = "kernelrank"

// Options configure an Asynq queue and its workers; zero values take the
// defaults. Queues and workers of one deployment must agree on Queue.
type Options struct {
	Queue      string        // asynq queue name (default DefaultQueue)
	MaxRetry   int           // retries after a failed attempt (default 3)
	Timeout    time.Duration // of one attempt (default 1 h)
	RetryDelay time.Duration // before a failed job runs again (default 2 s)
	History    time.Duration // how long job records are kept (default 7 days)
	Log        *slog.Logger  // asynq's and the workers' logs (default slog.Default())
	// Split, for workers, returns how a job is split into shards (Split);
	// nil, or a nil *Split for a spec: the job runs in one task.
	Split func(Spec) *Split
}

func (o *Options) fill() {
	if o.Queue == "" {
		o.Queue = DefaultQueue
	}
	if o.MaxRetry <= 0 {
		o.MaxRetry = 3
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Hour
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 2 * time.Second
	}
	if o.History <= 0 {
		o.History = 7 * 24 * time.Hour
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
}

// Asynq queues jobs in Redis for Worker processes. The job records (status,
// progress, timings, version, error) live beside asynq's tasks; a job's
// status is its record's once final, asynq's task state before.
type Asynq struct {
	o      Options
	rc     redis.UniversalClient
	client *asynq.Client
	insp   *asynq.Inspector
	rec    records
}

// NewAsynq connects to Redis (standalone or cluster, as cache.ParseRedisURL
// describes it) and checks that it answers.
func NewAsynq(ctx context.Context, ro *redis.UniversalOptions, o Options) (*Asynq, error) {
	o.fill()
	rc, err := connect(ctx, ro)
	if err != nil {
		return nil, err
	}
	return &Asynq{o: o, rc: rc, client: asynq.NewClientFromRedisClient(rc), insp: asynq.NewInspectorFromRedisClient(rc),
		rec: newRecords(rc, o.Queue, o.History)}, nil
}

// connect opens a client with go-redis' default timeouts rather than the
// cache's short ones: jobs are not on a request's path, and asynq's
// scripts may take longer than a cache read.
func connect(ctx context.Context, ro *redis.UniversalOptions) (redis.UniversalClient, error) {
	opts := *ro
	opts.ReadTimeout, opts.WriteTimeout = 0, 0
	rc := redis.NewUniversalClient(&opts)
	if err := rc.Ping(ctx).Err(); err != nil {
		rc.Close()
		return nil, fmt.Errorf("jobs: redis %v: %w", ro.Addrs, err)
	}
	return rc, nil
}

// Enqueue implements Queue.
func (a *Asynq) Enqueue(ctx context.Context, spec Spec) (Job, error) {
	if err := spec.Validate(); err != nil {
		return Job{}, err
	}
	payload, err := json.Marshal(spec)
	if err != nil {
		return Job{}, err
	}
	j := Job{ID: newID(), Spec: spec, Status: Queued, EnqueuedAt: time.Now().UTC()}
	// The record first, so that a worker always finds it.
	if err := a.rec.create(ctx, j); err != nil {
		return Job{}, err
	}
	_, err = a.client.EnqueueContext(ctx, asynq.NewTask(taskType, payload), asynq.TaskID(j.ID), asynq.Queue(a.o.Queue),
		asynq.MaxRetry(a.o.MaxRetry), asynq.Timeout(a.o.Timeout), asynq.Retention(a.o.History))
	if err != nil {
		_ = a.rec.remove(context.WithoutCancel(ctx), j.ID)
		return Job{}, err
	}
	return j, nil
}

// Get implements Queue.
func (a *Asynq) Get(ctx context.Context, id string) (Job, error) {
	j, err := a.rec.load(ctx, id)
	if err != nil || j.Status.Final() || j.Shards > 0 {
		// A split job's record is the truth once its shards are queued:
		// the task that queued them has completed.
		return j, err
	}
	info, err := a.insp.GetTaskInfo(a.o.Queue, id)
	switch {
	case errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound):
		return j, nil // not queued yet, or no longer: the record says it all
	case err != nil:
		return Job{}, err
	}
	if info.State == asynq.TaskStateCompleted || info.State == asynq.TaskStateArchived {
		// A worker writes the record before it tells asynq: the record
		// read above may predate the end.
		if again, err := a.rec.load(ctx, id); err != nil || again.Status.Final() {
			return again, err
		}
	}
	// The record is not final: asynq's state is the truth, e.g. after a
	// worker died (the record still says running) or a panic.
	switch info.State {
	case asynq.TaskStateActive:
		j.Status = Running
	case asynq.TaskStateRetry:
		j.Status, j.Error = Queued, info.LastErr
	case asynq.TaskStateArchived:
		j.Status, j.Error, j.FinishedAt = Failed, info.LastErr, info.LastFailedAt
	case asynq.TaskStateCompleted:
		j.Status, j.FinishedAt = Succeeded, info.CompletedAt
	default:
		j.Status = Queued
	}
	return j, nil
}

// List implements Queue. Jobs whose records have expired are left out.
func (a *Asynq) List(ctx context.Context, n int) ([]Job, error) {
	if n <= 0 {
		return nil, nil
	}
	ids, err := a.rec.ids(ctx, n)
	if err != nil {
		return nil, err
	}
	out := make([]Job, 0, len(ids))
	for _, id := range ids {
		j, err := a.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// Cancel implements Queue. It flags the record, then deletes a task that
// is not running (it never runs), or cancels the context of a running one
// (its worker writes the record cancelled; asynq may queue the task again,
// but a flagged job does not run).
func (a *Asynq) Cancel(ctx context.Context, id string) (Job, error) {
	if _, err := a.rec.update(ctx, id, fCancel, "1"); err != nil {
		if errors.Is(err, ErrFinished) {
			j, _ := a.rec.load(ctx, id)
			return j, err
		}
		return Job{}, err
	}
	err := a.insp.DeleteTask(a.o.Queue, id)
	if err == nil || errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
		if _, err := a.rec.update(ctx, id, fStatus, string(Cancelled), fFinished, stamp(time.Now())); err != nil && !isGone(err) {
			return Job{}, err
		}
		return a.Get(ctx, id)
	}
	// The task is active (DeleteTask refuses those), or it has queued
	// the shards of a split job.
	if j, err := a.rec.load(ctx, id); err == nil && j.Shards > 0 {
		if _, err := a.rec.update(ctx, id, fStatus, string(Cancelled), fFinished, stamp(time.Now())); err != nil && !isGone(err) {
			return Job{}, err
		}
		for s := range j.Shards { // the shards not running find the job final
			_ = a.insp.CancelProcessing(shardTaskID(id, s))
		}
		return a.Get(ctx, id)
	}
	if err := a.insp.CancelProcessing(id); err != nil {
		return Job{}, err
	}
	ctx, stop := context.WithTimeout(ctx, cancelWait)
	defer stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		j, err := a.Get(ctx, id)
		if err != nil || j.Status.Final() {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, nil
		case <-tick.C:
		}
	}
}

// Workers returns how many Worker processes take the jobs of queue now, by
// asynq's heartbeats (a worker killed without its shutdown still counts for
// up to about half a minute).
func Workers(ctx context.Context, ro *redis.UniversalOptions, queue string) (int, error) {
	rc, err := connect(ctx, ro)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	servers, err := asynq.NewInspectorFromRedisClient(rc).Servers()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range servers {
		if _, ok := s.Queues[queue]; ok && s.Status == "active" {
			n++
		}
	}
	return n, nil
}

// Close closes the connection (the asynq client and inspector share it).
func (a *Asynq) Close() error { return a.rc.Close() }

// asynqLog sends asynq's logs to slog.
type asynqLog struct{ l *slog.Logger }

func (a asynqLog) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...)) }
func (a asynqLog) Info(args ...any)  { a.l.Info(fmt.Sprint(args...)) }
func (a asynqLog) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...)) }
func (a asynqLog) Error(args ...any) { a.l.Error(fmt.Sprint(args...)) }

// Fatal is what asynq calls when it cannot go on; the interface says exit.
func (a asynqLog) Fatal(args ...any) {
	a.l.Error(fmt.Sprint(args...))
	os.Exit(1)
}
