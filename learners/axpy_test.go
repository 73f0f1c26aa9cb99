package learners

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// addScaled is gonum's AddScaled to the bit at every length up to 70 (each
// path of the kernel, and offsets into longer slices).
func TestAddScaledEqualsGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 1))
	for n := 0; n <= 70; n++ {
		for _, off := range []int{0, 1, 3} {
			x := make([]float64, n+off)
			y := make([]float64, n+off+2)
			for i := range x {
				x[i] = r.NormFloat64() * 1e3
			}
			for i := range y {
				y[i] = r.NormFloat64()
			}
			a := r.NormFloat64()
			want := slices.Clone(y)
			floats.AddScaled(want[off:off+n], a, x[off:])
			got := slices.Clone(y)
			addScaled(got[off:], a, x[off:])
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d off=%d: addScaled differs from floats.AddScaled (AVX %v)", n, off, hasAVX)
			}
		}
	}
}
