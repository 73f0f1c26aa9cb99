package features

import (
	"image"
	"math"
)

// maxWorkPixels bounds the resolution the features are computed at. Larger
// images are area-averaged down first, keeping the aspect ratio: the raster
// and the Canny stage hold eight float32 planes, which at 50 megapixels
// would be 1.6 GB per request. 2^21 pixels still holds 1920x1080 unscaled.
const maxWorkPixels = 1 << 21

// raster is an image composited onto white, one float32 plane per channel,
// row-major, values in [0,1].
type raster struct {
	w, h    int
	r, g, b []float32
	y       []float32 // ITU-R 601 luma
}

func newRaster(img image.Image) *raster {
	bnd := img.Bounds()
	sw, sh := bnd.Dx(), bnd.Dy()
	if sw <= 0 || sh <= 0 {
		return &raster{}
	}
	w, h := sw, sh
	if int64(sw)*int64(sh) > maxWorkPixels {
		s := math.Sqrt(maxWorkPixels / (float64(sw) * float64(sh)))
		w = min(max(int(float64(sw)*s), 1), sw)
		h = min(max(maxWorkPixels/w, 1), sh)
	}
	n := w * h
	buf := make([]float32, 4*n)
	r := &raster{w: w, h: h, r: buf[:n:n], g: buf[n : 2*n : 2*n], b: buf[2*n : 3*n : 3*n], y: buf[3*n:]}
	if w == sw && h == sh {
		for y := 0; y < h; y++ {
			o := y * w
			readRow(img, bnd.Min.X, bnd.Min.Y+y, r.r[o:o+w], r.g[o:o+w], r.b[o:o+w])
		}
	} else {
		r.downscale(img)
	}
	for i := range r.y {
		r.y[i] = 0.299*r.r[i] + 0.587*r.g[i] + 0.114*r.b[i]
	}
	return r
}

// readRow converts pixels (x0.., y) of img into the three channel slices,
// compositing onto white. RGBA64At is used when available because At
// allocates for most image types.
func readRow(img image.Image, x0, y int, r, g, b []float32) {
	if m, ok := img.(image.RGBA64Image); ok {
		for i := range r {
			c := m.RGBA64At(x0+i, y)
			r[i], g[i], b[i] = overWhite(uint32(c.R), uint32(c.G), uint32(c.B), uint32(c.A))
		}
		return
	}
	for i := range r {
		r[i], g[i], b[i] = overWhite(img.At(x0+i, y).RGBA())
	}
}

// overWhite composites a premultiplied 16-bit colour onto white, in [0,1]:
// the white the alpha lets through is added. Clamped, because an invalid
// premultiplied colour (channel > alpha) would exceed 1.
func overWhite(r, g, b, a uint32) (float32, float32, float32) {
	const scale = 1.0 / 0xffff
	white := 0xffff - a
	return float32(min(r+white, 0xffff)) * scale,
		float32(min(g+white, 0xffff)) * scale,
		float32(min(b+white, 0xffff)) * scale
}

// downscale fills r's colour planes from the larger img by area averaging.
func (r *raster) downscale(img image.Image) {
	bnd := img.Bounds()
	xs := areaSpans(bnd.Dx(), r.w)
	m, fast := img.(image.RGBA64Image)
	at := func(x, y int) (float32, float32, float32) {
		if fast {
			c := m.RGBA64At(x, y)
			return overWhite(uint32(c.R), uint32(c.G), uint32(c.B), uint32(c.A))
		}
		return overWhite(img.At(x, y).RGBA())
	}
	resample(bnd.Dy(), r.w, r.h, [][]float32{r.r, r.g, r.b}, func(y int, out [][]float32) {
		for tx, s := range xs {
			var sr, sg, sb float32
			for k, wt := range s.w {
				pr, pg, pb := at(bnd.Min.X+s.lo+k, bnd.Min.Y+y)
				sr += wt * pr
				sg += wt * pg
				sb += wt * pb
			}
			out[0][tx], out[1][tx], out[2][tx] = sr, sg, sb
		}
	})
}

// resizePlane area-averages the sw x sh plane src to the dw x dh plane dst
// (up or down; upsampling replicates pixels).
func resizePlane(src []float32, sw, sh int, dst []float32, dw, dh int) {
	xs := areaSpans(sw, dw)
	resample(sh, dw, dh, [][]float32{dst}, func(y int, out [][]float32) {
		row := src[y*sw : (y+1)*sw]
		for tx, s := range xs {
			var acc float32
			for k, wt := range s.w {
				acc += wt * row[s.lo+k]
			}
			out[0][tx] = acc
		}
	})
}

// span lists the source samples a target sample averages: source lo+k has
// weight w[k]; the weights sum to 1.
type span struct {
	lo int
	w  []float32
}

// areaSpans maps n source samples onto m target samples, each target
// covering an interval of n/m source samples weighted by overlap.
func areaSpans(n, m int) []span {
	spans := make([]span, m)
	step := float64(n) / float64(m)
	// An interval of length step overlaps at most int(step)+2 samples.
	all := make([]float32, 0, m*(int(step)+2))
	for i := range spans {
		a, b := float64(i)*step, float64(i+1)*step
		lo, hi := int(a), min(int(math.Ceil(b)), n)
		hi = max(hi, lo+1)
		start := len(all)
		for j := lo; j < hi; j++ {
			all = append(all, float32((min(b, float64(j+1))-max(a, float64(j)))/step))
		}
		spans[i] = span{lo, all[start:len(all):len(all)]}
	}
	return spans
}

// resample streams the sh source rows through hrow, which must write source
// row y resampled horizontally to dw samples into out[c], and accumulates
// them into the dw x dh planes dst with area weights. Only one source row is
// held at a time.
func resample(sh, dw, dh int, dst [][]float32, hrow func(y int, out [][]float32)) {
	ys := areaSpans(sh, dh)
	out := make([][]float32, len(dst))
	for c := range out {
		out[c] = make([]float32, dw)
		clear(dst[c])
	}
	first := 0 // first target row that still receives source rows
	for y := 0; y < sh; y++ {
		hrow(y, out)
		for ty := first; ty < dh && ys[ty].lo <= y; ty++ {
			k := y - ys[ty].lo
			if k >= len(ys[ty].w) {
				continue
			}
			wt := ys[ty].w[k]
			for c := range dst {
				row := dst[c][ty*dw : (ty+1)*dw]
				for tx, v := range out[c] {
					row[tx] += wt * v
				}
			}
		}
		for first < dh && ys[first].lo+len(ys[first].w) <= y+1 {
			first++
		}
	}
}
