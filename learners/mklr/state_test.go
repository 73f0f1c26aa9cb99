package mklr

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

// TestFromState rebuilds trained models from their state and checks every
// score against the trained model and against the formula of the package
// doc evaluated from the state with the explicit feature map.
func TestFromState(t *testing.T) {
	c := newCommunity(t, 40, 4, 6, 11)
	for _, opts := range []Options{
		{Base: c.base},
		{Pair: PairSquared, KernelTerm: true},
		{Pair: PairDifference, NoIntercept: true, Base: c.base},
	} {
		t.Run(opts.Pair.String(), func(t *testing.T) {
			opts.MaxImport, opts.Tol = 12, -1
			trained, err := Train(context.Background(), c.k, c.pos, c.neg, opts)
			if err != nil {
				t.Fatal(err)
			}
			st := trained.State()
			if len(st.Imports) == 0 || !slices.Equal(st.Imports, trained.Imports()) || st.KernelTerm != opts.KernelTerm || len(st.BaseWeights) != len(opts.Base) || st.Stats.Loss != trained.Stats().Loss {
				t.Fatalf("state %+v", st)
			}
			m, err := FromState(st, c.k, opts.Base)
			if err != nil {
				t.Fatal(err)
			}
			d := c.phi.RawMatrix().Cols
			want, got := make([]float64, 40), make([]float64, 40)
			for i := 0; i < 40; i++ {
				trained.ScoreAll(i, want)
				m.ScoreAll(i, got)
				for j := 0; j < 40; j++ {
					near(t, "rebuilt ScoreAll vs trained", got[j], want[j], 1e-12)
					f := st.Bias + st.Gamma*c.dot(i, j, 0, d)
					for b, g := range st.BaseWeights {
						f += g * c.baseAt(b, i, j)
					}
					for s, p := range st.Imports {
						f += st.Alpha[s] * c.featurePair(st.Pair, learners.Pair{I: i, J: j}, p)
					}
					near(t, "rebuilt Score vs the formula", m.Score(i, j), f, 1e-9)
				}
			}
		})
	}
}

func TestFromStateBadInput(t *testing.T) {
	c := newCommunity(t, 20, 2, 4, 12)
	trained, err := Train(context.Background(), c.k, c.pos, c.neg, Options{Base: c.base, MaxImport: 5})
	if err != nil {
		t.Fatal(err)
	}
	good := trained.State()
	edit := func(f func(*State)) State {
		st := good
		st.Imports, st.Alpha, st.BaseWeights = slices.Clone(good.Imports), slices.Clone(good.Alpha), slices.Clone(good.BaseWeights)
		f(&st)
		return st
	}
	for name, cs := range map[string]struct {
		st   State
		k    kernelmath.KernelMatrix
		base []kernelmath.KernelMatrix
	}{
		"no kernel":           {good, nil, c.base},
		"base kernel missing": {good, c.k, c.base[:1]},
		"alpha short":         {edit(func(s *State) { s.Alpha = s.Alpha[1:] }), c.k, c.base},
		"import out of range": {edit(func(s *State) { s.Imports[2].J = 20 }), c.k, c.base},
		"self import":         {edit(func(s *State) { s.Imports[0].J = s.Imports[0].I }), c.k, c.base},
		"NaN alpha":           {edit(func(s *State) { s.Alpha[1] = math.NaN() }), c.k, c.base},
		"infinite bias":       {edit(func(s *State) { s.Bias = math.Inf(1) }), c.k, c.base},
		"unknown pair":        {edit(func(s *State) { s.Pair = 9 }), c.k, c.base},
		"base of other size":  {good, c.k, []kernelmath.KernelMatrix{c.base[0], denseOf([][]float64{{1, 0}, {0, 1}})}},
	} {
		if _, err := FromState(cs.st, cs.k, cs.base); !errors.Is(err, learners.ErrInput) {
			t.Errorf("%s: %v, want an error wrapping learners.ErrInput", name, err)
		}
	}
}
