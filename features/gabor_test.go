package features

import (
	"image/color"
	"math"
	"math/cmplx"
	"testing"
)

// gi is the Gabor block index of (scale, orientation, moment).
func gi(s, k, m int) int { return (s*GaborOrientations+k)*3 + m }

// The filters are zero-mean, so a flat image has no response.
func TestGaborFlat(t *testing.T) {
	for _, size := range [][2]int{{64, 64}, {1, 1}, {30, 20}} {
		for i, v := range Gabor(flat(size[0], size[1], color.RGBA{90, 180, 40, 255})) {
			if math.Abs(v) > 1e-5 {
				t.Fatalf("%v: Gabor[%d] = %v, want 0", size, i, v)
			}
		}
	}
}

// A cosine grating with a whole number m of cycles per 128 pixels,
// symmetric about the image borders, is a pure tone of the mirrored image:
// I = 0.5 + 0.5 cos(2 pi m (x + 0.5)/128). The filter of orientation 0 and
// centre f passes only the positive frequency, with gain G =
// exp(-((m/128 - f)/sigma_u)^2/2), sigma_u = 0.215923 f (worked out from
// Manjunath-Ma: (a-1)/((a+1) sqrt(2 ln 2)) with a = 8^(1/4)), so the
// response magnitude is 0.25 G everywhere: mean 0.25 G, std 0, skew 0.
func TestGaborGrating(t *testing.T) {
	for _, c := range []struct {
		scale, m int
		mean     float64 // 0.25 G, by hand
	}{
		{4, 51, 0.2499590932}, // f = 0.4: G = exp(-((0.3984375-0.4)/0.0863693)^2/2)
		{0, 6, 0.2397433362},  // f = 0.05: G = exp(-((0.046875-0.05)/0.0107962)^2/2)
	} {
		for _, vertical := range []bool{false, true} {
			r := &raster{w: gaborSize, h: gaborSize, y: make([]float32, gaborSize*gaborSize)}
			for y := range gaborSize {
				for x := range gaborSize {
					p := x
					if vertical {
						p = y
					}
					r.y[y*gaborSize+x] = float32(0.5 + 0.5*math.Cos(2*math.Pi*float64(c.m)*(float64(p)+0.5)/128))
				}
			}
			got := make([]float64, GaborDim)
			gabor(r, got)
			k := 0 // carrier along x
			if vertical {
				k = 4 // along y
			}
			checkVec(t, "grating", got[gi(c.scale, k, 0):gi(c.scale, k, 0)+2], []float64{c.mean, 0}, 1e-6)
			if skew := got[gi(c.scale, k, 2)]; math.Abs(skew) > 1e-3 {
				t.Errorf("grating skew %v, want 0", skew)
			}
			if other := got[gi(c.scale, 4-k, 0)]; other > 1e-4 {
				t.Errorf("scale %d: orthogonal orientation responds %v, want ~0", c.scale, other)
			}
		}
	}
}

// A vertical step edge excites orientation 0 (carrier along x) and not the
// orthogonal orientation 4; a diagonal edge along x = y (down-right, image
// y pointing down) has its normal along (1, -1), i.e. theta = 135°:
// orientation 6, not 2.
func TestGaborEdges(t *testing.T) {
	vert := Gabor(step(64, 64))
	diag := Gabor(paint(64, 64, func(x, y int) color.Color {
		if x > y {
			return color.White
		}
		return color.Black
	}))
	for s := range GaborScales {
		if a, b := vert[gi(s, 0, 0)], vert[gi(s, 4, 0)]; !(a > 100*b) {
			t.Errorf("vertical edge, scale %d: mean response %v at 0°, %v at 90°", s, a, b)
		}
		if a, b := diag[gi(s, 6, 0)], diag[gi(s, 2, 0)]; !(a > 2*b) {
			t.Errorf("diagonal edge, scale %d: mean response %v at 135°, %v at 45°", s, a, b)
		}
	}
}

// response gets orientation 8-k from the mirror half of orientation k;
// check that against filtering with orientation 8-k directly.
func TestGaborMirrorOrientations(t *testing.T) {
	got := Gabor(noise(64, 64, 7))
	r := newRaster(noise(64, 64, 7))
	ws := gaborPool.Get().(*gaborWork)
	defer gaborPool.Put(ws)
	resizePlane(r.y, r.w, r.h, ws.grey, gaborSize, gaborSize)
	ws.spectrum()
	// The filters skip the Nyquist lines: the mirrored image has none.
	nyq := int(fftRev[gaborPad/2])
	for i := range gaborPad {
		for _, c := range []complex128{ws.cols[nyq*gaborPad+i], ws.cols[i*gaborPad+nyq]} {
			if cmplx.Abs(c) > 1e-9 {
				t.Fatalf("Nyquist coefficient %v, want 0", c)
			}
		}
	}
	for s := range GaborScales {
		for k := 5; k < GaborOrientations; k++ {
			f := newGaborFilter(s, k)
			m := ws.response(&f)
			checkVec(t, "direct", got[gi(s, k, 0):gi(s, k, 0)+3], m[0][:], 1e-9)
		}
	}
}
