package features

import (
	"image"
	"math/bits"
)

// LBPDim is the length of the LBP block: 58 uniform patterns + 1.
const LBPDim = 59

// LBP returns the uniform LBP(8,1) histogram of img's grey image.
//
// Each interior pixel (not on the image border) gets an 8-bit code from its
// 3x3 ring, read clockwise from the top-left neighbour: bit p (weight 2^p)
// is set when neighbour p >= centre, with p = 0 top-left, 1 top, 2 top-right,
// 3 right, 4 bottom-right, 5 bottom, 6 bottom-left, 7 left. A flat region
// therefore gives 255. Codes with at most 2 circular 0/1 transitions are
// uniform (58 of them) and get bins 0..57 in increasing code value (0 -> bin
// 0, 1 -> 1, 2 -> 2, 3 -> 3, 4 -> 4, 6 -> 5, ..., 62 -> 20, ..., 254 -> 56,
// 255 -> 57); bin 58 counts all other codes. The histogram sums to 1, or is
// all zero when the image has no interior pixel (width or height < 3).
func LBP(img image.Image) []float64 {
	v := make([]float64, LBPDim)
	if r := newRaster(img); r.w > 0 && r.h > 0 {
		lbp(r, v)
	}
	return v
}

// lbpBin maps an LBP code to its histogram bin.
var lbpBin = func() (t [256]uint8) {
	next := uint8(0)
	for c := range 256 {
		if bits.OnesCount8(uint8(c)^bits.RotateLeft8(uint8(c), 1)) <= 2 {
			t[c] = next
			next++
		} else {
			t[c] = LBPDim - 1
		}
	}
	return t
}()

func lbp(r *raster, dst []float64) {
	w, h, g := r.w, r.h, r.y
	if w < 3 || h < 3 {
		return
	}
	var hist [LBPDim]int
	for y := 1; y < h-1; y++ {
		up, mid, down := g[(y-1)*w:y*w], g[y*w:(y+1)*w], g[(y+1)*w:(y+2)*w]
		for x := 1; x < w-1; x++ {
			c := mid[x]
			code := ge(up[x-1], c) | ge(up[x], c)<<1 | ge(up[x+1], c)<<2 | ge(mid[x+1], c)<<3 |
				ge(down[x+1], c)<<4 | ge(down[x], c)<<5 | ge(down[x-1], c)<<6 | ge(mid[x-1], c)<<7
			hist[lbpBin[code]]++
		}
	}
	n := float64((w - 2) * (h - 2))
	for i, c := range hist {
		dst[i] = float64(c) / n
	}
}

// ge is 1 if a >= b, else 0; written so the compiler emits a flag set, not
// a branch, which mispredicts half the time on texture.
func ge(a, b float32) uint8 {
	var r uint8
	if a >= b {
		r = 1
	}
	return r
}
