package features

import (
	"image"
	"math"
)

// EdgeDim is the length of the edge orientation histogram block.
const EdgeDim = 37

// Canny parameters.
const (
	cannySigma = 1.0
	cannyHigh  = 0.2 // strong edge: magnitude >= cannyHigh * max magnitude
	cannyLow   = 0.1 // weak edge, kept if 8-connected to a strong one
	// minEdgeMagnitude is the least gradient magnitude that can be an edge.
	// The largest magnitude of a one-grey-level step (1/255) after the blur
	// is 1.26e-3, so this only cuts the rounding noise of blurring and
	// resampling, which the relative thresholds would otherwise amplify.
	minEdgeMagnitude = 1e-3
)

// EdgeHistogram returns the edge orientation histogram of img: bins 0..35
// count the Canny edge pixels whose gradient direction lies in
// [10i, 10i+10) degrees, bin 36 counts the non-edge pixels, all divided by
// the pixel count so that the 37 bins sum to 1.
//
// Canny: Gaussian blur (sigma 1, radius 3, borders replicated), Sobel
// gradients divided by 8 (so the magnitude is in grey levels per pixel),
// non-maximum suppression along the gradient quantised to 0/45/90/135
// degrees (a pixel survives if it is greater than its neighbour on the
// top/left side and not less than the other, so a symmetric ridge two pixels
// wide keeps exactly one), then hysteresis with thresholds 0.2 and 0.1 of
// the largest magnitude, never below minEdgeMagnitude: a flat image has no
// edges.
//
// Direction convention: mathematical angle with the y axis pointing up,
// atan2(-dI/dy, dI/dx) with image y pointing down, so 0 degrees means the
// image gets brighter to the right, 90 brighter upwards, 180 brighter to the
// left, 270 brighter downwards. A dark-left/bright-right vertical step edge
// lands in bin 0.
func EdgeHistogram(img image.Image) []float64 {
	v := make([]float64, EdgeDim)
	if r := newRaster(img); r.w > 0 && r.h > 0 {
		edgeHistogram(r, v)
	}
	return v
}

// gauss1 is the normalised Gaussian kernel (sigma 1, radius 3): ±3 sigma.
var gauss1 = func() (k [7]float32) {
	var sum float64
	var kd [7]float64
	for i := range kd {
		d := float64(i - 3)
		kd[i] = math.Exp(-d * d / (2 * cannySigma * cannySigma))
		sum += kd[i]
	}
	for i := range k {
		k[i] = float32(kd[i] / sum)
	}
	return k
}()

// Pixel states; the zero value is "not an edge".
const (
	weakEdge  uint8 = 1 + iota // passed suppression and the low threshold only
	edgePixel                  // strong, or weak and connected to a strong one
)

