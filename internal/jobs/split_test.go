package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// splitStore is the model store of the split tests: shard s of version v
// writes the key splitPart(v, s); publishing checks that every part is
// there, then sets the current version and records the publication.
type splitStore struct {
	rc     redis.UniversalClient
	prefix string
	shards int
	step   time.Duration // how long a shard takes
	// failOnce makes the first attempt of that shard fail (-1: none).
	failOnce int
	worker   string // who runs the shards: a name, or the process id
}

func (s *splitStore) key(what string) string { return s.prefix + "split:" + what }

func (s *splitStore) part(version string, shard int) string {
	return s.key(fmt.Sprintf("part:%s:%d", version, shard))
}

func (s *splitStore) split(Spec) *Split {
	return &Split{
		Prepare: func(ctx context.Context, id string, _ Spec, progress func(string, float64)) (int, error) {
			progress("training", 0.5)
			return s.shards, s.rc.RPush(ctx, s.key("prepared"), id).Err()
		},
		Shard: func(ctx context.Context, id string, _ Spec, shard, shards int) error {
			if err := s.rc.RPush(ctx, s.key("starts"), s.worker+":"+strconv.Itoa(shard)).Err(); err != nil {
				return err
			}
			// Nothing is published while a shard is missing: the finish
			// task has not run.
			if s.rc.Exists(ctx, s.key("current")).Val() != 0 {
				return errors.New("published while a shard runs")
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(s.step):
			}
			if shard == s.failOnce && s.rc.SetNX(ctx, s.key("failed"), s.worker, 0).Val() {
				return errors.New("shard failed once")
			}
			return s.rc.Set(ctx, s.part(id, shard), s.worker, 0).Err()
		},
		Finish: func(ctx context.Context, id string, _ Spec, shards int) (string, error) {
			for shard := range shards {
				if s.rc.Exists(ctx, s.part(id, shard)).Val() == 0 {
					return "", fmt.Errorf("shard %d is not in", shard)
				}
			}
			if err := s.rc.Set(ctx, s.key("current"), id, 0).Err(); err != nil {
				return "", err
			}
			return id, s.rc.RPush(ctx, s.key("published"), id).Err()
		},
		Stage: "shards", From: 0.5, To: 0.9,
	}
}

// TestSplitJobOnTwoWorkers: a split job's shards run on two workers, one
// shard failing once and retried; the finish step runs once, after every
// shard, and the record counts the shards done.
func TestSplitJobOnTwoWorkers(t *testing.T) {
	t.Parallel()
	redistest.EachServer(t, func(t *testing.T, url string) {
		e := newAsynqEnv(t, url)
		rc := redis.NewUniversalClient(e.ro)
		defer rc.Close()
		ctx := context.Background()
		const shards = 8
		for _, name := range []string{"A", "B"} {
			s := &splitStore{rc: rc, prefix: e.o.Queue + ":", shards: shards, step: 400 * time.Millisecond, failOnce: 3, worker: name}
			o := e.o
			o.Split = s.split
			wctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- Worker(wctx, e.ro, o, 1, nil) }()
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("worker %s: %v", name, err)
				}
			})
		}
		keys := &splitStore{prefix: e.o.Queue + ":"}
		j := e.enqueue(Spec{Target: TargetSocial})
		var fractions []float64
		j = waitFor(t, e.q, j.ID, long, "succeeded", func(j Job) bool {
			if j.Status == Running && j.Shards > 0 {
				fractions = append(fractions, j.Fraction)
			}
			return j.Status == Succeeded
		})
		if j.Version != j.ID || j.Shards != shards || j.ShardsDone != shards || j.Fraction != 1 || j.Error != "" {
			t.Errorf("job %+v: want version = id, %d of %d shards done, fraction 1, no error", j, shards, shards)
		}
		if pub := rc.LRange(ctx, keys.key("published"), 0, -1).Val(); !slices.Equal(pub, []string{j.ID}) {
			t.Errorf("published %v, want exactly [%s]", pub, j.ID)
		}
		if prep := rc.LRange(ctx, keys.key("prepared"), 0, -1).Val(); len(prep) != 1 {
			t.Errorf("prepared %v, want once", prep)
		}
		starts := rc.LRange(ctx, keys.key("starts"), 0, -1).Val()
		ran := map[string]int{}
		for _, s := range starts {
			ran[s[:1]]++
		}
		if len(starts) != shards+1 || ran["A"] == 0 || ran["B"] == 0 {
			t.Errorf("shard runs %v: want %d (one retried), on both workers", starts, shards+1)
		}
		for shard := range shards {
			if rc.Exists(ctx, keys.part(j.ID, shard)).Val() == 0 {
				t.Errorf("shard %d not written", shard)
			}
		}
		if !slices.IsSorted(fractions) || len(fractions) == 0 || fractions[0] < 0.5 || fractions[len(fractions)-1] > 0.9 {
			t.Errorf("fractions while the shards ran: %v, want rising within [0.5, 0.9]", fractions)
		}
	})
}

