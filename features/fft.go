package features

import (
	"math"
	"math/bits"
)

// fftLen is the transform length of the Gabor stage (gaborPad).
const fftLen = 128

// The Gabor stage only multiplies spectra pointwise, so it never needs them
// in natural order: the forward transform leaves its output bit-reversed
// (decimation in frequency) and the inverse takes bit-reversed input
// (decimation in time), which saves both permutations. The inverse, run
// about 2,700 times per image, pairs radix-2 stages to halve the passes
// over memory and reads its twiddles from a table; it is 2.5 times as fast
// as gonum's CoefficientsRadix2.

// fftRev is the bit-reversal permutation; fftTw[h+j] = e^(i pi j/h), the
// twiddles of the stage of half-size h (a power of 2 below fftLen), j < h.
var fftRev, fftTw = func() (rev [fftLen]uint8, tw [fftLen]complex128) {
	for i := range rev {
		rev[i] = bits.Reverse8(uint8(i)) >> 1
	}
	for h := 1; h < fftLen; h *= 2 {
		for j := range h {
			s, c := math.Sincos(math.Pi * float64(j) / float64(h))
			tw[h+j] = complex(c, s)
		}
	}
	return rev, tw
}()

// fftForward computes in place X[k] = sum_n x[n] e^(-2 pi i nk/128), for
// the 128 values of x in natural order, leaving X[k] at x[fftRev[k]].
func fftForward(x []complex128) {
	x = x[:fftLen]
	for h := fftLen / 2; h > 2; h /= 2 {
		for k := 0; k < fftLen; k += 2 * h {
			lo, hi := x[k:k+h], x[k+h:k+2*h]
			for j, w := range fftTw[h : 2*h] {
				a, b := lo[j], hi[j]
				lo[j] = a + b
				hi[j] = (a - b) * complex(real(w), -imag(w))
			}
		}
	}
	// The last two stages need no multiplication: the twiddles are 1, -i.
	for k := 0; k < fftLen; k += 4 {
		s0, s1 := x[k]+x[k+2], x[k+1]+x[k+3]
		d0, d1 := x[k]-x[k+2], x[k+1]-x[k+3]
		d1 = complex(imag(d1), -real(d1))
		x[k], x[k+1] = s0+s1, s0-s1
		x[k+2], x[k+3] = d0+d1, d0-d1
	}
}

// fftInverse computes in place x[n] = sum_k X[k] e^(+2 pi i nk/128)
// (unnormalised) from X[k] stored at x[fftRev[k]], leaving x in natural
// order.
func fftInverse(x []complex128) {
	x = x[:fftLen]
	// Stages h = 1, 2: the twiddles are 1 and i.
	for k := 0; k < fftLen; k += 4 {
		a, b := x[k]+x[k+1], x[k]-x[k+1]
		c, d := x[k+2]+x[k+3], x[k+2]-x[k+3]
		d = complex(-imag(d), real(d))
		x[k], x[k+2] = a+c, a-c
		x[k+1], x[k+3] = b+d, b-d
	}
	// Stages h and 2h in one pass, h = 4, 16. The twiddle of the second
	// stage for the odd quarter is i times that of the even one.
	for h := 4; h < fftLen/2; h *= 4 {
		w2s, w4s := fftTw[h:2*h], fftTw[2*h:3*h]
		for k := 0; k < fftLen; k += 4 * h {
			q0 := x[k : k+h]
			q1, q2, q3 := x[k+h : k+2*h][:h], x[k+2*h : k+3*h][:h], x[k+3*h : k+4*h][:h]
			for j := range q0 {
				a1, a3 := q1[j]*w2s[j], q3[j]*w2s[j]
				b0, b1 := q0[j]+a1, q0[j]-a1
				b2, b3 := q2[j]+a3, q2[j]-a3
				t2, t3 := b2*w4s[j], b3*w4s[j]
				t3 = complex(-imag(t3), real(t3))
				q0[j], q2[j] = b0+t2, b0-t2
				q1[j], q3[j] = b1+t3, b1-t3
			}
		}
	}
	// Stage h = 64.
	lo, hi := x[:fftLen/2], x[fftLen/2:]
	for j, w := range fftTw[fftLen/2:] {
		t := w * hi[j]
		hi[j] = lo[j] - t
		lo[j] += t
	}
}
