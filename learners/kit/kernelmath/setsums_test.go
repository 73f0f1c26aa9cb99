package kernelmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// A set's sum from the kept feature sums equals the sum of the kernel's
// entries over its members, for every factored form and scaling; a Gram's
// sparse rows equal its rows; kernels without a feature map are refused.
func TestSetSumsMatchEntries(t *testing.T) {
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
	sets := [][]int{{}, {3}, {0, 1, 2, 3, 4, 5, 6, 7}, {10, 20, 30, 40, 50, 59}}
	for set := range 3 {
		var s []int
		for j := range n {
			if r.IntN(3) == set {
				s = append(s, j)
			}
		}
		sets = append(sets, s)
	}
	for k, km := range []KernelMatrix{g, constG, CosineScaled(g), NewLowRank(z), CosineScaled(NewLowRank(z))} {
		ss, ok := NewSetSums(km, sets)
		if !ok || ss.Sets() != len(sets) {
			t.Fatalf("kernel %d (%T) refused", k, km)
		}
		got := make([]float64, len(sets))
		for i := range n {
			clear(got)
			ss.AddAll(i, 1.5, got)
			for s, users := range sets {
				want := 0.0
				for _, j := range users {
					want += 1.5 * km.At(i, j)
				}
				if math.Abs(got[s]-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Fatalf("kernel %d, user %d, set %d: %v, want %v", k, i, s, got[s], want)
				}
			}
		}
	}
	for k, km := range []KernelMatrix{g, constG, CosineScaled(g)} {
		row, ok := SparseRows(km)
		if !ok {
			t.Fatalf("Gram %d (%T) refused", k, km)
		}
		for i := range n {
			got, want := make([]float64, n), make([]float64, n)
			row(i, func(j int, v float64) { got[j] += v })
			km.Row(i, want)
			for j := range n {
				if math.Abs(got[j]-want[j]) > 1e-12*math.Max(1, math.Abs(want[j])) {
					t.Fatalf("Gram %d: row %d, entry %d: %v, want %v", k, i, j, got[j], want[j])
				}
			}
		}
	}
	if _, ok := SparseRows(NewLowRank(z)); ok {
		t.Error("a low-rank kernel has no sparse rows but was accepted")
	}
	sparse, _ := randomSparse(n, 0.1, r)
	shifted := CosineScaled(g).Shifted(0.5)
	sum, err := NewKernelSum([]float64{1, 1}, []KernelMatrix{g, g})
	if err != nil {
		t.Fatal(err)
	}
	for _, km := range []KernelMatrix{sparse, shifted, sum, DenseKernel{Linear(z)}} {
		if _, ok := NewSetSums(km, sets); ok {
			t.Errorf("%T has no feature map but was accepted", km)
		}
	}
}
