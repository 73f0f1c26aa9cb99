package rerank

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// A window of five where b2 and b3 are copies of b (identical features):
// VisualRank runs over three nodes, a, {b, b2, b3} and c, whose kernel is
// the mean over the members' pairs, and each copy gets a third of its
// node's score. The expected numbers come from the three-node problem
// written out by hand, not from the clustering.
func TestNearDuplicatesVoteOnce(t *testing.T) {
	x := [][]float64{{1, 0}, {0.6, 0.8}, {0.6, 0.8}, {0.2, 1}, {0.6, 0.8}}
	ids := []string{"a", "b", "b2", "c", "b3"}
	cands := make([]Candidate, len(x))
	for i := range x {
		cands[i] = Candidate{ID: ids[i], TextScore: float64(5 - i), Visual: x[i]}
	}
	xd := mat.NewDense(len(x), 2, nil)
	for i, r := range x {
		xd.SetRow(i, r)
	}
	k := kernelmath.Linear(xd)
	// The nodes' kernel by hand: a.b = 0.6, a.c = 0.2, b.c = 0.12 + 0.8 = 0.92.
	kc := mat.NewSymDense(3, []float64{
		1, 0.6, 0.2,
		0.6, 1, 0.92,
		0.2, 0.92, 1.04,
	})
	for _, p := range Priors {
		// The text prior of a node is its members' mean text score: a 5, b (4+3+1)/3, c 2.
		nodes := []Candidate{{ID: "a", TextScore: 5}, {ID: "b", TextScore: 8.0 / 3}, {ID: "c", TextScore: 2}}
		want, _ := VisualRank(Stochastic(Affinity(kc, "clip")), prior(nodes, p), 0.85)
		vr, s, _ := Scores(k, cands, p, "clip", 0.85)
		if r, c := s.Dims(); r != 3 || c != 3 {
			t.Fatalf("prior %s: a %dx%d matrix, want one over the 3 nodes", p, r, c)
		}
		kernelmath.Release(s.RawMatrix().Data)
		wantVR := []float64{want[0], want[1] / 3, want[1] / 3, want[2], want[1] / 3}
		sum := 0.0
		for i := range vr {
			sum += vr[i]
			if math.Abs(vr[i]-wantVR[i]) > 1e-12 {
				t.Errorf("prior %s: %s scores %.6f, want %.6f", p, ids[i], vr[i], wantVR[i])
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("prior %s: scores sum to %g", p, sum)
		}
	}
	// Copies are explained as one: each says how many others share its
	// features, and none is a voter of another; the cluster votes under
	// its first member's id.
	res, _, err := rerankAll(t.Context(), cands, Options{Strategy: "linear", Voters: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		dup := r.ID == "b" || r.ID == "b2" || r.ID == "b3"
		if want := map[bool]int{true: 2, false: 0}[dup]; r.NearDuplicates != want {
			t.Errorf("%s: near_duplicates %d, want %d", r.ID, r.NearDuplicates, want)
		}
		for _, v := range r.Voters {
			if v.ID == "b2" || v.ID == "b3" || dup && v.ID == "b" {
				t.Errorf("%s: voter %s is a copy (voters %v)", r.ID, v.ID, r.Voters)
			}
		}
	}
}

// Candidates cluster when they have the same image bytes (whatever their
// vectors), or vectors within NearDuplicateDistance of each other, and
// through chains of such links; -0 is 0, and a candidate without a vector
// or a hash is its own cluster.
func TestDuplicatesNearOrSameBytes(t *testing.T) {
	const tau = NearDuplicateDistance
	cands := []Candidate{
		{ID: "a", Visual: []float64{3, 4}},                  // norm 5
		{ID: "a-near", Visual: []float64{3, 4 + 0.9*5*tau}}, // 0.9 tau from a
		{ID: "a-far", Visual: []float64{3, 4 - 1.1*5*tau}},  // 1.1 tau from a, 2 tau from a-near
		{ID: "bytes", ImageHash: "h1"},                      // no vector: joined by its bytes alone
		{ID: "bytes2", Visual: []float64{7, 1}, ImageHash: "h1"},
		{ID: "neg0", Visual: []float64{math.Copysign(0, -1), 2}},
		{ID: "pos0", Visual: []float64{0, 2}},
		{ID: "x", Visual: []float64{10, 0}},
		{ID: "y", Visual: []float64{10, 0.0009}}, // 0.9e-4 from x and from z
		{ID: "z", Visual: []float64{10, 0.0018}}, // 1.8e-4 from x: linked through y
		{ID: "alone"},
		{ID: "alone2", ImageHash: "h2"},
	}
	want := [][]string{{"a", "a-near"}, {"a-far"}, {"bytes", "bytes2"}, {"neg0", "pos0"}, {"x", "y", "z"}, {"alone"}, {"alone2"}}
	cl, ok := duplicates(cands)
	var got [][]string
	for _, ms := range cl.members {
		var ids []string
		for _, i := range ms {
			ids = append(ids, cands[i].ID)
		}
		got = append(got, ids)
	}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("clusters %v (any %v), want %v", got, ok, want)
	}
	for i, c := range cl.node {
		if !slices.Contains(cl.members[c], i) {
			t.Fatalf("node[%d] = %d, whose members %v lack it", i, c, cl.members[c])
		}
	}
	if _, ok := duplicates([]Candidate{cands[0], cands[2], cands[3], cands[10], cands[11]}); ok {
		t.Error("clusters found among distinct candidates")
	}
}

// The sweep of nearVectors (norm order, block projections, early exit)
// finds exactly the pairs that a comparison of every pair finds: random
// windows of vectors, some perturbed copies of others at distances around
// the threshold, clustered by brute force with a flood fill.
func TestNearVectorsFindsEveryPair(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	for trial := 0; trial < 20; trial++ {
		n, d := 60, 1+rng.IntN(40)
		cands := make([]Candidate, n)
		for i := range cands {
			v := make([]float64, d)
			if i > 0 && rng.IntN(2) == 0 {
				src := cands[rng.IntN(i)].Visual
				eps := NearDuplicateDistance * rng.Float64() * 2 * math.Sqrt(3) // relative distances 0 to 2 tau
				for k := range v {
					v[k] = src[k] * (1 + eps*(2*rng.Float64()-1))
				}
			} else {
				for k := range v {
					v[k] = rng.NormFloat64()
				}
			}
			cands[i] = Candidate{ID: fmt.Sprint(i), Visual: v}
		}
		near := func(i, j int) bool {
			x, y := cands[i].Visual, cands[j].Visual
			s, nx, ny := 0.0, 0.0, 0.0
			for k := range x {
				s += (x[k] - y[k]) * (x[k] - y[k])
				nx += x[k] * x[k]
				ny += y[k] * y[k]
			}
			return math.Sqrt(s) <= NearDuplicateDistance*math.Sqrt(max(nx, ny))
		}
		want := make([]int, n) // the smallest index reachable
		for i := range want {
			want[i] = -1
		}
		for i := range cands {
			if want[i] >= 0 {
				continue
			}
			stack := []int{i}
			want[i] = i
			for len(stack) > 0 {
				a := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for b := range cands {
					if want[b] < 0 && near(a, b) {
						want[b] = i
						stack = append(stack, b)
					}
				}
			}
		}
		cl, _ := duplicates(cands)
		for i := range cands {
			if first := cl.members[cl.node[i]][0]; first != want[i] {
				t.Fatalf("trial %d: candidate %d in the cluster of %d, want %d", trial, i, first, want[i])
			}
		}
	}
}

// repeated is the Corel5k sky window with the visual vectors of its first
// 50 images only, each repeated four times (image i has image i mod 50's):
// a window of repeated features, its tags unchanged.
func repeated(tb testing.TB) []Candidate {
	cands := corelWindow(tb, "sky")
	out := make([]Candidate, len(cands))
	copy(out, cands)
	for i := range out {
		out[i].Visual = cands[i%50].Visual
	}
	return out
}

// A learner fits one point a cluster: the kernel npk-fused learns on the
// repeated window is, row for row, the one it learns on the 50 distinct
// vectors with the mean of each cluster pair's tag kernel as its target
// (written out here from the window's tag kernel).
func TestLearnerFitsOnePointACluster(t *testing.T) {
	cands := repeated(t)
	n, m := len(cands), 50
	text := TextKernel(cands)
	target := mat.NewSymDense(m, nil)
	for a := 0; a < m; a++ {
		for b := a; b < m; b++ {
			s, c := 0.0, 0
			for i := a; i < n; i += m {
				for j := b; j < n; j += m {
					s += text.At(i, j)
					c++
				}
			}
			target.SetSym(a, b, s/float64(c))
		}
	}
	x := mat.NewDense(m, len(cands[0].Visual), nil)
	for a := 0; a < m; a++ {
		x.SetRow(a, cands[a].Visual)
	}
	r, err := resolve("npk-fused", nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.Fit(t.Context(), &learners.Input{Features: x, Target: target})
	if err != nil {
		t.Fatal(err)
	}
	got, stats, err := Kernel(t.Context(), cands, "npk-fused", nil)
	if err != nil || stats == nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if got.At(i, j) != want.Kernel.At(i%m, j%m) {
				t.Fatalf("K[%d][%d] = %g, want the nodes' K[%d][%d] = %g", i, j, got.At(i, j), i%m, j%m, want.Kernel.At(i%m, j%m))
			}
		}
	}
}

