package search

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// A learned kernel and its learner's statistics are one cached value: the
// kernel comes back as float32 (the same on a hit and a miss), the
// statistics bit for bit, and a value of another size is an error.
func TestKernelValueRoundTrip(t *testing.T) {
	k := mat.NewSymDense(3, []float64{1, 0.1, -1.0 / 3, 0.1, 2, 1e-9, -1.0 / 3, 1e-9, 3})
	stats := &learners.Stats{Iterations: 17, Objective: -math.Pi, Converged: false, Gap: 1e-5}
	b, err := cache.Encode(kernelValue(k, stats))
	if err != nil {
		t.Fatal(err)
	}
	v, err := cache.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got, gotStats, err := fromKernelValue(v, 3)
	if err != nil {
		t.Fatal(err)
	}
	if *gotStats != *stats {
		t.Errorf("statistics %+v, want %+v", *gotStats, *stats)
	}
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			if want := float64(float32(k.At(i, j))); got.At(i, j) != want {
				t.Errorf("K(%d, %d) = %v, want %v (float32)", i, j, got.At(i, j), want)
			}
		}
	}
	if _, _, err := fromKernelValue(v, 4); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("a kernel of 3 read as 4: %v", err)
	}
	if _, _, err := fromKernelValue(cache.Value{Kind: cache.Float32, Shape: []int{9}, F32: make([]float32, 9)}, 3); err == nil {
		t.Error("a float32 value (the former layout) read as a kernel with statistics")
	}
}

// A ranking hit decodes the cached bytes once a process, and again when
// they change under its key (another server stored its own).
func TestDecodedRankingFollowsTheCachedBytes(t *testing.T) {
	mem, err := cache.NewMemory(0)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	e := New(catIndex(t, 30), cache.NewLoader(mem, nil), Options{})
	req := DefaultRequest("cat")
	req.Rerank.Strategy = "poly"
	first, err := e.Search(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	hit, err := e.Search(t.Context(), req)
	if err != nil || hit.Trace.Cache != cache.Hit || &hit.Results[0] == &first.Results[0] {
		t.Fatalf("second search: %v, cache %s", err, hit.Trace.Cache)
	}
	again, _ := e.Search(t.Context(), req)
	if &again.Results[0] != &hit.Results[0] {
		t.Error("a hit on the same bytes decoded them again")
	}
	p, err := e.plan(req)
	if err != nil {
		t.Fatal(err)
	}
	other := hit
	other.Total = 1234
	b, err := json.Marshal(ranking{Rerank: other.Rerank.Info, Total: other.Total, Window: other.Window, Results: other.Results})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := cache.Encode(cache.Value{Kind: cache.Bytes, Shape: []int{len(b)}, Bytes: b})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Set(t.Context(), p.rankingKey().String(), enc, 0); err != nil {
		t.Fatal(err)
	}
	if changed, err := e.Search(t.Context(), req); err != nil || changed.Total != 1234 {
		t.Errorf("after the cached ranking changed: total %d, %v; want 1234", changed.Total, err)
	}
}
