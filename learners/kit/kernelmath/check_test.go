package kernelmath

import (
	"errors"
	"math"
	"testing"
)

// CheckFinite finds a NaN or an infinity at every position, in the
// four-wide part of its sum and in the tail.
func TestCheckFiniteEveryPosition(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for pos := 0; pos < n; pos++ {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				data := make([]float64, n)
				for i := range data {
					data[i] = float64(i) - 3.5
				}
				if err := CheckFinite("x", data); err != nil {
					t.Fatalf("n=%d: finite data refused: %v", n, err)
				}
				data[pos] = bad
				if err := CheckFinite("x", data); !errors.Is(err, ErrInput) {
					t.Fatalf("n=%d: %v at %d not found (err %v)", n, bad, pos, err)
				}
			}
		}
	}
}
