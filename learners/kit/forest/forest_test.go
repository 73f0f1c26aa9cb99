package forest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// unweighted returns a grower over x and y with every sample once (no
// bootstrap), for splits worked out by hand.
func unweighted(t *testing.T, x *mat.Dense, y []bool, minLeaf int) *grower {
	t.Helper()
	d, err := newData(x, y, Options{MinLeaf: minLeaf, Mtry: 100})
	if err != nil {
		t.Fatal(err)
	}
	g := newGrower(d)
	for i := range g.w {
		g.w[i] = 1
	}
	return g
}

// Six points on a line, classes + + + - - +. n times the entropy (nats)
// of the cuts after the 1st..5th point: 5H(3/5) = 3.365, 4H(1/2) = 2.773,
// 3H(1/3) = 1.910, 4H(3/4) + 2H(1/2) = 3.635, 5H(3/5) = 3.365; the
// parent's is 6H(2/3) = 3.819. The best cut is after the 3rd point, at
// the midpoint 3.5, gaining 1.909 nats (0.459 bits a sample).
func TestBestSplitByHand(t *testing.T) {
	x := mat.NewDense(6, 1, []float64{1, 2, 3, 4, 5, 6})
	y := []bool{true, true, true, false, false, true}
	g := unweighted(t, x, y, 1)
	ent := func(n, q float64) float64 {
		h := n * math.Log(n)
		for _, k := range []float64{q, n - q} {
			if k > 0 {
				h -= k * math.Log(k)
			}
		}
		return h
	}
	if got, want := g.d.ent(6, 4), ent(6, 4); math.Abs(got-want) > 1e-12 || math.Abs(got-3.819) > 5e-4 {
		t.Errorf("ent(6, 4) = %v, want %v (3.819)", got, want)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	tr := g.build(rng)
	// Root: 3.5; its right child {4, 5, 6} = - - + cuts at 5.5 into two pure leaves.
	want := []node{
		{feature: 0, left: 1, thr: 3.5},
		{feature: leafYes},
		{feature: 0, left: 3, thr: 5.5},
		{feature: leafNo},
		{feature: leafYes},
	}
	if !reflect.DeepEqual(tr.nodes, want) {
		t.Errorf("tree %+v, want %+v", tr.nodes, want)
	}

	// With at least 3 samples a leaf, only the cut after the 3rd point is allowed,
	// and its right child (3 samples) stays a leaf voting -.
	tr = unweighted(t, x, y, 3).build(rng)
	want = []node{{feature: 0, left: 1, thr: 3.5}, {feature: leafYes}, {feature: leafNo}}
	if !reflect.DeepEqual(tr.nodes, want) {
		t.Errorf("min leaf 3: tree %+v, want %+v", tr.nodes, want)
	}
	// At least 4 a leaf: 6 samples cannot be split.
	if tr = unweighted(t, x, y, 4).build(rng); len(tr.nodes) != 1 || tr.nodes[0].feature != leafYes {
		t.Errorf("min leaf 4: tree %+v, want one leaf voting +", tr.nodes)
	}
}

// Bootstrap multiplicities count as samples: point 1 (class -) drawn 4
// times outweighs the three + points beside it. Classes by x: - + + + with
// weights 4 1 1 1; cuts: after the 1st, 0 + 3H(1) = 0: pure children,
// which is the best and must be found; the threshold is 1.5.
func TestBestSplitWeighted(t *testing.T) {
	// Points 4..6 are out of the bag: the bootstrap total stays n = 7.
	x := mat.NewDense(7, 2, []float64{
		1, 0,
		2, 1,
		3, 0,
		4, 1,
		5, 5,
		6, 6,
		7, 7,
	})
	y := []bool{false, true, true, true, false, false, false}
	g := unweighted(t, x, y, 1)
	g.w[0], g.w[4], g.w[5], g.w[6] = 4, 0, 0, 0
	s := span{0, 0, 4, 7, 3}
	g.inBag()
	f, cut, thr, wl, pl, ok := g.bestSplit(s, rand.New(rand.NewPCG(1, 1)))
	if !ok || f != 0 || cut != 1 || thr != 1.5 || wl != 4 || pl != 0 {
		t.Errorf("split (%d, %d, %v, %d, %d, %v), want feature 0, cut 1, threshold 1.5, 4 samples (0 +) left", f, cut, thr, wl, pl, ok)
	}
	// Feature 1 (0 1 0 1) gains less: its one cut leaves weights 5 (1 +)
	// and 2 (2 +). Splitting on feature 0 sends point 0 left and keeps
	// feature 1's run sorted on each side: [0 | 2 1 3].
	g.partition(s, 0, 1)
	var got []int32
	for _, e := range g.order[1] {
		got = append(got, e.i)
	}
	if !slices.Equal(got, []int32{0, 2, 1, 3}) {
		t.Errorf("feature 1 order after the split %v, want [0 2 1 3]", got)
	}
}

func blobs(n int, sep float64, seed uint64) (*mat.Dense, []bool) {
	r := rand.New(rand.NewPCG(seed, 5))
	x := mat.NewDense(n, 3, nil)
	y := make([]bool, n)
	for i := range n {
		y[i] = i%2 == 0
		c := -sep / 2
		if y[i] {
			c = sep / 2
		}
		for f := range 3 {
			x.Set(i, f, c+r.NormFloat64())
		}
	}
	return x, y
}

func xor(n int, seed uint64) (*mat.Dense, []bool) {
	r := rand.New(rand.NewPCG(seed, 9))
	x := mat.NewDense(n, 2, nil)
	y := make([]bool, n)
	for i := range n {
		a, b := 2*r.Float64()-1, 2*r.Float64()-1
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		y[i] = a*b > 0
	}
	return x, y
}

func accuracy(t *testing.T, f *Forest, x *mat.Dense, y []bool) float64 {
	t.Helper()
	n, _ := x.Dims()
	correct := 0
	for i := range n {
		got, err := f.Predict(x.RawRowView(i))
		if err != nil {
			t.Fatal(err)
		}
		if got == y[i] {
			correct++
		}
	}
	return float64(correct) / float64(n)
}

func TestSeparable(t *testing.T) {
	x, y := blobs(200, 12, 1)
	f, err := Fit(context.Background(), x, y, Options{Trees: 25, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	xt, yt := blobs(200, 12, 2)
	if a, b := accuracy(t, f, x, y), accuracy(t, f, xt, yt); a != 1 || b != 1 {
		t.Errorf("accuracy on separable blobs: train %v, test %v, want 1", a, b)
	}
	if f.Trees() != 25 || f.P() != 3 {
		t.Errorf("%d trees over %d features, want 25 over 3", f.Trees(), f.P())
	}
}

// XOR: no single threshold does better than about 60%, the forest learns it.
func TestXOR(t *testing.T) {
	x, y := xor(400, 1)
	n, _ := x.Dims()
	bestStump := 0.0
	for f := range 2 {
		for c := range n {
			thr := x.At(c, f)
			agree := 0
			for i := range n {
				if (x.At(i, f) <= thr) == y[i] {
					agree++
				}
			}
			bestStump = math.Max(bestStump, math.Max(float64(agree), float64(n-agree))/float64(n))
		}
	}
	if bestStump > 0.65 {
		t.Fatalf("a single split reaches %v on the XOR data: not a test", bestStump)
	}
	f, err := Fit(context.Background(), x, y, Options{Trees: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	xt, yt := xor(400, 2)
	if acc := accuracy(t, f, xt, yt); acc < 0.9 {
		t.Errorf("XOR test accuracy %v (best single split %v), want >= 0.9", acc, bestStump)
	}
}

// The forest depends on the seed only: not on the number of goroutines
// nor on scheduling.
func TestDeterministic(t *testing.T) {
	x, y := xor(300, 3)
	fit := func(seed uint64, workers int) *Forest {
		f, err := Fit(context.Background(), x, y, Options{Trees: 40, Mtry: 1, Seed: seed, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b, c := fit(7, 1), fit(7, 4), fit(8, 4)
	if !reflect.DeepEqual(a, b) {
		t.Error("one worker and four grow different forests from one seed")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("seeds 7 and 8 grow the same forest")
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	x, y := blobs(10, 4, 1)
	nan := mat.DenseCopyOf(x)
	nan.Set(3, 1, math.NaN())
	for name, c := range map[string]struct {
		x   *mat.Dense
		y   []bool
		opt Options
	}{
		"nil":           {nil, nil, Options{}},
		"empty":         {&mat.Dense{}, nil, Options{}},
		"short classes": {x, y[:9], Options{}},
		"NaN":           {nan, y, Options{}},
		"Inf":           {mat.NewDense(1, 1, []float64{math.Inf(-1)}), []bool{true}, Options{}},
		"negative":      {x, y, Options{MinLeaf: -1}},
	} {
		if _, err := Fit(ctx, c.x, c.y, c.opt); !errors.Is(err, learners.ErrInput) {
			t.Errorf("%s: %v, want ErrInput", name, err)
		}
	}
	f, err := Fit(ctx, x, y, Options{Trees: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Fraction([]float64{1, 2}); !errors.Is(err, learners.ErrInput) {
		t.Errorf("2 values for 3 features: %v, want ErrInput", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Fit(cctx, x, y, Options{Trees: 3}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// BenchmarkFit grows trees on 50,000 noisy samples of 8 features (the
// scale of pima's K-examples, whose trees grow deep).
func BenchmarkFit(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const n, p = 50000, 8
	x := mat.NewDense(n, p, nil)
	y := make([]bool, n)
	for i := range n {
		s := 0.0
		for f := range p {
			v := r.NormFloat64()
			x.Set(i, f, v)
			s += v
		}
		y[i] = s+2*r.NormFloat64() > 0
	}
	for b.Loop() {
		if _, err := Fit(context.Background(), x, y, Options{Trees: 4, Workers: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
