package tsmkl

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

func TestMonomials(t *testing.T) {
	// The thesis' toy: [K1, K2, K1^2, K1K2, K2^2] (unique monomials).
	got := Monomials(2, 2)
	want := [][]int{{0}, {1}, {0, 0}, {0, 1}, {1, 1}}
	if len(got) != len(want) {
		t.Fatalf("Monomials(2,2) = %v", got)
	}
	for i := range want {
		if len(got[i]) != len(want[i]) || got[i][0] != want[i][0] || got[i][len(got[i])-1] != want[i][len(want[i])-1] {
			t.Fatalf("Monomials(2,2) = %v, want %v", got, want)
		}
	}
	// C(p+3,3) - 1 terms of degree 1..3 (spec 7: p = 60 gives 39,710).
	if n := len(Monomials(60, 3)); n != 39710 {
		t.Errorf("Monomials(60,3) has %d terms, want 39710", n)
	}
	if n := len(Monomials(60, 2)); n != 60+60*61/2 {
		t.Errorf("Monomials(60,2) has %d terms", n)
	}
}

func TestNormalizeByHand(t *testing.T) {
	// K = x x' for x = (1, 2, 3, 10) with train = {0, 1, 2}: train mean
	// 2, so K_c(i,j) = (x_i - 2)(x_j - 2) and the test row follows the same
	// map; the centred training diagonal is 1, 0, 1: s = 2/3.
	x := []float64{1, 2, 3, 10}
	k := mat.NewSymDense(4, nil)
	for i := range x {
		for j := i; j < 4; j++ {
			k.SetSym(i, j, x[i]*x[j])
		}
	}
	Normalize([]*mat.SymDense{k}, []int{0, 1, 2})
	for i := range x {
		for j := range x {
			want := (x[i] - 2) * (x[j] - 2) / (2.0 / 3)
			if math.Abs(k.At(i, j)-want) > 1e-12 {
				t.Fatalf("K[%d,%d] = %v, want %v", i, j, k.At(i, j), want)
			}
		}
	}
}

