//go:build !amd64 || purego

package learners

const hasAVX = false

func axpyAVX(a float64, x, y []float64) { panic("learners: no AVX kernel on this platform") }
