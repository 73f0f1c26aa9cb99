package retrain

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/recommend"
)

// A job the deployment cannot run is refused when it is submitted, and
// nothing is queued: a target it does not run, a learner the recommenders
// cannot use, social data that cannot be read.
func TestJobsCheckedAtSubmission(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	q, err := OpenQueue(ctx, "", "", NewHandler(Deps{}), []string{jobs.TargetSearch}, log)
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
	q2, err := OpenQueue(ctx, "", "", NewHandler(Deps{}), []string{jobs.TargetSocial}, log)
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
	PrintVersions(&out, "all", "20261129T000000Z-0123abcd 591da0628104c3faa4d686f56fc10492")
	PrintVersions(&out, "search", "591da0628104c3faa4d686f56fc10492")
	want := "social model 20261129T000000Z-0123abcd\ncorpus 591da0628104c3faa4d686f56fc10492\ncorpus 591da0628104c3faa4d686f56fc10492\n"
	if out.String() != want {
		t.Fatalf("printed %q, want %q", out.String(), want)
	}
}
