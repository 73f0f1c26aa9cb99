package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
)

// Split is a job done in shards by any number of workers: Prepare runs
// first, in one worker, and says how many shards there are; each shard is
// then a task of its own, which any worker takes (and asynq retries, or
// hands to another worker when its worker dies); Finish runs once every
// shard is done. Completeness is counted in Redis: a set of the shards
// done beside the job's record; the worker whose shard completes the set
// queues the finish task (its task id is derived from the job's, so it is
// queued once), and the finish task checks the set again before it runs.
// Finish must also refuse, with an error, to publish while a shard's work
// is missing, so that the check does not rest on the counter alone.
type Split struct {
	// Prepare does the job's first step and returns its number of
	// shards (at least 1).
	Prepare func(ctx context.Context, id string, spec Spec, progress func(stage string, fraction float64)) (shards int, err error)
	// Shard does one shard; it may run again for the same shard.
	Shard func(ctx context.Context, id string, spec Spec, shard, shards int) error
	// Finish publishes the job as version id once every shard is done,
	// and returns the version.
	Finish func(ctx context.Context, id string, spec Spec, shards int) (version string, err error)
	// Stage is the stage the job reports while its shards run, its
	// fraction going from From to To of the job as shards end.
	Stage    string
	From, To float64
}

// Task types of a split job's shards and last step.
const (
	shardType  = "kernelrank:shard"
	finishType = "kernelrank:finish"
)

// partPayload is the payload of a shard or finish task.
type partPayload struct {
	Job    string `json:"job"`
	Spec   Spec   `json:"spec"`
	Shard  int    `json:"shard"`
	Shards int    `json:"shards"`
}

// runSplit runs the first step of split job id and queues its shards.
// When an earlier attempt got that far (the record holds the number of
// shards) it only queues them again: queuing a task id twice is refused,
// so no shard runs twice for it.
func (w *worker) runSplit(ctx context.Context, id string, spec Spec, sp *Split, progress func(string, float64)) error {
	shards, err := w.rec.shards(ctx, id)
	if err != nil {
		return err
	}
	if shards == 0 {
		if shards, err = sp.Prepare(ctx, id, spec, progress); err != nil {
			return err
		}
		if shards < 1 {
			return fmt.Errorf("job %s: %d shards", id, shards)
		}
		if _, err := w.rec.update(ctx, id, fShards, shards, fShardsDone, 0, fStage, sp.Stage, fFraction, clamp(sp.From)); err != nil {
			return err
		}
	}
	for s := range shards {
		if err := w.enqueuePart(ctx, shardType, partPayload{Job: id, Spec: spec, Shard: s, Shards: shards}, shardTaskID(id, s)); err != nil {
			return err
		}
	}
	return nil
}

func shardTaskID(id string, shard int) string { return id + ":shard:" + strconv.Itoa(shard) }

// enqueuePart queues a shard or finish task; one queued before under the
// same task id is left as it is.
func (w *worker) enqueuePart(ctx context.Context, typ string, p partPayload, taskID string) error {
	payload, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = w.client.EnqueueContext(ctx, asynq.NewTask(typ, payload), asynq.TaskID(taskID), asynq.Queue(w.o.Queue),
		asynq.MaxRetry(w.o.MaxRetry), asynq.Timeout(w.o.Timeout), asynq.Retention(w.o.History))
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return nil
	}
	return err
}

// processPart runs a shard or the finish task of a split job. A job that
// is final (cancelled, failed) or forgotten has nothing left to do. A
// failure with no retries left fails the job.
func (w *worker) processPart(ctx context.Context, t *asynq.Task) error {
	var p partPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("bad payload: %v: %w", err, asynq.SkipRetry)
	}
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	if stop, err := w.begin(ctx, p.Job); stop {
		return err
	}
	sp := w.split(p.Spec)
	if sp == nil {
		return w.end(ctx, p.Job, Failed, "", fmt.Errorf("%w: this worker cannot run %s jobs in shards", ErrSpec, p.Spec.Target))
	}
	var version string
	var err error
	if t.Type() == shardType {
		err = w.runShard(ctx, sp, p)
	} else {
		version, err = w.runFinish(ctx, sp, p)
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	switch {
	case err == nil && t.Type() == finishType:
		return w.end(wctx, p.Job, Succeeded, version, nil)
	case err == nil:
		return nil
	case retried >= maxRetry || errors.Is(err, ErrSpec):
		return w.end(wctx, p.Job, Failed, "", fmt.Errorf("%s: %w", partName(t.Type(), p), err))
	}
	if _, uerr := w.rec.update(wctx, p.Job, fError, partName(t.Type(), p)+": "+err.Error()); uerr != nil && !isGone(uerr) {
		w.log.Warn("job record", "id", p.Job, "err", uerr)
	}
	return err
}

func partName(typ string, p partPayload) string {
	if typ == shardType {
		return fmt.Sprintf("shard %d of %d", p.Shard, p.Shards)
	}
	return "publishing"
}

// runShard runs a shard, counts it done and, when it is the last one,
// queues the finish task.
func (w *worker) runShard(ctx context.Context, sp *Split, p partPayload) error {
	if err := sp.Shard(ctx, p.Job, p.Spec, p.Shard, p.Shards); err != nil {
		return err
	}
	done, err := w.rec.shardDone(ctx, p.Job, p.Shard)
	if err != nil {
		return err
	}
	f := sp.From + (sp.To-sp.From)*float64(done)/float64(p.Shards)
	if _, err := w.rec.update(ctx, p.Job, fShardsDone, done, fStage, sp.Stage, fFraction, clamp(f)); err != nil && !isGone(err) {
		return err
	}
	if done < p.Shards {
		return nil
	}
	return w.enqueuePart(ctx, finishType, p, p.Job+":finish")
}

// runFinish publishes once every shard is counted done.
func (w *worker) runFinish(ctx context.Context, sp *Split, p partPayload) (string, error) {
	done, err := w.rec.shardsDone(ctx, p.Job)
	if err != nil {
		return "", err
	}
	if done != p.Shards {
		return "", fmt.Errorf("%d of %d shards done", done, p.Shards)
	}
	return sp.Finish(ctx, p.Job, p.Spec, p.Shards)
}
