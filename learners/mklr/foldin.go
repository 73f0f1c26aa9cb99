package mklr

import (
	"fmt"

	"gonum.org/v1/gonum/floats"
)

// ScoreNew sets dst[j] = f(x, j) for a point x outside the model and
// every user j, from x's rows against the model's users: k = K_u(x, .)
// and base[t] = K^t(x, .) of the base kernels the model was trained with
// (Options.Base, in order). x's features are k at the imports' users, as
// a user's are its row's. With a user's own rows it repeats ScoreAll's
// arithmetic but for the order of the kernel terms' sums, so the two
// agree to rounding.
func (m *Model) ScoreNew(k []float64, base [][]float64, dst []float64) error {
	if len(k) != m.n || len(dst) != m.n || len(base) != len(m.baseW) {
		return fmt.Errorf("mklr: rows of %d and %d base rows for %d users and %d base kernels", len(k), len(base), m.n, len(m.baseW))
	}
	for t, r := range base {
		if len(r) != m.n {
			return fmt.Errorf("mklr: base row %d has %d entries for %d users", t, len(r), m.n)
		}
	}
	clear(dst)
	if m.kernelTerm {
		floats.AddScaled(dst, m.gamma, k)
	}
	for t, g := range m.baseW {
		floats.AddScaled(dst, g, base[t])
	}
	if m.feat == nil {
		m.addPairs(nil, m.bias, dst)
		return nil
	}
	// x's feature row and its part of the sum, as setFeatures forms a
	// user's.
	fx := make([]float64, m.feat.RawMatrix().Cols)
	quad := 0.0
	for s, p := range m.imports {
		if m.pair == PairTensor {
			fx[2*s], fx[2*s+1] = k[p.I], k[p.J]
			continue
		}
		e := k[p.I] - k[p.J]
		fx[s] = e
		if m.pair == PairSquared {
			quad += m.alpha[s] * e * e
		} else {
			quad += m.alpha[s] * e
		}
	}
	m.addPairs(fx, m.bias+quad, dst)
	return nil
}
