package kernelmath

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestStandardize(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{1, 5, 2, 5, 3, 5})
	z, mean, std := Standardize(x)
	// Column 0: mean 2, sample deviation 1; column 1 is constant.
	for i, want := range []float64{-1, 0, 1} {
		near(t, "z[i][0]", z.At(i, 0), want, 1e-15)
		near(t, "z[i][1]", z.At(i, 1), 0, 0)
	}
	near(t, "mean 0", mean[0], 2, 0)
	near(t, "std 0", std[0], 1, 0)
	near(t, "mean 1", mean[1], 5, 0)
	near(t, "std 1", std[1], 0, 0)
}

func TestMKLBaseKernelsByHand(t *testing.T) {
	// Two points (0, 0) and (1, 2).
	x := mat.NewDense(2, 2, []float64{0, 0, 1, 2})
	ks := MKLBaseKernels(x)
	if len(ks) != 13*3 {
		t.Fatalf("%d kernels, want 39", len(ks))
	}
	for i, k := range ks {
		near(t, "trace", k.At(0, 0)+k.At(1, 1), 1, 1e-15)
		if i == 3 { // all features, sigma = 1: exp(-5/2) / 2
			near(t, "gaussian sigma=1 off-diagonal", k.At(0, 1), math.Exp(-2.5)/2, 1e-15)
		}
	}
	// Feature 1 (values 0 and 2), degree 2: (x y + 1)^2 = [[1, 1], [1, 25]],
	// trace 26; it is kernel 2*13 + 10 + 1.
	k := ks[37]
	near(t, "poly q=2 on feature 1 (1,1)", k.At(1, 1), 25.0/26, 1e-15)
	near(t, "poly q=2 on feature 1 (0,1)", k.At(0, 1), 1.0/26, 1e-15)
	// Feature 0, sigma = 1/8: exp(-1 * 32) / 2.
	near(t, "gaussian sigma=1/8 on feature 0", ks[13].At(0, 1), math.Exp(-32)/2, 1e-30)
}
