//go:build !purego

package learners

import "golang.org/x/sys/cpu"

// hasAVX reports whether the CPU has AVX (and the OS saves the YMM
// registers, which cpu checks).
var hasAVX = cpu.X86.HasAVX

//go:noescape
func axpyAVX(a float64, x, y []float64)
