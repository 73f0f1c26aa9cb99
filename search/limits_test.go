package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/admission"
	"github.com/kernelrank/kernelrank/rerank"
)

// catIndex is a real index of n "cat" images with seeded random features
// and co-tags, so every window is n images of one query.
func catIndex(t *testing.T, n int) *index.Index {
	t.Helper()
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	r := rand.New(rand.NewSource(1))
	docs := make([]index.Doc, n)
	for i := range docs {
		f := make([]float32, 20)
		for j := range f {
			f[j] = float32(r.NormFloat64())
		}
		docs[i] = index.Doc{ID: fmt.Sprintf("c%03d", i), Tags: []string{"cat", fmt.Sprintf("t%d", i%7)}, Features: f}
	}
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
	return ix
}

func npkRequest(window int) Request {
	req := DefaultRequest("cat")
	req.Window, req.Rerank.Strategy = window, "npk"
	return req
}

// A full-rank learner over a window above the server's limit fits the
// low-rank form instead, and says so.
func TestFullRankWindowLimit(t *testing.T) {
	e := New(catIndex(t, 80), nil, Options{MaxFullRank: 50, FallbackRank: 5})
	resp, err := e.Search(t.Context(), npkRequest(80))
	if err != nil {
		t.Fatal(err)
	}
	if w := resp.Rerank.Warning; !strings.Contains(w, "limit of 50") || !strings.Contains(w, "low-rank form of rank 5") {
		t.Fatalf("warning %q, want the fallback to rank 5 explained", w)
	}
	if resp.Rerank.KernelMS <= 0 || resp.Rerank.RankMS <= 0 {
		t.Errorf("kernel_ms %v, rank_ms %v: want the stages' times in ms", resp.Rerank.KernelMS, resp.Rerank.RankMS)
	}
	high := npkRequest(80)
	high.Rerank.Params = []byte(`{"rank":40}`) // as costly as full rank, nearly
	if resp, err = e.Search(t.Context(), high); err != nil || !strings.Contains(resp.Rerank.Warning, "rank 5") {
		t.Fatalf("rank 40 over the limit: %v, warning %q", err, resp.Rerank.Warning)
	}
	resp, err = e.Search(t.Context(), npkRequest(50))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(resp.Rerank.Warning, "limit") {
		t.Fatalf("a window within the limit fell back: %q", resp.Rerank.Warning)
	}
}

// Expensive kernels wait for a slot of the gate and are refused when none
// frees up; cheap and cached ones never wait.
func TestExpensiveKernelsWaitForTheGate(t *testing.T) {
	ix := catIndex(t, 150)
	mem, err := cache.NewMemory(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	gate := admission.NewGate(1, 10*time.Millisecond, nil)
	e := New(ix, cache.NewLoader(mem, nil), Options{Expensive: gate})
	ctx := t.Context()
	cached := npkRequest(150)
	if _, err := e.Search(ctx, cached); err != nil {
		t.Fatal(err)
	}
	release, err := gate.Acquire(ctx) // every slot taken
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	busy := npkRequest(150)
	busy.K = 5 // another ranking, over the same window: its kernel is cached
	if _, err := e.Search(ctx, busy); err != nil {
		t.Fatalf("a cached kernel waited for the gate: %v", err)
	}
	busy.Rerank.Params = []byte(`{"C":5}`) // another kernel: computed
	if _, err := e.Search(ctx, busy); !errors.Is(err, admission.ErrBusy) {
		t.Fatalf("expensive kernel with the gate full: %v, want ErrBusy", err)
	}
	for _, s := range []string{"raw", "poly", "rbf"} {
		req := DefaultRequest("cat")
		req.Rerank.Strategy = s
		if _, err := e.Search(ctx, req); err != nil {
			t.Errorf("%s waited for the gate: %v", s, err)
		}
	}
	if !rerankPlan(t, "npk").Expensive(150, ix.Dim()) || rerankPlan(t, "poly").Expensive(150, ix.Dim()) {
		t.Fatal("the test's premise: full-rank npk of 150 is expensive, poly is not")
	}
}

func rerankPlan(t *testing.T, strategy string) *rerank.Plan {
	p, err := rerank.NewPlan(rerank.Options{Strategy: strategy})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLearnerDeadline(t *testing.T) {
	e := New(catIndex(t, 60), nil, Options{LearnerTimeout: time.Nanosecond})
	_, err := e.Search(t.Context(), npkRequest(60))
	if !errors.Is(err, ErrLearnerDeadline) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "60 candidates") {
		t.Fatalf("error %v, want the learner deadline", err)
	}
	req := npkRequest(60)
	req.Rerank.Strategy = "poly" // a fixed kernel has no learner deadline
	if _, err := e.Search(t.Context(), req); err != nil {
		t.Fatal(err)
	}
}

// A job precomputing rankings waits for the requests' slots, however long,
// rather than fail for them.
func TestPrecomputeWaitsForTheGate(t *testing.T) {
	mem, err := cache.NewMemory(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	gate := admission.NewGate(1, time.Millisecond, nil)
	e := New(catIndex(t, 150), cache.NewLoader(mem, nil), Options{Expensive: gate})
	raw := DefaultRequest("cat")
	raw.Rerank.Strategy = "raw"
	if _, err := e.Search(t.Context(), raw); err != nil { // counts the query
		t.Fatal(err)
	}
	release, err := gate.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(50 * time.Millisecond); release() }()
	rep, err := e.Precompute(t.Context(), 1, nil)
	if err != nil || rep.Rankings == 0 || rep.Failed != 0 {
		t.Fatalf("precompute with the gate busy for 50 ms: %+v, %v", rep, err)
	}
}
