package kernelmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// A Gram's sparse rows add up to its rows, under every scaling, in as
// many visits as their cost says; kernels that are not Grams are refused.
func TestSparseRowsMatchRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 60
	g, _ := randomGram(n, 25, 0.15, r)
	z := mat.NewDense(n, 5, nil)
	for i := range n {
		for c := range 5 {
			z.Set(i, c, r.NormFloat64())
		}
	}
	c := make([]float64, n)
	for i := range c {
		c[i] = 0.6
	}
	constG, err := RowScaled(g, c)
	if err != nil {
		t.Fatal(err)
	}
	for k, km := range []KernelMatrix{g, constG, CosineScaled(g)} {
		row, cost, ok := SparseRows(km)
		if !ok {
			t.Fatalf("Gram %d (%T) refused", k, km)
		}
		for i := range n {
			got, want := make([]float64, n), make([]float64, n)
			visits := 0
			row(i, func(j int, v float64) { got[j] += v; visits++ })
			if visits != cost(i) {
				t.Fatalf("Gram %d: row %d visits %d entries, its cost says %d", k, i, visits, cost(i))
			}
			km.Row(i, want)
			for j := range n {
				if math.Abs(got[j]-want[j]) > 1e-12*math.Max(1, math.Abs(want[j])) {
					t.Fatalf("Gram %d: row %d, entry %d: %v, want %v", k, i, j, got[j], want[j])
				}
			}
		}
	}
	sparse, _ := randomSparse(n, 0.1, r)
	shifted := CosineScaled(g).Shifted(0.5)
	sum, err := NewKernelSum([]float64{1, 1}, []KernelMatrix{g, g})
	if err != nil {
		t.Fatal(err)
	}
	for _, km := range []KernelMatrix{NewLowRank(z), sparse, shifted, sum, DenseKernel{Linear(z)}} {
		if _, _, ok := SparseRows(km); ok {
			t.Errorf("%T is not a Gram but was accepted", km)
		}
	}
}
