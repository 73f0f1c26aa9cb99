//go:build !purego

package vecmath

import "golang.org/x/sys/cpu"

// fma reports whether the CPU has AVX2 and FMA (and the OS saves the YMM
// registers, which cpu checks).
var fma = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func axpyFMA(a float64, x, y []float64)

//go:noescape
func dotFMA(x, y []float64) float64

//go:noescape
func rank2DotAxpyFMA(x, u, w, v, y []float64, a, b, c float64) float64

//go:noescape
func reflect4FMA(tau float64, v, z0, z1, z2, z3 []float64)

//go:noescape
func rank2x2DotAxpyFMA(x1, x2, u, w, v, y []float64, a1, b1, c1, a2, b2, c2 float64) (d1, d2 float64)
