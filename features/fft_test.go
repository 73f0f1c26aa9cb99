package features

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// TestFFT checks both transforms against the DFT sum and each other.
func TestFFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]complex128, fftLen)
	for i := range x {
		x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
	}
	y := append([]complex128(nil), x...)
	fftForward(y)
	for k := range fftLen {
		var want complex128
		for n, v := range x {
			want += v * cmplx.Exp(complex(0, -2*math.Pi*float64(n*k)/fftLen))
		}
		if got := y[fftRev[k]]; cmplx.Abs(got-want) > 1e-10 {
			t.Fatalf("X[%d] = %v, want %v", k, got, want)
		}
	}
	fftInverse(y)
	for n := range x {
		if got := y[n] / fftLen; cmplx.Abs(got-x[n]) > 1e-12 {
			t.Fatalf("inverse(forward(x))[%d]/128 = %v, want %v", n, got, x[n])
		}
	}
}
