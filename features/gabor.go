package features

import (
	"image"
	"math"
	"sync"
)

// GaborDim is the length of the Gabor block.
const GaborDim = GaborScales * GaborOrientations * 3

// Gabor filter bank parameters (Manjunath & Ma 1996, "Texture features for
// browsing and retrieval of image data").
const (
	GaborScales       = 5
	GaborOrientations = 8
	gaborLow          = 0.05 // centre frequency of the coarsest scale, cycles/pixel
	gaborHigh         = 0.4  // centre frequency of the finest scale
	gaborSize         = 64   // the grey image is resized to gaborSize x gaborSize
	gaborPad          = 2 * gaborSize
	// gaborCutoff truncates each frequency response to the ellipse of
	// gaborCutoff standard deviations (the response there is 1.5e-8 of the
	// peak), which lets the inverse FFT skip the empty lines.
	gaborCutoff = 6
)

// Gabor returns the Gabor texture block of img: mean, standard deviation
// and skewness (cube root of the third central moment, as in ColorMoments)
// of the magnitude of each of the 40 complex filter responses. Index:
// (scale*8+orientation)*3+moment, scale 0 the coarsest.
//
// The grey image is area-averaged to 64x64. Filter (s, k) is the
// Manjunath-Ma Gabor wavelet with centre frequency f_s = 0.05*a^s
// cycles/pixel, a = 8^(1/4) (so f runs 0.05 .. 0.4), orientation
// theta_k = k*pi/8 measured from the x axis towards the y axis, which
// points down (so clockwise on screen; 0: the carrier runs along x and
// responds to vertical edges), defined by its frequency response
//
//	G(u, v) = exp(-((u' - f_s)^2/sigma_u^2 + v'^2/sigma_v^2) / 2)
//
// with (u', v') = (u, v) rotated by theta_k, sigma_u = 0.2159 f_s and
// sigma_v = 0.1634 f_s (the M&M choice: adjacent filters touch at
// half-peak), G(0, 0) = 0 so every filter is exactly zero-mean and a flat
// image has zero response. In space that is a complex Gabor with envelope
// sigma_x = 0.737/f_s, sigma_y = 0.974/f_s pixels (1.8 .. 19.5). The
// convolution is done by FFT on 128x128: the image plus its mirror images,
// so the periodic extension is continuous (no wrap-around edges) and the
// ±3 sigma support of the widest filter (58 px) fits in the period. The
// moments are taken over the original 64x64 region.
func Gabor(img image.Image) []float64 {
	v := make([]float64, GaborDim)
	if r := newRaster(img); r.w > 0 && r.h > 0 {
		gabor(r, v)
	}
	return v
}

// gaborFilter is a frequency response stored as its non-zero lines: rows
// (fixed v) if rowsFirst, else columns (fixed u), whichever are fewer.
type gaborFilter struct {
	scale, orient int
	rowsFirst     bool
	lines         []int
	resp          [][]float64 // resp[i][t]: response on line lines[i] at index t
}

var (
	gaborOnce sync.Once
	// gaborBank holds orientations 0..4 of each scale only: response
	// computes orientation 8-k together with k (see there).
	gaborBank []gaborFilter
)

func buildGaborBank() {
	for s := range GaborScales {
		for k := range GaborOrientations/2 + 1 {
			gaborBank = append(gaborBank, newGaborFilter(s, k))
		}
	}
}

// gaborParams returns the centre frequency and the frequency-domain
// standard deviations (along and across the orientation) of scale s, in
// cycles/pixel, after Manjunath & Ma: half-peak contours of adjacent
// filters touch.
func gaborParams(s int) (f, su, sv float64) {
	a := math.Pow(gaborHigh/gaborLow, 1.0/(GaborScales-1))
	l2 := 2 * math.Ln2
	su = (a - 1) * gaborHigh / ((a + 1) * math.Sqrt(l2))
	sv = math.Tan(math.Pi/(2*GaborOrientations)) * (gaborHigh - l2*su*su/gaborHigh) /
		math.Sqrt(l2-l2*l2*su*su/(gaborHigh*gaborHigh))
	f = gaborLow * math.Pow(a, float64(s))
	return f, su * f / gaborHigh, sv * f / gaborHigh
}

// newGaborFilter samples the frequency response of filter (scale, orient)
// on the gaborPad² FFT grid.
func newGaborFilter(scale, orient int) gaborFilter {
	f, su, sv := gaborParams(scale)
	sin, cos := math.Sincos(float64(orient) * math.Pi / GaborOrientations)
	// Storage index (bit-reversed, see fftForward) to cycles/pixel.
	freq := func(i int) float64 {
		if i = int(fftRev[i]); i >= gaborPad/2 {
			i -= gaborPad
		}
		return float64(i) / gaborPad
	}
	// The Nyquist lines (frequency ±1/2) are left out, saving their FFTs:
	// the mirrored image has no energy there, as x[n] and x[p-1-n] cancel
	// in sum x[n] (-1)^n.
	nyquist := int(fftRev[gaborPad/2])
	var g [gaborPad][gaborPad]float64 // [u][v]
	var colUsed, rowUsed [gaborPad]bool
	for u := range gaborPad {
		for v := range gaborPad {
			if u == 0 && v == 0 || u == nyquist || v == nyquist {
				continue // 0 at (0, 0): zero-mean filter
			}
			fu, fv := freq(u), freq(v)
			ur, vr := fu*cos+fv*sin-f, -fu*sin+fv*cos
			if q := ur*ur/(su*su) + vr*vr/(sv*sv); q <= gaborCutoff*gaborCutoff {
				g[u][v] = math.Exp(-q / 2)
				colUsed[u], rowUsed[v] = true, true
			}
		}
	}
	flt := gaborFilter{scale: scale, orient: orient, rowsFirst: count(rowUsed[:]) < count(colUsed[:])}
	for l := range gaborPad {
		if flt.rowsFirst && rowUsed[l] || !flt.rowsFirst && colUsed[l] {
			resp := make([]float64, gaborPad)
			for t := range resp {
				if flt.rowsFirst {
					resp[t] = g[t][l]
				} else {
					resp[t] = g[l][t]
				}
			}
			flt.lines = append(flt.lines, l)
			flt.resp = append(flt.resp, resp)
		}
	}
	return flt
}

