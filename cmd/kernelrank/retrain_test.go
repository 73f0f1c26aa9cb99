package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/kernelrank/kernelrank/internal/retrain"
)

// steps returns a handler factory whose work takes three named steps and
// publishes the job id, recording what it published and the social data
// it was given.
func steps(published *[]string, mu *sync.Mutex) func(retrain.Deps) jobs.Handler {
	return func(d retrain.Deps) jobs.Handler {
		return func(ctx context.Context, id string, spec jobs.Spec, progress func(string, float64)) (string, error) {
			for i, stage := range []string{"loading", "training", "publishing"} {
				progress(stage, float64(i)/3)
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(250 * time.Millisecond):
				}
			}
			if filepath.Base(spec.Social) == "broken" {
				return "", errors.New("the learner diverged")
			}
			mu.Lock()
			defer mu.Unlock()
			*published = append(*published, id+"@"+spec.Social+d.Social)
			return id, nil
		}
	}
}

var versionLine = regexp.MustCompile(`^social model (\d{8}T\d{6}Z-[0-9a-f]{8})\n$`)

func TestRetrainHere(t *testing.T) {
	var published []string
	var mu sync.Mutex
	var out, errOut bytes.Buffer
	fb := t.TempDir()
	err := retrainCommand(context.Background(), []string{"--target", "social", "--social", fb}, &out, &errOut, steps(&published, &mu))
	if err != nil {
		t.Fatalf("retrain: %v\n%s", err, errOut.String())
	}
	version := strings.TrimPrefix(strings.TrimSpace(out.String()), "social model ")
	if !versionLine.MatchString(out.String()) || len(published) != 1 || published[0] != version+"@"+fb {
		t.Errorf("printed %q, published %v; want the version published", out.String(), published)
	}
	// stderr is not a terminal: a plain line per stage.
	for _, want := range []string{"0% loading", "33% training", "66% publishing", "100% succeeded"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, errOut.String())
		}
	}

	errOut.Reset()
	broken := filepath.Join(t.TempDir(), "broken")
	if err := os.Mkdir(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	err = retrainCommand(context.Background(), []string{"--target", "social", "--social", broken}, &out, &errOut, steps(&published, &mu))
	if err == nil || !strings.Contains(err.Error(), "failed: the learner diverged") {
		t.Errorf("a failing job: %v", err)
	}

	// Rankings computed here would fill this process's cache, which no
	// server reads: refused before anything runs.
	for _, target := range []string{"search", "all"} {
		err = retrainCommand(context.Background(), []string{"--target", target}, &out, &errOut, steps(&published, &mu))
		if !errors.Is(err, retrain.ErrNoSearchHere) || len(published) != 1 {
			t.Errorf("--target %s without --redis: %v, published %v", target, err, published)
		}
	}

	// Interrupted: the job is cancelled and publishes nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = retrainCommand(ctx, []string{"--target", "social"}, &out, &errOut, steps(&published, &mu))
	if err == nil || !strings.Contains(err.Error(), "cancelled") || len(published) != 1 {
		t.Errorf("interrupted: %v, published %v", err, published)
	}
}

func TestRetrainAndWorkerFlagErrors(t *testing.T) {
	var published []string
	var mu sync.Mutex
	for _, c := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"retrain", nil, "target is required"},
		{"retrain", []string{"--target", "images"}, `unknown target "images"`},
		{"retrain", []string{"--target", "social", "--queries", "5"}, "queries is for search"},
		{"retrain", []string{"--target", "social", "--detach"}, "--detach needs --redis"},
		{"retrain", []string{"--target", "social", "--redis", "http://x"}, "use redis://"},
		{"retrain", []string{"--target", "social", "extra"}, "unexpected arguments"},
		{"retrain", []string{"--target", "social", "--learner", "nope"}, `retrain: bad job spec: unknown learner "nope": the recommenders can use `},
		{"retrain", []string{"--target", "social", "--learner", "simplenpkl"}, `unknown learner "simplenpkl"`},
		{"retrain", []string{"--target", "social", "--social", "/no/such/dir"}, "retrain: bad job spec: social data /no/such/dir: no such file or directory"},
		{"worker", nil, "--redis is required"},
		{"worker", []string{"--redis", "redis://127.0.0.1:1/0", "--log-level", "loud"}, "log level"},
		{"worker", []string{"--redis", "redis://127.0.0.1:1/0"}, "127.0.0.1:1"},
	} {
		var out, errOut bytes.Buffer
		var err error
		if c.cmd == "retrain" {
			err = retrainCommand(context.Background(), c.args, &out, &errOut, steps(&published, &mu))
		} else {
			err = worker(context.Background(), c.args, &errOut, steps(&published, &mu), nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v; want an error saying %q", c.cmd, c.args, err, c.want)
		}
	}
	if len(published) != 0 {
		t.Errorf("bad commands published %v", published)
	}
}