func TestPegasosInvariants(t *testing.T) {
	in := learnertest.Problem(30, 3)
	all := make([]int, 30)
	for i := range all {
		all[i] = i
	}
	Normalize(in.Kernels, all)
	for _, lambda := range []float64{100, 1, 1e-4} {
		m, err := Fit(context.Background(), in.Kernels, in.Labels, Options{Lambda: lambda, Degree: 2})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range m.Coef {
			if c < 0 {
				t.Fatalf("lambda %g: coefficient %d = %v < 0", lambda, i, c)
			}
		}
		if nrm := floats.Norm(m.Coef, 2); nrm > 1/math.Sqrt(lambda)+1e-12 {
			t.Errorf("lambda %g: |mu| = %v outside the ball 1/sqrt(lambda)", lambda, nrm)
		}
	}
	// Balanced: as many same-class as different-class K-examples.
	ks, err := kExamples(in.Kernels, in.Labels, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	for _, v := range ks.t {
		if v > 0 {
			pos++
		}
	}
	if 2*pos != ks.len() {
		t.Errorf("%d of %d K-examples are +1, want half", pos, ks.len())
	}
	// 20 labelled points (every third is unlabelled: classes 0 and 1, 10
	// each): 55 + 55 same-class pairs with the diagonal, 100 others, the
	// rarer label: 200 kept.
	if ks.len() != 200 {
		t.Errorf("%d K-examples, want 200", ks.len())
	}
}

// The two-circles toy of thesis 6.2.1.1: per-coordinate linear kernels; the
// linear combination cannot separate the circles (54% in the thesis), the
// degree-2 one can (100%).
func TestTwoCircles(t *testing.T) {
	const n = 200
	r := rand.New(rand.NewPCG(7, 7))
	x := mat.NewDense(n, 2, nil)
	y := make([]int, n)
	labels := make([]int, n)
	for i := range n {
		rad, cls := 1.0, 1
		if i%2 == 1 {
			rad, cls = 2, -1
		}
		th := 2 * math.Pi * r.Float64()
		x.Set(i, 0, rad*math.Cos(th))
		x.Set(i, 1, rad*math.Sin(th))
		y[i], labels[i] = cls, i%2
	}
	kernels := []*mat.SymDense{kernelmath.Linear(x.Slice(0, n, 0, 1).(*mat.Dense)), kernelmath.Linear(x.Slice(0, n, 1, 2).(*mat.Dense))}
	accuracy := func(degree int) float64 {
		l, _, err := learners.New(map[int]string{1: Name, 2: NamePoly}[degree], nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := l.Fit(context.Background(), &learners.Input{Kernels: kernels, Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		svm, err := kernelmath.TrainSVM(context.Background(), out.Kernel, y, kernelmath.SVMOptions{C: 1000})
		if err != nil && !errors.Is(err, kernelmath.ErrSVMNotConverged) {
			t.Fatal(err)
		}
		correct := 0
		for i, f := range svm.Train {
			if (f >= 0) == (y[i] > 0) {
				correct++
			}
		}
		return float64(correct) / n
	}
	lin, poly := accuracy(1), accuracy(2)
	t.Logf("two circles, SVM training accuracy: linear %.1f%%, degree 2 %.1f%% (thesis 54%% / 100%%)", 100*lin, 100*poly)
	if poly != 1 {
		t.Errorf("degree-2 TS-MKL: training accuracy %v, want 1", poly)
	}
	if lin > 0.75 {
		t.Errorf("linear TS-MKL: training accuracy %v, want near chance", lin)
	}
}

func TestBadInput(t *testing.T) {
	in := learnertest.Problem(12, 1)
	one := make([]int, 12) // a single class: no different-class pair
	l, _, _ := learners.New(Name, nil)
	if _, err := l.Fit(context.Background(), &learners.Input{Kernels: in.Kernels, Labels: one}); !errors.Is(err, learners.ErrInput) {
		t.Errorf("one class: %v, want ErrInput", err)
	}
	if _, _, err := learners.New(NamePoly, json.RawMessage(`{"degree": 4}`)); err == nil {
		t.Error("degree 4 accepted")
	}
	if _, err := Fit(context.Background(), nil, nil, Options{}); !errors.Is(err, learners.ErrInput) {
		t.Errorf("no kernels: %v", err)
	}
}

// sameClass is the link target of labels: +1 for a same-class pair, -1
// otherwise (the ideal kernel y y^T of two classes).
func sameClass(labels []int) *mat.SymDense {
	n := len(labels)
	y := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			v := -1.0
			if labels[i] == labels[j] {
				v = 1
			}
			y.SetSym(i, j, v)
		}
	}
	return y
}

// A link target that is y y^T gives the labelled fit exactly: the same
// K-examples (every pair i <= j, enumerated in the same order), the same
// draws of the balancing and of Pegasos, so the same bits.
func TestLinkTargetIsLabels(t *testing.T) {
	in := learnertest.Problem(47, 2)
	labels := make([]int, 47)
	for i := range labels {
		labels[i] = i % 3 // the clusters of Problem, every point labelled
	}
	l, _, err := learners.New(Name, json.RawMessage(`{"seed": 5}`))
	if err != nil {
		t.Fatal(err)
	}
	byLabels, err := l.Fit(context.Background(), &learners.Input{Kernels: in.Kernels, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	byTarget, err := l.Fit(context.Background(), &learners.Input{Kernels: in.Kernels, Target: sameClass(labels)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(byLabels.Weights, byTarget.Weights) || !mat.Equal(byLabels.Kernel, byTarget.Kernel) {
		t.Fatalf("weights %v from labels, %v from the target y y^T", byLabels.Weights, byTarget.Weights)
	}
	if floats.Max(byLabels.Weights) == 0 {
		t.Fatal("every weight is 0")
	}
}

// pairID is a fake kernel whose entry (i, j) names the pair: min*n + max.
type pairID struct {
	*kernelmath.SparseSym
	n int
}

func (p pairID) At(i, j int) float64 { return float64(min(i, j)*p.n + max(i, j)) }

// drawn returns the pairs of the K-examples of ks (built on a pairID
// kernel), by K-label.
func drawn(t *testing.T, ks *kset) (pos, neg map[int]bool) {
	t.Helper()
	pos, neg = map[int]bool{}, map[int]bool{}
	for e := range ks.len() {
		set := pos
		if ks.t[e] < 0 {
			set = neg
		}
		id := int(ks.row(e)[0])
		if set[id] {
			t.Fatalf("pair %d drawn twice", id)
		}
		set[id] = true
	}
	return pos, neg
}

// The sampled K-examples of a link target: with a sample larger than the
// rarer K-label, the law of the enumerated ones (every same-class pair,
// diagonal included, and as many distinct different-class pairs).
func TestSampledPairsCoverRarerLabel(t *testing.T) {
	const n = 30
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 3
	}
	zero, _ := kernelmath.NewSparseSym(n, nil)
	id := []kernelmath.KernelMatrix{pairID{zero, n}}
	pts, linked := labelled(labels)
	all, err := allPairs(id, pts, linked, errOneClass, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := drawn(t, all)
	ks, err := sampledPairs(context.Background(), id, kernelmath.DenseKernel{K: sameClass(labels)}, 1<<20, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	pos, neg := drawn(t, ks)
	// 3 classes of 10: 3 * 55 same-class pairs i <= j, 270 others.
	if len(want) != 165 || !maps.Equal(pos, want) {
		t.Fatalf("sampled %d positives, want the %d same-class pairs", len(pos), len(want))
	}
	if len(neg) != 165 {
		t.Fatalf("%d negatives, want 165", len(neg))
	}
	for p := range neg {
		if i, j := p/n, p%n; labels[i] == labels[j] {
			t.Fatalf("negative (%d, %d) is a same-class pair", i, j)
		}
	}
}

// Every linked pair is equally likely to be drawn, whatever the degree of
// its row (a hub's links are not favoured), and so is every unlinked one.
func TestSampledPairsUniform(t *testing.T) {
	const n, m, reps = 30, 10, 2000
	r := rand.New(rand.NewPCG(3, 3))
	var links []kernelmath.Triplet
	for j := 1; j < n; j += 2 {
		links = append(links, kernelmath.Triplet{I: 0, J: j, V: 1}) // row 0: a hub
	}
	for i := 1; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if r.Float64() < 0.1 {
				links = append(links, kernelmath.Triplet{I: i, J: j, V: 1})
			}
		}
	}
	target, err := kernelmath.NewSparseSym(n, links)
	if err != nil {
		t.Fatal(err)
	}
	total := len(links)
	unlinked := n*(n+1)/2 - total
	id := []kernelmath.KernelMatrix{pairID{target, n}}
	posCount, negCount := map[int]int{}, map[int]int{}
	for seed := range uint64(reps) {
		ks, err := sampledPairs(context.Background(), id, target, m, rand.New(rand.NewPCG(seed, 9)))
		if err != nil {
			t.Fatal(err)
		}
		pos, neg := drawn(t, ks)
		if len(pos) != m || len(neg) != m {
			t.Fatalf("%d and %d K-examples, want %d of each", len(pos), len(neg), m)
		}
		for p := range pos {
			if target.At(p/n, p%n) <= 0 {
				t.Fatalf("positive (%d, %d) is not linked", p/n, p%n)
			}
			posCount[p]++
		}
		for p := range neg {
			if target.At(p/n, p%n) > 0 {
				t.Fatalf("negative (%d, %d) is linked", p/n, p%n)
			}
			negCount[p]++
		}
	}
	// Inclusion probability m/size for each pair; 5 standard deviations.
	for _, c := range []struct {
		name  string
		count map[int]int
		size  int
	}{{"linked", posCount, total}, {"unlinked", negCount, unlinked}} {
		p := float64(m) / float64(c.size)
		tol := 5 * math.Sqrt(p*(1-p)/reps)
		if len(c.count) > c.size {
			t.Fatalf("%s: %d distinct pairs drawn of %d", c.name, len(c.count), c.size)
		}
		for pair, k := range c.count {
			if f := float64(k) / reps; math.Abs(f-p) > tol {
				t.Errorf("%s pair (%d, %d) drawn in %.3f of the samples, want %.3f +- %.3f", c.name, pair/n, pair%n, f, p, tol)
			}
		}
	}
}

// A planted problem on 2,500 points (sampled K-examples, implicit kernels):
// the links lie within 25 communities, and the base kernel of the
// communities explains them; the other two, random groups and random
// features, are noise. The community kernel takes the weight.
func TestPlantedLinks(t *testing.T) {
	const n, communities = 2500, 25
	r := rand.New(rand.NewPCG(11, 11))
	var community, groups, links []kernelmath.Triplet
	for i := range n {
		community = append(community, kernelmath.Triplet{I: i, J: i % communities, V: 1})
		groups = append(groups, kernelmath.Triplet{I: i, J: r.IntN(communities), V: 1})
		for j := i + communities; j < n; j += communities {
			if r.Float64() < 0.05 {
				links = append(links, kernelmath.Triplet{I: i, J: j, V: 1})
			}
		}
	}
	signal, err := kernelmath.NewGram(n, communities, community)
	if err != nil {
		t.Fatal(err)
	}
	noise, err := kernelmath.NewGram(n, communities, groups)
	if err != nil {
		t.Fatal(err)
	}
	z := mat.NewDense(n, 5, nil)
	for i := range n {
		for f := range 5 {
			z.Set(i, f, r.NormFloat64())
		}
	}
	target, err := kernelmath.NewSparseSym(n, links)
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := learners.New(Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Fit(context.Background(), &learners.Input{
		Matrices: []kernelmath.KernelMatrix{noise, signal, kernelmath.NewLowRank(z)}, TargetMatrix: target})
	if err != nil {
		t.Fatal(err)
	}
	w := out.Weights
	t.Logf("weights (groups, communities, features) = %.4g, %d links", w, len(links))
	if out.Kernel != nil {
		t.Error("a kernel over 2,500 points was formed from implicit kernels")
	}
	for i, v := range w {
		if v < 0 {
			t.Errorf("weight %d = %v < 0", i, v)
		}
	}
	if !(w[1] > 10*max(w[0], w[2])) {
		t.Errorf("weights %v: want the community kernel's (1) above 10 times the others'", w)
	}
}

func TestBadLinkTarget(t *testing.T) {
	in := learnertest.Problem(24, 1)
	l, _, _ := learners.New(Name, nil)
	none := mat.NewSymDense(24, nil)
	all := mat.NewSymDense(24, nil)
	for i := range 24 {
		for j := i; j < 24; j++ {
			all.SetSym(i, j, 0.5)
		}
	}
	for name, target := range map[string]*mat.SymDense{
		"wrong size": learnertest.Problem(12, 1).Target, "no link": none, "every pair linked": all,
	} {
		if _, err := l.Fit(context.Background(), &learners.Input{Kernels: in.Kernels, Target: target}); !errors.Is(err, learners.ErrInput) {
			t.Errorf("%s: %v, want ErrInput", name, err)
		}
		if target.SymmetricDim() != 24 {
			continue
		}
		// The sampled path too.
		if _, err := FitTarget(context.Background(), stored(in.Kernels), kernelmath.DenseKernel{K: target}, Options{MaxPairs: 1}); !errors.Is(err, learners.ErrInput) {
			t.Errorf("%s, sampled: %v, want ErrInput", name, err)
		}
	}
	if _, err := FitTarget(context.Background(), stored(in.Kernels), kernelmath.DenseKernel{K: none.SliceSym(0, 12).(*mat.SymDense)}, Options{}); !errors.Is(err, learners.ErrInput) {
		t.Errorf("kernels and target of different sizes: %v, want ErrInput", err)
	}
	if _, err := l.Fit(context.Background(), &learners.Input{Kernels: in.Kernels}); !errors.Is(err, learners.ErrInput) {
		t.Errorf("neither labels nor a target: %v, want ErrInput", err)
	}
}

// standardize is Normalize over all points, entry by entry, for every
// method of a KernelMatrix.
func TestStandardizedIsNormalize(t *testing.T) {
	in := learnertest.Problem(20, 4)
	for _, k := range in.Kernels {
		want := mat.NewSymDense(20, nil)
		want.CopySym(k)
		all := make([]int, 20)
		for i := range all {
			all[i] = i
		}
		Normalize([]*mat.SymDense{want}, all)
		got := standardize(kernelmath.DenseKernel{K: k})
		if !mat.EqualApprox(kernelmath.KernelDense(got), want, 1e-12) {
			t.Fatal("rows differ from Normalize's")
		}
		x := make([]float64, 20)
		for i := range x {
			x[i] = float64(i%7) - 3
		}
		dst, ref := make([]float64, 20), make([]float64, 20)
		got.Apply(dst, x)
		kernelmath.DenseKernel{K: want}.Apply(ref, x)
		diag := make([]float64, 20)
		for i := range diag {
			diag[i] = want.At(i, i)
		}
		if !floats.EqualApprox(dst, ref, 1e-12) || !floats.EqualApprox(got.Diag(), diag, 1e-12) ||
			floats.Norm(got.RowSums(), math.Inf(1)) > 1e-12 || math.Abs(got.At(3, 7)-want.At(3, 7)) > 1e-12 {
			t.Fatalf("Apply, Diag, RowSums or At differ from Normalize's kernel")
		}
	}
}
