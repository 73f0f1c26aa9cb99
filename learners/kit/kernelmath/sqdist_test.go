package kernelmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestSparseGramMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, density := range []float64{0.02, 0.1, 0.5} {
		x := mat.NewDense(30, 60, nil)
		for i := 0; i < 30; i++ {
			for j := 0; j < 60; j++ {
				if r.Float64() < density {
					x.Set(i, j, r.NormFloat64())
				}
			}
		}
		got := sparseGram(x, nil)
		if (got == nil) != (density > 0.125) {
			t.Fatalf("density %g: sparse path taken = %v", density, got != nil)
		}
		if got == nil {
			continue
		}
		var want mat.Dense
		want.Mul(x, x.T())
		for i := 0; i < 30; i++ {
			for j := 0; j < 30; j++ {
				if d := math.Abs(got.At(i, j) - want.At(i, j)); d > 1e-12*math.Max(1, math.Abs(want.At(i, j))) {
					t.Fatalf("density %g: G(%d,%d) = %g, want %g", density, i, j, got.At(i, j), want.At(i, j))
				}
			}
		}
	}
	// By hand: rows (1,0,0), (0,2,0), (0,0,0): squared distances 5, 1, 4.
	d := SqDistances(mat.NewDense(3, 3, []float64{1, 0, 0, 0, 2, 0, 0, 0, 0}))
	for _, c := range []struct {
		i, j int
		want float64
	}{{0, 1, 5}, {0, 2, 1}, {1, 2, 4}, {1, 1, 0}} {
		if d.At(c.i, c.j) != c.want {
			t.Fatalf("d(%d,%d) = %g, want %g", c.i, c.j, d.At(c.i, c.j), c.want)
		}
	}
}

// The kernels a caller makes from one Gram matrix are, bit for bit, those
// made from the features: the squared distances (KernelDistancesInto of
// X X^T against SqDistances) and the polynomial kernel (PolynomialOfGram
// against (1 + x.y)^2 summed here by hand), on dense and sparse features.
func TestKernelsOfOneGram(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for _, density := range []float64{0.05, 1} {
		x := mat.NewDense(25, 40, nil)
		for i := 0; i < 25; i++ {
			for j := 0; j < 40; j++ {
				if r.Float64() < density {
					x.Set(i, j, r.NormFloat64())
				}
			}
		}
		gram := Linear(x)
		d := mat.NewSymDense(25, nil)
		KernelDistancesInto(d, gram)
		want := SqDistances(x)
		poly := PolynomialOfGram(gram, 2, 1)
		for i := 0; i < 25; i++ {
			for j := i; j < 25; j++ {
				if d.At(i, j) != want.At(i, j) {
					t.Fatalf("density %g: distance (%d,%d) %v from the Gram, %v from the features", density, i, j, d.At(i, j), want.At(i, j))
				}
				dot := mat.Dot(x.RowView(i), x.RowView(j))
				if p := (1 + dot) * (1 + dot); math.Abs(poly.At(i, j)-p) > 1e-12*p {
					t.Fatalf("density %g: poly (%d,%d) = %v, want %v", density, i, j, poly.At(i, j), p)
				}
			}
		}
	}
}