// BenchmarkRerank200Repeated is BenchmarkRerank200's npk-fused and poly on
// a window of repeated features (repeated): the learner fits its 50
// distinct vectors.
func BenchmarkRerank200Repeated(b *testing.B) {
	cands := repeated(b)
	for _, s := range []string{"npk-fused", "poly"} {
		b.Run(s, func(b *testing.B) {
			warmHeap()
			cpu := cputime.Process()
			for b.Loop() {
				if _, _, err := rerankAll(context.Background(), cands, Options{Strategy: s, Voters: 3}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkDuplicates is the cost of finding the near-duplicate clusters
// of the Corel5k sky window (200 distinct vectors) and of the largest
// window the server allows (1,000) holding one vector.
func BenchmarkDuplicates(b *testing.B) {
	sky := corelWindow(b, "sky")
	same := make([]Candidate, 1000)
	for i := range same {
		same[i] = Candidate{ID: fmt.Sprint(i), Visual: sky[0].Visual}
	}
	for _, w := range []struct {
		name  string
		cands []Candidate
		nodes int
	}{{"sky200", sky, 200}, {"one-vector1000", same, 1}} {
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cputime.Process()
			for b.Loop() {
				if cl, _ := duplicates(w.cands); len(cl.members) != w.nodes {
					b.Fatalf("%d clusters, want %d", len(cl.members), w.nodes)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/1e3/float64(b.N), "cpu-µs/op")
		})
	}
}

// With FitEachCopy the learner fits every candidate of the repeated
// window, copies too: the kernel is the one npk-fused learns on the 200
// vectors and the window's tag kernel, written out here.
func TestFitEachCopyFitsEveryCandidate(t *testing.T) {
	cands := repeated(t)
	x, err := Visual(cands)
	if err != nil {
		t.Fatal(err)
	}
	r, err := resolve("npk-fused", nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.Fit(t.Context(), &learners.Input{Features: x, Target: TextKernel(cands)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(Options{Strategy: "npk-fused", FitEachCopy: true})
	if err != nil {
		t.Fatal(err)
	}
	got, stats, err := p.Kernel(t.Context(), p.Split(cands))
	if err != nil || stats.Iterations != want.Stats.Iterations {
		t.Fatalf("%+v, %v; want %d iterations", stats, err, want.Stats.Iterations)
	}
	if !mat.EqualApprox(got, want.Kernel, 0) {
		t.Error("the kernel is not the one fitted on every candidate")
	}
}

// Split finds a window's near-duplicate clusters once, for the learner and
// for VisualRank: on the repeated sky window (50 clusters of four) npk-fused
// ranks Split's window as it ranks one built by hand, whose clusters the
// kernel and the ranking each find again, bit for bit.
func TestSplitFindsTheClustersOnce(t *testing.T) {
	cands := repeated(t)
	p, err := NewPlan(Options{Voters: 3})
	if err != nil {
		t.Fatal(err)
	}
	w := p.Split(cands)
	if w.dups == nil || !w.dups.some || len(w.dups.cl.members) != 50 {
		t.Fatalf("Split's clusters %+v, want 50 of four", w.dups)
	}
	if got, hand := w.Points(), (Window{Ranked: cands}).Points(); got != 50 || hand != 50 {
		t.Fatalf("Points: %d from Split, %d from a window built by hand; want 50 (200 candidates, 4 copies each)", got, hand)
	}
	rank := func(w Window) ([]Result, *mat.SymDense) {
		k, _, err := p.Kernel(t.Context(), w)
		if err != nil {
			t.Fatal(err)
		}
		res, _ := p.Rank(k, w)
		return res, k
	}
	got, kGot := rank(w)
	want, kWant := rank(Window{Ranked: cands})
	if !mat.Equal(kGot, kWant) || !reflect.DeepEqual(got, want) {
		t.Fatal("Split's window ranks otherwise than a window built by hand")
	}
	if got[0].NearDuplicates != 3 {
		t.Fatalf("the top result has %d near-duplicates, want 3", got[0].NearDuplicates)
	}
}