func edgeHistogram(r *raster, dst []float64) {
	w, h := r.w, r.h
	n := w * h
	buf := make([]float32, 4*n)
	tmp, blur, gx, gy := buf[:n:n], buf[n:2*n:2*n], buf[2*n:3*n:3*n], buf[3*n:]

	// Separable blur, replicating the border pixels.
	for y := 0; y < h; y++ {
		src, out := r.y[y*w:(y+1)*w], tmp[y*w:(y+1)*w]
		for x := range out {
			var s float32
			if x >= 3 && x+3 < w {
				for k, v := range src[x-3 : x+4] {
					s += gauss1[k] * v
				}
			} else {
				for k, kw := range gauss1 {
					s += kw * src[min(max(x+k-3, 0), w-1)]
				}
			}
			out[x] = s
		}
	}
	for y := 0; y < h; y++ {
		out := blur[y*w : (y+1)*w]
		for k, kw := range gauss1 {
			src := tmp[min(max(y+k-3, 0), h-1)*w:][:w]
			for x, v := range src {
				out[x] += kw * v
			}
		}
	}

	// Sobel, replicating borders; the magnitude reuses tmp.
	mag := tmp
	var maxMag float32
	for y := 0; y < h; y++ {
		up, mid, down := blur[max(y-1, 0)*w:], blur[y*w:], blur[min(y+1, h-1)*w:]
		for x := 0; x < w; x++ {
			xl, xr := max(x-1, 0), min(x+1, w-1)
			dx := (up[xr] + 2*mid[xr] + down[xr]) - (up[xl] + 2*mid[xl] + down[xl])
			dy := (down[xl] + 2*down[x] + down[xr]) - (up[xl] + 2*up[x] + up[xr])
			i := y*w + x
			gx[i], gy[i] = dx/8, dy/8
			m := float32(math.Sqrt(float64(gx[i]*gx[i] + gy[i]*gy[i])))
			mag[i] = m
			maxMag = max(maxMag, m)
		}
	}

	high := max(cannyHigh*maxMag, minEdgeMagnitude)
	low := max(cannyLow*maxMag, minEdgeMagnitude)
	state := make([]uint8, n)
	var stack []int32
	if maxMag >= minEdgeMagnitude {
		// Non-maximum suppression; neighbours outside the image count as 0.
		at := func(x, y int) float32 {
			if x < 0 || x >= w || y < 0 || y >= h {
				return 0
			}
			return mag[y*w+x]
		}
		const tan22 = 0.41421356 // tan(22.5°): sector boundary
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				i := y*w + x
				m := mag[i]
				if m < low {
					continue
				}
				ax, ay := abs32(gx[i]), abs32(gy[i])
				// (dx, dy): step from the top/left neighbour to the pixel.
				var dx, dy int
				switch {
				case ay <= tan22*ax:
					dx, dy = 1, 0
				case ax <= tan22*ay:
					dx, dy = 0, 1
				case (gx[i] > 0) == (gy[i] > 0):
					dx, dy = 1, 1
				default:
					dx, dy = -1, 1
				}
				var prev, next float32
				if x > 0 && x < w-1 && y > 0 && y < h-1 {
					off := dy*w + dx
					prev, next = mag[i-off], mag[i+off]
				} else {
					prev, next = at(x-dx, y-dy), at(x+dx, y+dy)
				}
				if m > prev && m >= next {
					if m >= high {
						state[i] = edgePixel
						stack = append(stack, int32(i))
					} else {
						state[i] = weakEdge
					}
				}
			}
		}
	}
	// Hysteresis: grow the strong edges through 8-connected weak ones.
	for len(stack) > 0 {
		i := int(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		x, y := i%w, i/w
		for ny := max(y-1, 0); ny <= min(y+1, h-1); ny++ {
			for nx := max(x-1, 0); nx <= min(x+1, w-1); nx++ {
				if j := ny*w + nx; state[j] == weakEdge {
					state[j] = edgePixel
					stack = append(stack, int32(j))
				}
			}
		}
	}

	var hist [EdgeDim]int
	for i, s := range state {
		if s != edgePixel {
			hist[EdgeDim-1]++
			continue
		}
		hist[angleBin(gx[i], -gy[i])]++
	}
	for i, c := range hist {
		dst[i] = float64(c) / float64(n)
	}
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

// tan10 holds tan(10°), tan(20°), ..., tan(80°).
var tan10 = func() (t [8]float32) {
	for i := range t {
		t[i] = float32(math.Tan(float64(i+1) * math.Pi / 18))
	}
	return t
}()

// angleBin returns floor(angle/10°) of the vector (x, y), angle in
// [0°, 360°) counter-clockwise from the x axis; it avoids atan2, which
// dominated the histogram of textured images.
func angleBin(x, y float32) int {
	// Rotate into the quadrant [0°, 90°) by multiples of 90°.
	var q int
	switch {
	case x > 0 && y >= 0:
	case x <= 0 && y > 0:
		q, x, y = 1, y, -x
	case x < 0 && y <= 0:
		q, x, y = 2, -x, -y
	case x >= 0 && y < 0:
		q, x, y = 3, -y, x
	default: // (0, 0) has no direction; edges never have it
		return 0
	}
	b := 0
	for b < len(tan10) && y >= tan10[b]*x {
		b++
	}
	return 9*q + b
}
