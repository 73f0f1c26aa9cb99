//go:build openblas

package kernelmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// knnLaplacian is the Laplacian of a random geometric graph on n points of
// the plane (each joined to its k nearest), heat-kernel weighted: the low
// end of its spectrum is clustered like the one hsicnpk's rank-m basis takes.
func knnLaplacian(n, k int, seed uint64) *mat.SymDense {
	r := rand.New(rand.NewPCG(seed, 4))
	d := mat.NewSymDense(n, nil)
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = r.Float64(), r.Float64()
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			d.SetSym(i, j, (x[i]-x[j])*(x[i]-x[j])+(y[i]-y[j])*(y[i]-y[j]))
		}
	}
	return NewGraph(n, KNNPairs(d, k, false), func(p Pair) float64 { return math.Exp(-50 * d.At(p.I, p.J)) }).LaplacianDense()
}

// The LAPACK path (dsytrd and dormtr) and the pure-Go path give
// the same eigenvalues to 1e-10 relative and the same eigenspaces: the
// projections onto the wanted vectors agree, and each LAPACK vector has a
// small residual and the set is orthonormal (checkPartial).
func TestPartialEigenLAPACKMatchesGo(t *testing.T) {
	packed := make([]float64, 120)
	for i := range packed { // the wanted 60 at gaps of 1e-6
		if packed[i] = -1 + float64(i)*1e-2; i >= 60 {
			packed[i] = 0.5 + float64(i-60)*1e-6
		}
	}
	g := NewGraph(9, []Pair{{0, 1}, {1, 2}, {3, 4}, {4, 5}, {5, 3}, {6, 7}, {7, 8}}, func(Pair) float64 { return 1 })
	for _, c := range []struct {
		name   string
		a      *mat.SymDense
		lo, hi int
	}{
		{"random 2 low", randomSym(2, 2), 0, 1}, {"random 2 high", randomSym(2, 2), 1, 2},
		{"random 3", randomSym(3, 3), 1, 3}, {"random 40", randomSym(40, 40), 25, 40},
		{"random 200 top", randomSym(200, 1), 130, 200}, {"packed", withSpectrum(packed, 3), 60, 120},
		{"knn laplacian low", knnLaplacian(200, 8, 1), 0, 10}, {"components", g.LaplacianDense(), 0, 4},
		{"zero", mat.NewSymDense(5, nil), 0, 5},
	} {
		var lp, gp PartialEigen
		gp.noLAPACK = true
		checkPartial(t, c.name, &lp, c.a, c.lo, c.hi)
		checkPartial(t, c.name+" (Go)", &gp, c.a, c.lo, c.hi)
		lv, gv := lp.Values(nil), gp.Values(nil)
		n := len(lv)
		scale := math.Max(math.Abs(gv[0]), math.Abs(gv[n-1]))
		for i := range lv {
			if d := math.Abs(lv[i] - gv[i]); d > 1e-10*scale {
				t.Fatalf("%s: eigenvalue %d: LAPACK %g, Go %g", c.name, i, lv[i], gv[i])
			}
		}
		var lz, gz mat.Dense
		if err := lp.VectorsTo(&lz, c.lo, c.hi); err != nil {
			t.Fatal(err)
		}
		if err := gp.VectorsTo(&gz, c.lo, c.hi); err != nil {
			t.Fatal(err)
		}
		// Equal eigenvalues make the vectors free within their eigenspace,
		// so compare V V^T, unless the range cuts through a cluster.
		var lpr, gpr mat.Dense
		lpr.Mul(&lz, lz.T())
		gpr.Mul(&gz, gz.T())
		if !mat.EqualApprox(&lpr, &gpr, 1e-8) {
			t.Errorf("%s: LAPACK and Go eigenspaces differ", c.name)
		}
	}
}

// BenchmarkPartialEigenBackends times the LAPACK path against the pure-Go one
// at n = 200 in the same binary: eigenvalues only (a line-search trial),
// with the 70 top vectors (a PSD projection at full rank) and the 10 lowest
// of a kNN Laplacian (hsicnpk's rank-10 basis).
func BenchmarkPartialEigenBackends(b *testing.B) {
	top := withSpectrum(func() []float64 {
		v := make([]float64, 200)
		for i := range v {
			v[i] = float64(i-130) / 10
		}
		return v
	}(), 1)
	lap := knnLaplacian(200, 8, 1)
	for _, c := range []struct {
		name   string
		a      *mat.SymDense
		lo, hi int
	}{{"values", top, 0, 0}, {"top70", top, 130, 200}, {"laplacian-low10", lap, 0, 10}} {
		for _, goPath := range []bool{false, true} {
			name := c.name + "/lapack"
			if goPath {
				name = c.name + "/go"
			}
			b.Run(name, func(b *testing.B) {
				pe := PartialEigen{noLAPACK: goPath}
				var v mat.Dense
				b.ReportAllocs()
				for b.Loop() {
					if err := pe.Factorize(c.a); err != nil {
						b.Fatal(err)
					}
					if c.hi > c.lo {
						v.Reset()
						if err := pe.VectorsTo(&v, c.lo, c.hi); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
