package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestKernels checks both kernels at every length up to 70 (each path of
// the unrolled loops and their tails) against plain Go loops, to the
// rounding of one fused multiply-add per term, and that AddScaled leaves
// dst past len(x) alone.
func TestKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 70; n++ {
		x := make([]float64, n)
		y := make([]float64, n+3)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		for i := range y {
			y[i] = r.NormFloat64()
		}
		a := r.NormFloat64()
		want := append([]float64(nil), y...)
		bound := 0.0
		for i := range x {
			want[i] += a * x[i]
			bound += math.Abs(x[i] * y[i])
		}
		dot, wantDot := Dot(x, y[:n]), 0.0
		for i := range x {
			wantDot += x[i] * y[i]
		}
		if math.Abs(dot-wantDot) > float64(n+1)*0x1p-52*bound {
			t.Errorf("n=%d: Dot = %v, want %v", n, dot, wantDot)
		}
		AddScaled(y, a, x)
		for i := range y {
			tol := 2 * 0x1p-52 * (math.Abs(want[i]) + math.Abs(a*x0(x, i)))
			if math.Abs(y[i]-want[i]) > tol {
				t.Errorf("n=%d: AddScaled y[%d] = %v, want %v", n, i, y[i], want[i])
			}
		}
		for i := n; i < len(y); i++ {
			if y[i] != want[i] {
				t.Errorf("n=%d: AddScaled wrote y[%d] past len(x)", n, i)
			}
		}
	}
}

func x0(x []float64, i int) float64 {
	if i < len(x) {
		return x[i]
	}
	return 0
}

// normal is n standard normal draws from r.
func normal(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return x
}

// TestRank2DotAxpy checks the fused kernel at every length up to 70 against
// the three separate passes it replaces, written as plain loops.
func TestRank2DotAxpy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vec := func(n int) []float64 { return normal(r, n) }
	for n := 0; n <= 70; n++ {
		x, u, w, v, y := vec(n), vec(n), vec(n), vec(n), vec(n)
		a, b, c := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
		wantX, wantY := append([]float64(nil), x...), append([]float64(nil), y...)
		wantDot, scale := 0.0, 0.0
		for i := range wantX {
			wantX[i] = wantX[i] - a*u[i] - b*w[i]
			wantY[i] += c * wantX[i]
			wantDot += wantX[i] * v[i]
			scale += math.Abs(wantX[i]*v[i]) + math.Abs(a*u[i]*v[i]) + math.Abs(b*w[i]*v[i])
		}
		dot := Rank2DotAxpy(x, u, w, v, y, a, b, c)
		if math.Abs(dot-wantDot) > float64(n+3)*0x1p-52*scale {
			t.Errorf("n=%d: dot = %v, want %v", n, dot, wantDot)
		}
		for i := range x {
			tx := 4 * 0x1p-52 * (math.Abs(x[i]) + math.Abs(a*u[i]) + math.Abs(b*w[i]))
			if math.Abs(x[i]-wantX[i]) > tx {
				t.Errorf("n=%d: x[%d] = %v, want %v", n, i, x[i], wantX[i])
			}
			if ty := 4*0x1p-52*(math.Abs(y[i])+math.Abs(c*x[i])) + math.Abs(c)*tx; math.Abs(y[i]-wantY[i]) > ty {
				t.Errorf("n=%d: y[%d] = %v, want %v", n, i, y[i], wantY[i])
			}
		}
	}
}

// Rank2x2DotAxpy gives, bit for bit, what Rank2DotAxpy gives on x1 and
// then on x2 with the same y (every length up to 70: each path of the
// unrolled loops and their tails).
func TestRank2x2DotAxpy(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vec := func(n int) []float64 { return normal(r, n) }
	for n := 0; n <= 70; n++ {
		x1, x2, u, w, v, y := vec(n), vec(n), vec(n), vec(n), vec(n), vec(n)
		a1, b1, c1 := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
		a2, b2, c2 := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
		wx1, wx2, wy := slices.Clone(x1), slices.Clone(x2), slices.Clone(y)
		wd1 := Rank2DotAxpy(wx1, u, w, v, wy, a1, b1, c1)
		wd2 := Rank2DotAxpy(wx2, u, w, v, wy, a2, b2, c2)
		d1, d2 := Rank2x2DotAxpy(x1, x2, u, w, v, y, a1, b1, c1, a2, b2, c2)
		if d1 != wd1 || d2 != wd2 || !slices.Equal(x1, wx1) || !slices.Equal(x2, wx2) || !slices.Equal(y, wy) {
			t.Errorf("n=%d: dots %v, %v against %v, %v, or the updated rows differ", n, d1, d2, wd1, wd2)
		}
	}
}

// TestLengthMismatchPanics: the assembly trusts the lengths, so the
// wrappers must refuse what would read or write out of bounds.
func TestLengthMismatchPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Dot":       func() { Dot(make([]float64, 3), make([]float64, 2)) },
		"AddScaled": func() { AddScaled(make([]float64, 2), 1, make([]float64, 3)) },
		"Rank2DotAxpy": func() {
			x := make([]float64, 3)
			Rank2DotAxpy(x, x, x, x, x[:2], 1, 1, 1)
		},
		"Rank2x2DotAxpy": func() {
			x := make([]float64, 3)
			Rank2x2DotAxpy(x, x[:2], x, x, x, x, 1, 1, 1, 1, 1, 1)
		},
		"Reflect4": func() {
			x := make([]float64, 3)
			Reflect4(1, x, x, x, x[:2], x)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with short slices did not panic", name)
				}
			}()
			f()
		}()
	}
}

// BenchmarkKernels compares the kernels with gonum's at the lengths the
// tridiagonal reduction of a 200 x 200 matrix works on.
func BenchmarkKernels(b *testing.B) {
	for _, n := range []int{16, 67, 200} {
		x := make([]float64, n)
		y := make([]float64, n)
		for i := range x {
			x[i], y[i] = float64(i), 1/float64(i+1)
		}
		b.Run(fmt.Sprintf("AddScaled/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				AddScaled(y, 1e-9, x)
			}
		})
		b.Run(fmt.Sprintf("gonum-AddScaled/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				floats.AddScaled(y, 1e-9, x)
			}
		})
		var s float64
		b.Run(fmt.Sprintf("Dot/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				s += Dot(x, y)
			}
		})
		b.Run(fmt.Sprintf("gonum-Dot/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				s += floats.Dot(x, y)
			}
		})
	}
}