func TestRetrainThroughAWorker(t *testing.T) {
	srv := redistest.Start(t)
	var published []string
	var mu sync.Mutex
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var workerLog bytes.Buffer
	go func() {
		done <- worker(ctx, []string{"--redis", srv.URL, "--queue", "q1", "--social", "/srv/social", "--log-level", "warn"}, &workerLog, steps(&published, &mu), nil)
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}()

	var out, errOut bytes.Buffer
	ro, _ := cache.ParseRedisURL(srv.URL)
	// No worker takes queue q2: said at once, with the command that starts
	// one, and nothing is queued; detached, the job waits for one.
	err := retrainCommand(context.Background(), []string{"--target", "social", "--redis", srv.URL, "--queue", "q2"}, &out, &errOut, steps(&published, &mu))
	if want := `no worker takes the jobs of queue "q2" on ` + srv.URL + ": start one with `kernelrank worker --redis " + srv.URL + " --queue q2`"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("retrain with no worker: %v, want %q", err, want)
	}
	q2, err := jobs.NewAsynq(context.Background(), ro, jobs.Options{Queue: "q2"})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	if list, err := q2.List(context.Background(), 10); err != nil || len(list) != 0 {
		t.Errorf("jobs of q2 after a refusal: %v %v", list, err)
	}
	if err := retrainCommand(context.Background(), []string{"--target", "social", "--redis", srv.URL, "--queue", "q2", "--detach"}, &out, &errOut, steps(&published, &mu)); err != nil {
		t.Errorf("retrain --detach with no worker: %v", err)
	}
	if list, _ := q2.List(context.Background(), 10); len(list) != 1 || list[0].Status != jobs.Queued {
		t.Errorf("jobs of q2 after --detach: %v, want one queued", list)
	}
	waitFor := time.Now().Add(30 * time.Second)
	for n, _ := jobs.Workers(context.Background(), ro, "q1"); n != 1; n, _ = jobs.Workers(context.Background(), ro, "q1") {
		if time.Now().After(waitFor) {
			t.Fatalf("%d workers on q1, want 1", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	out.Reset()
	if err := retrainCommand(context.Background(), []string{"--target", "social", "--redis", srv.URL, "--queue", "q1"}, &out, &errOut, steps(&published, &mu)); err != nil {
		t.Fatalf("retrain --redis: %v\n%s", err, errOut.String())
	}
	version := strings.TrimPrefix(strings.TrimSpace(out.String()), "social model ")
	mu.Lock()
	if len(published) != 1 || published[0] != version+"@/srv/social" {
		t.Errorf("printed %q, worker published %v; want the worker's publication, with its social data", version, published)
	}
	mu.Unlock()
	if !strings.Contains(errOut.String(), "training") || !strings.Contains(errOut.String(), "100% succeeded") {
		t.Errorf("progress:\n%s", errOut.String())
	}

	// Checked at submission through Redis too.
	if err := retrainCommand(context.Background(), []string{"--target", "social", "--redis", srv.URL, "--queue", "q1", "--social", "/no/such/dir"},
		&out, &errOut, steps(&published, &mu)); err == nil || !strings.Contains(err.Error(), "social data /no/such/dir: no such file") {
		t.Errorf("retrain --redis of unreadable social data: %v", err)
	}

	out.Reset()
	if err := retrainCommand(context.Background(), []string{"--target", "search", "--redis", srv.URL, "--queue", "q1", "--detach"}, &out, &errOut, steps(&published, &mu)); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(out.String())
	q, err := jobs.NewAsynq(context.Background(), ro, jobs.Options{Queue: "q1"})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := q.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("detached job %q: %v", id, err)
		}
		if j.Status == jobs.Succeeded && j.Version == id && j.Spec.Target == jobs.TargetSearch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("detached job: %+v", j)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
