package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// records keeps the job records of one queue in Redis: a hash per job
// (spec, status, progress, timings, version, error, and the cancel flag)
// that expires ttl after it is queued, and a sorted set of the recent ids
// by time queued. Every key carries the queue's name as a hash tag, so
// that on a cluster they live on one node and one transaction may write
// them together.
type records struct {
	rc     redis.UniversalClient
	prefix string
	ttl    time.Duration
}

func newRecords(rc redis.UniversalClient, queue string, ttl time.Duration) records {
	return records{rc: rc, prefix: "kernelrank:jobs:{" + queue + "}:", ttl: ttl}
}

func (r records) key(id string) string { return r.prefix + "job:" + id }
func (r records) recent() string       { return r.prefix + "recent" }

// Hash fields of a record.
const (
	fSpec, fStatus, fStage, fFraction, fAttempts = "spec", "status", "stage", "fraction", "attempts"
	fEnqueued, fStarted, fFinished               = "enqueued", "started", "finished"
	fVersion, fError, fCancel                    = "version", "error", "cancel"
	fShards, fShardsDone                         = "shards", "shards_done"
)

// create writes a new record and forgets the ids that have expired.
func (r records) create(ctx context.Context, j Job) error {
	spec, err := json.Marshal(j.Spec)
	if err != nil {
		return err
	}
	now := j.EnqueuedAt
	_, err = r.rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, r.key(j.ID), fSpec, spec, fStatus, string(j.Status), fEnqueued, stamp(now), fAttempts, 0, fFraction, 0)
		p.Expire(ctx, r.key(j.ID), r.ttl)
		p.ZAdd(ctx, r.recent(), redis.Z{Score: float64(now.UnixMicro()), Member: j.ID})
		p.ZRemRangeByScore(ctx, r.recent(), "-inf", strconv.FormatInt(now.Add(-r.ttl).UnixMicro(), 10))
		return nil
	})
	return err
}

// remove deletes a record (a job that could not be queued).
func (r records) remove(ctx context.Context, id string) error {
	_, err := r.rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, r.key(id))
		p.ZRem(ctx, r.recent(), id)
		return nil
	})
	return err
}

// load reads a record, or ErrNotFound.
func (r records) load(ctx context.Context, id string) (Job, error) {
	m, err := r.rc.HGetAll(ctx, r.key(id)).Result()
	if err != nil {
		return Job{}, err
	}
	if len(m) == 0 {
		return Job{}, ErrNotFound
	}
	j := Job{ID: id, Status: Status(m[fStatus]), Stage: m[fStage], Version: m[fVersion], Error: m[fError]}
	if err := json.Unmarshal([]byte(m[fSpec]), &j.Spec); err != nil {
		return Job{}, fmt.Errorf("job %s: bad record: %v", id, err)
	}
	j.Fraction, _ = strconv.ParseFloat(m[fFraction], 64)
	j.Attempts, _ = strconv.Atoi(m[fAttempts])
	j.Shards, _ = strconv.Atoi(m[fShards])
	j.ShardsDone, _ = strconv.Atoi(m[fShardsDone])
	j.EnqueuedAt, j.StartedAt, j.FinishedAt = unstamp(m[fEnqueued]), unstamp(m[fStarted]), unstamp(m[fFinished])
	return j, nil
}

// doneSet is the key of the set of a split job's shards done.
func (r records) doneSet(id string) string { return r.prefix + "done:" + id }

// shards returns the number of shards of a split job whose shards are
// queued, 0 before.
func (r records) shards(ctx context.Context, id string) (int, error) {
	n, err := r.rc.HGet(ctx, r.key(id), fShards).Int()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// shardDone counts shard done and returns how many are.
func (r records) shardDone(ctx context.Context, id string, shard int) (int, error) {
	var n *redis.IntCmd
	_, err := r.rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SAdd(ctx, r.doneSet(id), shard)
		p.Expire(ctx, r.doneSet(id), r.ttl)
		n = p.SCard(ctx, r.doneSet(id))
		return nil
	})
	if err != nil {
		return 0, err
	}
	return int(n.Val()), nil
}

// shardsDone returns how many shards of a split job are done.
func (r records) shardsDone(ctx context.Context, id string) (int, error) {
	n, err := r.rc.SCard(ctx, r.doneSet(id)).Result()
	return int(n), err
}

// ids returns the n most recent ids, most recent first.
func (r records) ids(ctx context.Context, n int) ([]string, error) {
	return r.rc.ZRevRange(ctx, r.recent(), 0, int64(n)-1).Result()
}

// updateScript sets fields of a record that exists and is not final, and
// returns 1 when a cancel was requested, 0 if not, -1 when there is no
// record and -2 when it is final: one round trip that never revives an
// expired record nor changes a finished job, and tells a running job
// whether to stop.
var updateScript = redis.NewScript(`
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return -1 end
if st == 'succeeded' or st == 'failed' or st == 'cancelled' then return -2 end
if #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
if redis.call('HEXISTS', KEYS[1], 'cancel') == 1 then return 1 end
return 0
`)

// update sets field-value pairs of a job that is not final and reports
// whether a cancel was requested. Its errors are ErrNotFound, ErrFinished,
// or Redis's.
func (r records) update(ctx context.Context, id string, fv ...any) (cancel bool, err error) {
	n, err := updateScript.Run(ctx, r.rc, []string{r.key(id)}, fv...).Int()
	switch {
	case err != nil:
		return false, err
	case n == -1:
		return false, ErrNotFound
	case n == -2:
		return false, ErrFinished
	}
	return n == 1, nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func unstamp(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// isGone reports whether err says a record update found no job to update.
func isGone(err error) bool { return errors.Is(err, ErrNotFound) || errors.Is(err, ErrFinished) }
