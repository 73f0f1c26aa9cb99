package tsmkl

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/learnertest"
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
	kernels := []*mat.SymDense{learners.Linear(x.Slice(0, n, 0, 1).(*mat.Dense)), learners.Linear(x.Slice(0, n, 1, 2).(*mat.Dense))}
	accuracy := func(degree int) float64 {
		l, _, err := learners.New(map[int]string{1: Name, 2: NamePoly}[degree], nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := l.Fit(context.Background(), &learners.Input{Kernels: kernels, Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		svm, err := learners.TrainSVM(context.Background(), out.Kernel, y, learners.SVMOptions{C: 1000})
		if err != nil && !errors.Is(err, learners.ErrSVMNotConverged) {
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
