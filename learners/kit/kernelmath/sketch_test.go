package kernelmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// A sketch's inner products estimate the weighted sum of the kernels
// with factored forms, within the Johnson-Lindenstrauss error; a sparse
// symmetric kernel and a weight of 0 are refused and leave z.
func TestSketchEstimatesKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n, m, rank, r = 30, 12, 4, 4000
	var trip []Triplet
	for i := range n {
		for range 3 {
			trip = append(trip, Triplet{I: i, J: rng.IntN(m), V: rng.Float64()})
		}
	}
	g, err := NewGram(n, m, trip)
	if err != nil {
		t.Fatal(err)
	}
	zl := mat.NewDense(n, rank, nil)
	for i := range n {
		for c := range rank {
			zl.Set(i, c, rng.NormFloat64())
		}
	}
	low := NewLowRank(zl)
	scaled := CosineScaled(low)
	z := make([]float64, n*r)
	if !Sketch(z, r, g, 2, rng) || !Sketch(z, r, scaled, 0.5, rng) {
		t.Fatal("a Gram or a scaled low-rank kernel was refused")
	}
	worst := 0.0
	for i := range n {
		for j := range n {
			want := 2*g.At(i, j) + 0.5*scaled.At(i, j)
			got := 0.0
			for c := range r {
				got += z[i*r+c] * z[j*r+c]
			}
			// The JL error of one entry: about sqrt(2/r) |x_i| |x_j|.
			tol := 5 * math.Sqrt(2.0/r) * math.Sqrt((2*g.At(i, i)+0.5*scaled.At(i, i))*(2*g.At(j, j)+0.5*scaled.At(j, j)))
			if math.Abs(got-want) > tol {
				t.Fatalf("(%d, %d): sketch %v, kernel %v (tolerance %v)", i, j, got, want, tol)
			}
			worst = math.Max(worst, math.Abs(got-want)/tol)
		}
	}
	t.Logf("largest error %.2f of the tolerance", worst)
	s, err := NewSparseSym(n, []Triplet{{I: 0, J: 1, V: 1}})
	if err != nil {
		t.Fatal(err)
	}
	before := z[0]
	if Sketch(z, r, s, 1, rng) || Sketch(z, r, g, 0, rng) || z[0] != before {
		t.Error("a sparse symmetric kernel or a zero weight was sketched")
	}
}
