package mklr

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// The registered scorer is Train: the first kernel is K_u, the others are
// the unpenalised terms, the parameters are Options.
func TestRegisteredScorerIsTrain(t *testing.T) {
	c := newCommunity(t, 40, 4, 6, 5)
	l, spec, err := learners.New(Name, json.RawMessage(`{"pair": "squared", "c": 0.001, "seed": 3, "max_import": 30}`))
	if err != nil || spec.Kind != learners.KindScorer {
		t.Fatalf("New: %v, kind %s", err, spec.Kind)
	}
	out, err := l.Fit(context.Background(), &learners.Input{Matrices: append([]kernelmath.KernelMatrix{c.k}, c.base...), MustLink: c.pos, CannotLink: c.neg})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Train(context.Background(), c.k, c.pos, c.neg, Options{Pair: PairSquared, C: 1e-3, Seed: 3, MaxImport: 30, Base: c.base})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		for j := 0; j < 40; j++ {
			if got, want := out.Scorer.Score(i, j), m.Score(i, j); got != want {
				t.Fatalf("score(%d, %d) = %v, Train's %v", i, j, got, want)
			}
		}
	}
	if st := m.Stats(); out.Stats.Iterations != len(st.Losses)-1 || out.Stats.Objective != st.Loss || !out.Stats.Converged {
		t.Fatalf("stats %+v, Train's %+v", out.Stats, st)
	}
}

// Pairs that an unpenalised term separates end the fit at the loss floor,
// converged, instead of running the Newton refit to its cap while the
// term's weight grows without bound.
func TestSeparablePairsConverge(t *testing.T) {
	c := newCommunity(t, 30, 3, 4, 8)
	same := mat.NewSymDense(30, nil) // 1 for two users of one group: separates pos from neg
	for i := 0; i < 30; i++ {
		for j := i; j < 30; j++ {
			if c.group[i] == c.group[j] {
				same.SetSym(i, j, 1)
			}
		}
	}
	m, err := Train(context.Background(), c.k, c.pos, c.neg, Options{Base: []kernelmath.KernelMatrix{kernelmath.DenseKernel{K: same}}})
	if err != nil {
		t.Fatalf("Train: %v", err)
	}
	if l := m.Stats().Loss; !(l < lossFloor) {
		t.Fatalf("loss %v, want below the floor %v", l, lossFloor)
	}
	lowestPos := m.Score(c.pos[0].I, c.pos[0].J)
	for _, p := range c.pos {
		lowestPos = min(lowestPos, m.Score(p.I, p.J))
	}
	for _, p := range c.neg {
		if s := m.Score(p.I, p.J); s >= lowestPos {
			t.Fatalf("negative pair %v scores %v, above the lowest positive %v", p, s, lowestPos)
		}
	}
}
