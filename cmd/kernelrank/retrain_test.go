package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
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
	"github.com/kernelrank/kernelrank/recommend"
)

// steps returns a handler factory whose work takes three named steps and
// publishes the job id, recording what it published and the social data
// it was given.
func steps(published *[]string, mu *sync.Mutex) func(jobDeps) jobs.Handler {
	return func(d jobDeps) jobs.Handler {
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
			*published = append(*published, id+"@"+spec.Social+d.social)
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
	err := retrain(context.Background(), []string{"--target", "social", "--social", fb}, &out, &errOut, steps(&published, &mu))
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
	err = retrain(context.Background(), []string{"--target", "social", "--social", broken}, &out, &errOut, steps(&published, &mu))
	if err == nil || !strings.Contains(err.Error(), "failed: the learner diverged") {
		t.Errorf("a failing job: %v", err)
	}

	// Rankings computed here would fill this process's cache, which no
	// server reads: refused before anything runs.
	for _, target := range []string{"search", "all"} {
		err = retrain(context.Background(), []string{"--target", target}, &out, &errOut, steps(&published, &mu))
		if !errors.Is(err, errNoSearchHere) || len(published) != 1 {
			t.Errorf("--target %s without --redis: %v, published %v", target, err, published)
		}
	}

	// Interrupted: the job is cancelled and publishes nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = retrain(ctx, []string{"--target", "social"}, &out, &errOut, steps(&published, &mu))
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
			err = retrain(context.Background(), c.args, &out, &errOut, steps(&published, &mu))
		} else {
			err = worker(context.Background(), c.args, &errOut, steps(&published, &mu))
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
		done <- worker(ctx, []string{"--redis", srv.URL, "--queue", "q1", "--social", "/srv/social", "--log-level", "warn"}, &workerLog, steps(&published, &mu))
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
	err := retrain(context.Background(), []string{"--target", "social", "--redis", srv.URL, "--queue", "q2"}, &out, &errOut, steps(&published, &mu))
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
	if err := retrain(context.Background(), []string{"--target", "social", "--redis", srv.URL, "--queue", "q2", "--detach"}, &out, &errOut, steps(&published, &mu)); err != nil {
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
	if err := retrain(context.Background(), []string{"--target", "social", "--redis", srv.URL, "--queue", "q1"}, &out, &errOut, steps(&published, &mu)); err != nil {
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
	if err := retrain(context.Background(), []string{"--target", "social", "--redis", srv.URL, "--queue", "q1", "--social", "/no/such/dir"},
		&out, &errOut, steps(&published, &mu)); err == nil || !strings.Contains(err.Error(), "social data /no/such/dir: no such file") {
		t.Errorf("retrain --redis of unreadable social data: %v", err)
	}

	out.Reset()
	if err := retrain(context.Background(), []string{"--target", "search", "--redis", srv.URL, "--queue", "q1", "--detach"}, &out, &errOut, steps(&published, &mu)); err != nil {
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

// A job the deployment cannot run is refused when it is submitted, and
// nothing is queued: a target it does not run, a learner the recommenders
// cannot use, social data that cannot be read.
func TestJobsCheckedAtSubmission(t *testing.T) {
	ctx := context.Background()
	var published []string
	var mu sync.Mutex
	log := slog.New(slog.DiscardHandler)
	q, err := openQueue(ctx, "", "", steps(&published, &mu)(jobDeps{}), []string{jobs.TargetSearch}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	locked := filepath.Join(t.TempDir(), "locked")
	if err := os.Mkdir(locked, 0o000); err != nil {
		t.Fatal(err)
	}
	cases := map[jobs.Spec]string{
		{Target: jobs.TargetSocial}:                         `target "social" cannot run here: this deployment runs search jobs only`,
		{Target: jobs.TargetAll}:                            `target "all" cannot run here`,
		{Target: jobs.TargetSearch, Learner: "alignf-typo"}: `unknown learner "alignf-typo": the recommenders can use `,
	}
	q2, err := openQueue(ctx, "", "", steps(&published, &mu)(jobDeps{}), []string{jobs.TargetSocial}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	for spec, want := range cases {
		if _, err := q.Enqueue(ctx, spec); !errors.Is(err, jobs.ErrSpec) || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want ErrSpec saying %q", spec, err, want)
		}
	}
	paths := map[string]string{"/no/such/dir": "no such file or directory"}
	if os.Geteuid() != 0 { // root reads a mode-000 directory
		paths[locked] = "permission denied"
	}
	for path, want := range paths {
		if _, err := q2.Enqueue(ctx, jobs.Spec{Target: jobs.TargetSocial, Social: path}); !errors.Is(err, jobs.ErrSpec) ||
			!strings.Contains(err.Error(), "social data "+path+": "+want) {
			t.Errorf("social %s: %v, want ErrSpec saying %q", path, err, want)
		}
	}
	if list, _ := q.List(ctx, 10); len(list) != 0 {
		t.Errorf("refused jobs were queued: %v", list)
	}
	// What the deployment runs is queued.
	for _, spec := range []jobs.Spec{{Target: jobs.TargetSocial, Social: t.TempDir(), Learner: recommend.DefaultLearner}, {Target: jobs.TargetSocial}} {
		if _, err := q2.Enqueue(ctx, spec); err != nil {
			t.Errorf("%+v: %v", spec, err)
		}
	}
}

// A job's bar moves through its stages: each stage's own fraction is a
// part of the job's.
func TestByStage(t *testing.T) {
	var got []float64
	p := byStage(func(_ string, f float64) { got = append(got, f) }, socialStages)
	p("loading data", 0)
	p("training", 0)
	p("precomputing top-k", 0.5)
	p("publishing", 0)
	p("an unknown stage", 0.3)
	p("training", 2) // clamped to the stage's end
	want := []float64{0, 0.05, 0.05 + 0.6 + 0.15, 0.95, 0.95, 0.65}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Fatalf("fractions %v, want %v", got, want)
		}
	}
}

func TestPrintVersions(t *testing.T) {
	var out bytes.Buffer
	printVersions(&out, "all", "20261129T000000Z-0123abcd 591da0628104c3faa4d686f56fc10492")
	printVersions(&out, "search", "591da0628104c3faa4d686f56fc10492")
	want := "social model 20261129T000000Z-0123abcd\ncorpus 591da0628104c3faa4d686f56fc10492\ncorpus 591da0628104c3faa4d686f56fc10492\n"
	if out.String() != want {
		t.Fatalf("printed %q, want %q", out.String(), want)
	}
}
