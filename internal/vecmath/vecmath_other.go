//go:build !amd64 || purego

package vecmath

const fma = false

func axpyFMA(a float64, x, y []float64) { panic("vecmath: no FMA kernel on this platform") }

func dotFMA(x, y []float64) float64 { panic("vecmath: no FMA kernel on this platform") }

func rank2DotAxpyFMA(x, u, w, v, y []float64, a, b, c float64) float64 {
	panic("vecmath: no FMA kernel on this platform")
}

func reflect4FMA(tau float64, v, z0, z1, z2, z3 []float64) {
	panic("vecmath: no FMA kernel on this platform")
}

func rank2x2DotAxpyFMA(x1, x2, u, w, v, y []float64, a1, b1, c1, a2, b2, c2 float64) (d1, d2 float64) {
	panic("vecmath: no FMA kernel on this platform")
}
