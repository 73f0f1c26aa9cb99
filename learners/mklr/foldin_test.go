package mklr

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// ScoreNew with a user's own rows gives its scores, and with the rows of a
// point outside the model the formula of the package doc.
func TestScoreNew(t *testing.T) {
	c := newCommunity(t, 40, 4, 6, 11)
	n, d := 40, c.phi.RawMatrix().Cols
	for _, opts := range []Options{
		{Base: c.base},
		{Pair: PairSquared, KernelTerm: true},
		{Pair: PairDifference, NoIntercept: true, Base: c.base},
	} {
		t.Run(opts.Pair.String(), func(t *testing.T) {
			opts.MaxImport, opts.Tol = 12, -1
			m, err := Train(context.Background(), c.k, c.pos, c.neg, opts)
			if err != nil {
				t.Fatal(err)
			}
			k, want, got := make([]float64, n), make([]float64, n), make([]float64, n)
			base := make([][]float64, len(opts.Base))
			for b := range base {
				base[b] = make([]float64, n)
			}
			for i := range n {
				c.k.Row(i, k)
				for b, kb := range opts.Base {
					kb.Row(i, base[b])
				}
				if err := m.ScoreNew(k, base, got); err != nil {
					t.Fatal(err)
				}
				m.ScoreAll(i, want)
				for j := range n {
					near(t, "ScoreNew vs ScoreAll", got[j], want[j], 1e-9)
				}
			}
			// A new point: features drawn like group 1's, and its own
			// extra features for the second base kernel.
			r := rand.New(rand.NewPCG(5, 5))
			x := make([]float64, d)
			for f := range x {
				x[f] = c.phi.At(1, f) + 0.4*r.NormFloat64()
			}
			ex := []float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
			for j := range n {
				k[j] = floats.Dot(x, c.phi.RawRowView(j))
				if len(base) > 0 {
					base[0][j] = floats.Dot(x[:d/2], c.phi.RawRowView(j)[:d/2])
					base[1][j] = floats.Dot(ex, c.extra.RawRowView(j))
				}
			}
			if err := m.ScoreNew(k, base, got); err != nil {
				t.Fatal(err)
			}
			row := func(i int) []float64 { r := make([]float64, n); c.k.Row(i, r); return r }
			for j := range n {
				f := m.Bias() + m.Gamma()*k[j]
				for b, g := range m.BaseWeights() {
					f += g * base[b][j]
				}
				for s, p := range m.Imports() {
					a, b := row(p.I), row(p.J)
					switch opts.Pair {
					case PairTensor:
						f += m.Alpha()[s] * (k[p.I]*b[j] + k[p.J]*a[j])
					case PairDifference:
						f += m.Alpha()[s] * (k[p.I] - k[p.J] - a[j] + b[j])
					default:
						e := k[p.I] - k[p.J] - a[j] + b[j]
						f += m.Alpha()[s] * e * e
					}
				}
				near(t, "ScoreNew vs the formula", got[j], f, 1e-9)
			}
			if err := m.ScoreNew(k[:n-1], base, got); err == nil {
				t.Error("a short row was accepted")
			}
		})
	}
}
