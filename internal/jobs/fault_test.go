package jobs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The fault test runs workers as processes of this test binary: with
// envWorker set to a Redis URL, TestMain runs a Worker on the queue named
// by envQueue with the slow publisher below, until SIGTERM (or SIGKILL).
const (
	envWorker  = "JOBS_TEST_WORKER"
	envQueue   = "JOBS_TEST_QUEUE"
	faultParts = 10
	faultStep  = 300 * time.Millisecond
)

// Keys of the slow publisher's model store.
const (
	keyStarts    = "fault:starts"    // pid of every run started
	keyCurrent   = "fault:current"   // the published version
	keyPublished = "fault:published" // every version published, in order
)

func partKey(version string, i int) string { return fmt.Sprintf("fault:part:%s:%d", version, i) }

func TestMain(m *testing.M) {
	if url := os.Getenv(envWorker); url != "" {
		if err := runTestWorker(url, os.Getenv(envQueue)); err != nil {
			fmt.Fprintln(os.Stderr, "test worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runTestWorker(url, queue string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ro, err := cache.ParseRedisURL(url)
	if err != nil {
		return err
	}
	rc := redis.NewUniversalClient(ro)
	defer rc.Close()
	o := faultOptions(queue)
	o.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	if os.Getenv(envSplit) != "" {
		s := &splitStore{rc: rc, prefix: queue + ":", shards: splitShards, step: splitStep, failOnce: -1, worker: strconv.Itoa(os.Getpid())}
		o.Split = s.split
	}
	return Worker(ctx, ro, o, 1, slowPublisher(rc))
}

func faultOptions(queue string) Options {
	return Options{Queue: queue, MaxRetry: 3, RetryDelay: 100 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// slowPublisher publishes as the model store does: it writes the parts of
// version id one by one, slowly, then switches the pointer once they are
// all there, and records the publication.
func slowPublisher(rc redis.UniversalClient) Handler {
	return func(ctx context.Context, id string, _ Spec, progress func(string, float64)) (string, error) {
		if err := rc.RPush(ctx, keyStarts, os.Getpid()).Err(); err != nil {
			return "", err
		}
		for i := range faultParts {
			progress("writing", float64(i)/faultParts)
			if err := rc.Set(ctx, partKey(id, i), "part", 0).Err(); err != nil {
				return "", err
			}
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(faultStep):
			}
		}
		if n := countParts(ctx, rc, id); n != faultParts {
			return "", fmt.Errorf("%d of %d parts written", n, faultParts)
		}
		if err := rc.Set(ctx, keyCurrent, id, 0).Err(); err != nil {
			return "", err
		}
		return id, rc.RPush(ctx, keyPublished, id).Err()
	}
}

func countParts(ctx context.Context, rc redis.UniversalClient, version string) int {
	n := 0
	for i := range faultParts {
		if rc.Exists(ctx, partKey(version, i)).Val() == 1 {
			n++
		}
	}
	return n
}

// syncBuffer collects a worker process's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startWorker runs this test binary as a worker process (env: more
// environment); it is stopped
// (SIGTERM) when the test ends, and its output logged if the test failed.
func startWorker(t *testing.T, name, url, queue string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envWorker+"="+url, envQueue+"="+queue), env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("worker %s (pid %d):\n%s", name, cmd.Process.Pid, out.String())
		}
	})
	return cmd
}

// faultEnv starts a Redis of the test's own and returns its URL, a
// client and the queue named queue, closed when the test ends.
func faultEnv(t *testing.T, queue string) (string, redis.UniversalClient, *Asynq) {
	t.Helper()
	srv := redistest.Start(t)
	ro, err := cache.ParseRedisURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewUniversalClient(ro)
	t.Cleanup(func() { rc.Close() })
	q, err := NewAsynq(context.Background(), ro, faultOptions(queue))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return srv.URL, rc, q
}

// TestWorkerKilledMidJob kills (SIGKILL) the worker running a job halfway
// through writing its parts: once asynq's lease expires, another worker
// runs the job again, and exactly one version, the job's id and whole, is
// published.
func TestWorkerKilledMidJob(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out asynq's lease, about a minute")
	}
	t.Parallel()
	url, rc, q := faultEnv(t, "fault")
	ctx, o := context.Background(), q.o

	a := startWorker(t, "A", url, o.Queue)
	j, err := q.Enqueue(ctx, Spec{Target: TargetSocial})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, q, j.ID, 30*time.Second, "a third written", func(j Job) bool { return j.Status == Running && j.Fraction >= 0.3 })
	if err := a.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	killed := time.Now()
	parts := countParts(ctx, rc, j.ID)
	if parts == 0 || parts == faultParts || rc.Exists(ctx, keyCurrent, keyPublished).Val() != 0 {
		t.Fatalf("at the kill: %d of %d parts, %d published; want some parts, none published",
			parts, faultParts, rc.Exists(ctx, keyCurrent, keyPublished).Val())
	}

	b := startWorker(t, "B", url, o.Queue)
	var seen []Status // the statuses the job went through after the kill
	j = waitFor(t, q, j.ID, 3*time.Minute, "succeeded", func(j Job) bool {
		if len(seen) == 0 || seen[len(seen)-1] != j.Status {
			seen = append(seen, j.Status)
		}
		return j.Status == Succeeded
	})
	t.Logf("takeover: worker B started the job %v after A was killed; it succeeded %v after; statuses %v",
		j.StartedAt.Sub(killed).Round(100*time.Millisecond), time.Since(killed).Round(100*time.Millisecond), seen)

	if j.Version != j.ID || j.Attempts != 2 || j.Error != "" {
		t.Errorf("job: %+v; want version = id, 2 attempts, no error", j)
	}
	starts := rc.LRange(ctx, keyStarts, 0, -1).Val()
	if want := []string{strconv.Itoa(a.Process.Pid), strconv.Itoa(b.Process.Pid)}; !slices.Equal(starts, want) {
		t.Errorf("runs started by %v, want A then B %v", starts, want)
	}
	if pub := rc.LRange(ctx, keyPublished, 0, -1).Val(); !slices.Equal(pub, []string{j.ID}) {
		t.Errorf("published %v, want exactly [%s]", pub, j.ID)
	}
	if cur := rc.Get(ctx, keyCurrent).Val(); cur != j.ID || countParts(ctx, rc, cur) != faultParts {
		t.Errorf("current version %q has %d of %d parts", cur, countParts(ctx, rc, cur), faultParts)
	}
	if !slices.Contains(seen, Queued) {
		t.Errorf("statuses after the kill %v: the job was never queued again", seen)
	}
}