// TestSplitJobCancelled: a split job cancelled while its shards run
// publishes nothing, and its queued shards do not run.
func TestSplitJobCancelled(t *testing.T) {
	t.Parallel()
	e := newAsynqEnv(t, redistest.URL(t))
	rc := redis.NewUniversalClient(e.ro)
	defer rc.Close()
	ctx := context.Background()
	s := &splitStore{rc: rc, prefix: e.o.Queue + ":", shards: 20, step: 200 * time.Millisecond, failOnce: -1, worker: "A"}
	o := e.o
	o.Split = s.split
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- Worker(wctx, e.ro, o, 1, nil) }()
	defer func() {
		cancel()
		<-done
	}()
	j := e.enqueue(Spec{Target: TargetSocial})
	waitFor(t, e.q, j.ID, long, "two shards done", func(j Job) bool { return j.ShardsDone >= 2 })
	j, err := e.q.Cancel(ctx, j.ID)
	if err != nil || j.Status != Cancelled {
		t.Fatalf("cancel: %+v, %v", j, err)
	}
	startsAt := rc.LLen(ctx, s.key("starts")).Val()
	time.Sleep(time.Second) // the queued shards are taken and dropped
	if got := rc.LLen(ctx, s.key("starts")).Val(); got > startsAt+1 {
		t.Errorf("%d shards started after the cancel, want at most the one running", got-startsAt)
	}
	if rc.Exists(ctx, s.key("current")).Val() != 0 {
		t.Error("a cancelled job published")
	}
	if j, _ := e.q.Get(ctx, j.ID); j.Status != Cancelled {
		t.Errorf("after the cancel: %+v", j)
	}
}

// TestWorkerKilledMidShard kills (SIGKILL) the worker running a shard of
// a split job: once asynq's lease expires another worker runs that shard
// again, the job's version is published once, whole, and nothing was
// published while the shard was missing.
func TestWorkerKilledMidShard(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out asynq's lease, about a minute")
	}
	t.Parallel()
	url, rc, q := faultEnv(t, "split")
	ctx, o := context.Background(), q.o
	keys := &splitStore{prefix: o.Queue + ":"}

	a := startWorker(t, "A", url, o.Queue, envSplit+"=1")
	j, err := q.Enqueue(ctx, Spec{Target: TargetSocial})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, q, j.ID, 30*time.Second, "two shards done", func(j Job) bool { return j.ShardsDone >= 2 })
	time.Sleep(splitStep / 2) // into the third shard
	if err := a.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	killedIn := rc.LRange(ctx, keys.key("starts"), -1, -1).Val()
	if rc.Exists(ctx, keys.key("current")).Val() != 0 {
		t.Fatal("published before every shard ran")
	}

	b := startWorker(t, "B", url, o.Queue, envSplit+"=1")
	j = waitFor(t, q, j.ID, 3*time.Minute, "succeeded", status(Succeeded))
	if j.Version != j.ID || j.ShardsDone != splitShards {
		t.Errorf("job %+v: want version = id, every shard done", j)
	}
	if pub := rc.LRange(ctx, keys.key("published"), 0, -1).Val(); !slices.Equal(pub, []string{j.ID}) {
		t.Errorf("published %v, want exactly [%s]", pub, j.ID)
	}
	starts := rc.LRange(ctx, keys.key("starts"), 0, -1).Val()
	if len(killedIn) != 1 {
		t.Fatalf("no shard ran at the kill: %v", starts)
	}
	shard := killedIn[0][len(strconv.Itoa(a.Process.Pid))+1:]
	if !slices.Contains(starts, strconv.Itoa(b.Process.Pid)+":"+shard) {
		t.Errorf("shard %s, killed on A, was not run again by B: %v", shard, starts)
	}
	for s := range splitShards {
		if rc.Exists(ctx, keys.part(j.ID, s)).Val() == 0 {
			t.Errorf("shard %d not written", s)
		}
	}
}

// The killed worker test's split job: shards of splitStep each.
const (
	envSplit    = "JOBS_TEST_SPLIT"
	splitShards = 6
	splitStep   = 800 * time.Millisecond
)
