package features

import (
	"image"
	"math"
)

// ColorDim is the length of the ColorMoments block.
const ColorDim = 3 * 3 * 3 * 3

// ColorMoments returns the grid colour moments of img: the image is cut into
// a 3x3 grid (cells in row-major order, top-left first) and for each cell and
// each of R, G, B (in [0,1]) it gives the mean, the standard deviation and
// the skewness, in that order. Index: ((cellRow*3+cellCol)*3+channel)*3+moment.
//
// Deviation and skewness are population moments taken as roots so that all
// three have the units of the channel: std = (E[(x-m)^2])^(1/2) and
// skew = cbrt(E[(x-m)^3]), signed.
//
// Cell boundaries along an axis of n pixels are floor(i*n/3); when n < 3 a
// cell that would be empty takes the single pixel at its start, so every cell
// is defined for any image size.
func ColorMoments(img image.Image) []float64 {
	v := make([]float64, ColorDim)
	if r := newRaster(img); r.w > 0 && r.h > 0 {
		colorMoments(r, v)
	}
	return v
}

func colorMoments(r *raster, dst []float64) {
	planes := [3][]float32{r.r, r.g, r.b}
	for cy := 0; cy < 3; cy++ {
		y0, y1 := gridCell(r.h, cy)
		for cx := 0; cx < 3; cx++ {
			x0, x1 := gridCell(r.w, cx)
			n := float64((y1 - y0) * (x1 - x0))
			for c, p := range planes {
				var sum float64
				for y := y0; y < y1; y++ {
					for _, v := range p[y*r.w+x0 : y*r.w+x1] {
						sum += float64(v)
					}
				}
				mean := sum / n
				var m2, m3 float64
				for y := y0; y < y1; y++ {
					for _, v := range p[y*r.w+x0 : y*r.w+x1] {
						d := float64(v) - mean
						m2 += d * d
						m3 += d * d * d
					}
				}
				o := ((cy*3+cx)*3 + c) * 3
				dst[o] = mean
				dst[o+1] = math.Sqrt(m2 / n)
				dst[o+2] = math.Cbrt(m3 / n)
			}
		}
	}
}

// gridCell returns the pixel range [lo, hi) of cell i of 3 along n pixels.
func gridCell(n, i int) (lo, hi int) {
	lo, hi = i*n/3, (i+1)*n/3
	return lo, max(hi, lo+1)
}
