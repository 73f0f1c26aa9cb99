package features

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"
)

// paint returns a w x h RGBA image coloured by f.
func paint(w, h int, f func(x, y int) color.Color) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, f(x, y))
		}
	}
	return img
}

func flat(w, h int, c color.Color) *image.RGBA {
	return paint(w, h, func(int, int) color.Color { return c })
}

// step is a vertical step edge: black for x < w/2, white from there.
func step(w, h int) *image.RGBA {
	return paint(w, h, func(x, _ int) color.Color {
		if x < w/2 {
			return color.Black
		}
		return color.White
	})
}

// noise is a random image with random (non-premultiplied) alpha.
func noise(w, h int, seed uint64) *image.NRGBA {
	rng := rand.New(rand.NewPCG(seed, 1))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.IntN(256))
	}
	return img
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// checkVec fails unless got[i] == want[i] within tol for every i.
func checkVec(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", name, len(got), len(want))
	}
	for i := range got {
		if !near(got[i], want[i], tol) {
			t.Errorf("%s[%d] = %.9g, want %.9g", name, i, got[i], want[i])
		}
	}
}

func sum(v []float64) (s float64) {
	for _, x := range v {
		s += x
	}
	return s
}
