package kernelmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestScratchLengthsAndCapacities(t *testing.T) {
	for _, n := range []int{1, 2, 3, 1000, 1024, 1025, 40000} {
		b := Scratch(n)
		if len(b) != n || cap(b) < n || cap(b)&(cap(b)-1) != 0 {
			t.Fatalf("Scratch(%d): len %d cap %d", n, len(b), cap(b))
		}
		Release(b)
	}
	if Scratch(0) != nil {
		t.Error("Scratch(0) is not nil")
	}
	Release(make([]float64, 3)) // not from Scratch: ignored, no panic
}

// dirtySym returns an n x n matrix whose storage came back from the pools
// filled with NaN, as a recycled workspace can be (when the pool hands the
// same buffer back, which sync.Pool usually does on one goroutine).
func dirtySym(n int) *mat.SymDense {
	b := Scratch(n * n)
	for i := range b {
		b[i] = math.NaN()
	}
	Release(b)
	return ScratchSym(n)
}

// The Into forms write every entry they promise, whatever the storage held,
// and equal their allocating forms to the bit.
func TestIntoFormsOverwriteRecycledStorage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for _, density := range []float64{0.05, 1} { // the sparse and the dense Gram
		x := mat.NewDense(40, 30, nil)
		for i := 0; i < 40; i++ {
			for j := 0; j < 30; j++ {
				if r.Float64() < density {
					x.Set(i, j, r.NormFloat64())
				}
			}
		}
		want := SqDistances(x)
		got := dirtySym(40)
		SqDistancesInto(got, x)
		if !mat.Equal(got, want) {
			t.Fatalf("density %g: SqDistancesInto differs from SqDistances", density)
		}
		ReleaseSym(got)

		k := Linear(x)
		wantC := Center(k)
		gotC := dirtySym(40)
		CenterInto(gotC, k)
		if !mat.Equal(gotC, wantC) {
			t.Fatalf("density %g: CenterInto differs from Center", density)
		}
		ReleaseSym(gotC)
		// Center against H K H formed by matrix products.
		h := mat.NewDense(40, 40, nil)
		for i := 0; i < 40; i++ {
			for j := 0; j < 40; j++ {
				h.Set(i, j, -1.0/40)
			}
			h.Set(i, i, 1-1.0/40)
		}
		var hk, hkh mat.Dense
		hk.Mul(h, k)
		hkh.Mul(&hk, h)
		scale := mat.Norm(k, math.Inf(1))
		for i := 0; i < 40; i++ {
			for j := 0; j < 40; j++ {
				if d := math.Abs(wantC.At(i, j) - hkh.At(i, j)); d > 1e-12*scale {
					t.Fatalf("density %g: Center(%d,%d) = %g, H K H = %g", density, i, j, wantC.At(i, j), hkh.At(i, j))
				}
			}
		}
	}
}

// SparseGramInto adds the products of each pair's shared non-zeros in
// increasing column order, as a merge of the two rows does: the same bits.
func TestSparseGramIntoEqualsRowMerges(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	n, d := 30, 50
	ptr := make([]int, n+1)
	var idx []int
	var val []float64
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			if r.Float64() < 0.15 {
				idx = append(idx, k)
				val = append(val, r.NormFloat64())
			}
		}
		ptr[i+1] = len(idx)
	}
	got := dirtySym(n)
	SparseGramInto(got, d, ptr, idx, val)
	raw := got.RawSymmetric()
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			want := 0.0
			if j >= i {
				for p, q := ptr[i], ptr[j]; p < ptr[i+1] && q < ptr[j+1]; {
					switch {
					case idx[p] < idx[q]:
						p++
					case idx[p] > idx[q]:
						q++
					default:
						want += val[q] * val[p]
						p++
						q++
					}
				}
			}
			if g := raw.Data[i*raw.Stride+j]; g != want {
				t.Fatalf("(%d,%d) = %v, want %v (lower triangle 0)", i, j, g, want)
			}
		}
	}
}
