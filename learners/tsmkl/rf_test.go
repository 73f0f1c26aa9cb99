package tsmkl

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/forest"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"gonum.org/v1/gonum/mat"
)

func TestLandmarks(t *testing.T) {
	// 30 labelled points: 12 of class 0, 18 of class 1; l = 10, 5 a class.
	labels := make([]int, 40)
	for i := range labels {
		switch {
		case i%4 == 3:
			labels[i] = learners.Unlabeled
		case i < 16:
			labels[i] = 0
		default:
			labels[i] = 1
		}
	}
	marks, err := Landmarks(labels, 1.0/3, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, i := range marks {
		count[labels[i]]++
	}
	if len(marks) != 10 || count[0] != 5 || count[1] != 5 || !slices.IsSorted(marks) {
		t.Errorf("landmarks %v (per class %v), want 5 of each class, sorted", marks, count)
	}
	again, _ := Landmarks(labels, 1.0/3, rand.New(rand.NewPCG(1, 1)))
	if !slices.Equal(marks, again) {
		t.Error("one seed, two landmark draws")
	}
	// A class smaller than its share gives all its points: 2 of class 2.
	labels[0], labels[1] = 2, 2
	marks, _ = Landmarks(labels, 1, rand.New(rand.NewPCG(1, 1)))
	if count := len(marks); count != 2+2*(30/3) {
		t.Errorf("%d landmarks, want 10 of each large class and the 2 of the small one", count)
	}
	for _, f := range []float64{0, -1, 1.5, math.NaN()} {
		if _, err := Landmarks(labels, f, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, learners.ErrInput) {
			t.Errorf("fraction %v: %v, want ErrInput", f, err)
		}
	}
}

func TestCapBalanced(t *testing.T) {
	tl := []float64{1, -1, -1, 1, -1, -1, -1, 1}
	keep := capBalanced(tl, 4, rand.New(rand.NewPCG(1, 1)))
	pos := 0
	for _, e := range keep {
		if tl[e] > 0 {
			pos++
		}
	}
	if len(keep) != 4 || pos != 2 || !slices.IsSorted(keep) {
		t.Errorf("kept %v, want 2 of each K-label, sorted", keep)
	}
}

// The similarity of well separated clusters: s(x, x') is symmetric, a
// multiple of 1/trees in [0, 1], and every unlabelled point is on average
// most similar to the landmarks of its own class.
func TestRFSimilarity(t *testing.T) {
	in := learnertest.Problem(60, 1)
	// Problem's class is i mod 3; every 5th point is held out unlabelled.
	truth := make([]int, 60)
	for i := range truth {
		truth[i] = i % 3
		if in.Labels[i] = truth[i]; i%5 == 4 {
			in.Labels[i] = learners.Unlabeled
		}
	}
	kernels := normalized(in, true)
	const trees = 40
	m, err := FitRF(context.Background(), kernels, in.Labels, RFOptions{Forest: forest.Options{Trees: trees, Seed: 2}, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, 60)
	for i := range all {
		all[i] = i
	}
	s, err := m.Similarity(context.Background(), kernels, all, all)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		for j := range 60 {
			v := s.At(i, j)
			if v != s.At(j, i) || v < 0 || v > 1 || math.Abs(v*trees-math.Round(v*trees)) > 1e-9 {
				t.Fatalf("s(%d, %d) = %v, s(%d, %d) = %v: want symmetric multiples of 1/%d in [0, 1]", i, j, v, j, i, s.At(j, i), trees)
			}
		}
	}
	marks, err := Landmarks(in.Labels, 1.0/3, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 4; i < 60; i += 5 {
		mean := make([]float64, 3)
		for _, j := range marks {
			mean[truth[j]] += s.At(i, j)
		}
		if best := slices.Index(mean, slices.Max(mean)); best != truth[i] {
			t.Errorf("point %d of class %d: summed similarity to the landmarks of each class %v", i, truth[i], mean)
		}
	}
	if _, err := m.Similarity(context.Background(), kernels[:2], all, all); !errors.Is(err, learners.ErrInput) {
		t.Errorf("2 kernels for a forest over 3: %v, want ErrInput", err)
	}
	if _, err := m.Similarity(context.Background(), kernels, []int{60}, all); !errors.Is(err, learners.ErrInput) {
		t.Errorf("point 60 of 60: %v, want ErrInput", err)
	}
}

// The learner's kernel is Phi Phi^T of the landmark similarities.
func TestRFLearnerKernel(t *testing.T) {
	in := learnertest.Problem(30, 5)
	l, _, err := learners.New(NameRF, json.RawMessage(`{"trees": 20, "seed": 4}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Fit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	kernels := normalized(in, true)
	m, err := FitRF(context.Background(), kernels, in.Labels, RFOptions{Forest: forest.Options{Trees: 20, Seed: 4}, MaxPairs: 200000, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	marks, _ := Landmarks(in.Labels, 1.0/3, rand.New(rand.NewPCG(4, 0x1a4d)))
	all := make([]int, 30)
	for i := range all {
		all[i] = i
	}
	phi, _ := m.Similarity(context.Background(), kernels, all, marks)
	for i := range 30 {
		for j := range 30 {
			if want := mat.Dot(phi.RowView(i), phi.RowView(j)); math.Abs(out.Kernel.At(i, j)-want) > 1e-12 {
				t.Fatalf("K(%d, %d) = %v, want phi_i . phi_j = %v", i, j, out.Kernel.At(i, j), want)
			}
		}
	}
	if out.Stats.Iterations != 20 {
		t.Errorf("%d iterations, want the 20 trees", out.Stats.Iterations)
	}
	// The cap: 10 balanced K-examples.
	capped, err := FitRF(context.Background(), kernels, in.Labels, RFOptions{Forest: forest.Options{Trees: 2}, MaxPairs: 10})
	if err != nil || capped.Examples != 10 {
		t.Errorf("capped at 10: %v K-examples, %v", capped, err)
	}
	if _, err := FitRF(context.Background(), nil, in.Labels, RFOptions{}); !errors.Is(err, learners.ErrInput) {
		t.Errorf("no kernels: %v, want ErrInput", err)
	}
}