func count(b []bool) (n int) {
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// gaborWork holds the per-call buffers (about 800 KB), pooled.
type gaborWork struct {
	grey []float32 // gaborSize²
	// The spectrum in two layouts, indices bit-reversed (u' = fftRev[u]):
	cols []complex128 // X(u, v) at u'*gaborPad+v'
	rows []complex128 // X(u, v) at v'*gaborPad+u'
	z    []complex128 // first inverse pass, gaborSize lines of gaborPad
	line []complex128 // gaborPad
	mag  [2][]float64 // response magnitudes over the image and its mirror
}

var gaborPool = sync.Pool{New: func() any {
	return &gaborWork{
		grey: make([]float32, gaborSize*gaborSize),
		cols: make([]complex128, gaborPad*gaborPad),
		rows: make([]complex128, gaborPad*gaborPad),
		z:    make([]complex128, gaborSize*gaborPad),
		line: make([]complex128, gaborPad),
		mag:  [2][]float64{make([]float64, gaborSize*gaborSize), make([]float64, gaborSize*gaborSize)},
	}
}}

func gabor(r *raster, dst []float64) {
	gaborOnce.Do(buildGaborBank)
	ws := gaborPool.Get().(*gaborWork)
	defer gaborPool.Put(ws)
	resizePlane(r.y, r.w, r.h, ws.grey, gaborSize, gaborSize)
	ws.spectrum()
	for i := range gaborBank {
		f := &gaborBank[i]
		m := ws.response(f)
		o := (f.scale*GaborOrientations + f.orient) * 3
		copy(dst[o:o+3], m[0][:])
		if mirror := (GaborOrientations - f.orient) % GaborOrientations; mirror != f.orient {
			o = (f.scale*GaborOrientations + mirror) * 3
			copy(dst[o:o+3], m[1][:])
		}
	}
}

// spectrum computes the 2-D FFT of ws.grey mirrored to gaborPad²: rows
// first (row p-1-y mirrors row y), kept in ws.rows, then columns, written
// to both layouts. Writing column u of ws.rows only overwrites entries
// already consumed.
func (ws *gaborWork) spectrum() {
	const n, p = gaborSize, gaborPad
	for y := range n {
		row := ws.rows[y*p : (y+1)*p]
		for x, v := range ws.grey[y*n : (y+1)*n] {
			row[x] = complex(float64(v), 0)
			row[p-1-x] = row[x]
		}
		fftForward(row)
		copy(ws.rows[(p-1-y)*p:(p-y)*p], row)
	}
	for u := range p {
		for y := range p {
			ws.line[y] = ws.rows[y*p+u]
		}
		fftForward(ws.line)
		copy(ws.cols[u*p:(u+1)*p], ws.line)
		for v, c := range ws.line {
			ws.rows[v*p+u] = c
		}
	}
}

// response filters the mirrored image with f and returns the moments
// (mean, std, skew) of the response magnitude over the image, m[0], and
// over its mirror image along the second-pass axis, m[1]. Reflecting the
// image along either axis turns filter theta into filter pi-theta
// (conjugated, so with the same magnitude), and the moments ignore pixel
// order: m[1] is the result of orientation 8-k, for free.
func (ws *gaborWork) response(f *gaborFilter) (m [2][3]float64) {
	const n, p = gaborSize, gaborPad
	spec := ws.cols
	if f.rowsFirst {
		spec = ws.rows
	}
	// Inverse FFT along the lines, keeping the first n outputs of each as
	// column l of z; z's other columns stay zero.
	clear(ws.z)
	for i, l := range f.lines {
		for t, c := range spec[l*p : (l+1)*p] {
			g := f.resp[i][t]
			ws.line[t] = complex(real(c)*g, imag(c)*g)
		}
		fftInverse(ws.line)
		for t := range n {
			ws.z[t*p+l] = ws.line[t]
		}
	}
	// Inverse FFT across the lines; both passes are unnormalised. Output
	// p-1-s is the mirror of output s.
	const scale = 1.0 / (p * p)
	var sum [2]float64
	for t := range n {
		row := ws.z[t*p : (t+1)*p]
		fftInverse(row)
		for s := range n {
			a, b := row[s], row[p-1-s]
			ma := math.Sqrt(real(a)*real(a)+imag(a)*imag(a)) * scale
			mb := math.Sqrt(real(b)*real(b)+imag(b)*imag(b)) * scale
			ws.mag[0][t*n+s], ws.mag[1][t*n+s] = ma, mb
			sum[0] += ma
			sum[1] += mb
		}
	}
	for h := range m {
		m[h][0], m[h][1], m[h][2] = moments(ws.mag[h], sum[h])
	}
	return m
}

// moments returns the mean, the standard deviation and the signed cube root
// of the third central moment of vals, whose sum is given.
func moments(vals []float64, sum float64) (mean, std, skew float64) {
	nf := float64(len(vals))
	mean = sum / nf
	var m2, m3 float64
	for _, v := range vals {
		d := v - mean
		m2 += d * d
		m3 += d * d * d
	}
	return mean, math.Sqrt(m2 / nf), math.Cbrt(m3 / nf)
}
