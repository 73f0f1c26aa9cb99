package features

import (
	"image"
	"image/color"
	"testing"
)

// idx is the ColorMoments index of (cell row, cell column, channel, moment).
func idx(cy, cx, ch, m int) int { return ((cy*3+cx)*3+ch)*3 + m }

func TestColorMomentsFlat(t *testing.T) {
	for _, size := range [][2]int{{1, 1}, {2, 2}, {30, 20}, {3, 200}} {
		got := ColorMoments(flat(size[0], size[1], color.RGBA{200, 100, 50, 255}))
		want := make([]float64, ColorDim)
		for cell := range 9 {
			for ch, v := range []float64{200, 100, 50} {
				want[idx(cell/3, cell%3, ch, 0)] = v / 255 // std, skew 0
			}
		}
		checkVec(t, "flat", got, want, 1e-6)
	}
}

// Transparent pixels are composited onto white: 50% red over white is
// (1, 127/255, 127/255) with 8-bit alpha 128.
func TestColorMomentsAlphaOverWhite(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 6, 6))
	for i := 0; i < len(img.Pix); i += 4 {
		copy(img.Pix[i:], []uint8{255, 0, 0, 128})
	}
	got := ColorMoments(img)
	for cell := range 9 {
		for ch, v := range []float64{1, 127.0 / 255, 127.0 / 255} {
			if m := got[idx(cell/3, cell%3, ch, 0)]; !near(m, v, 1e-6) {
				t.Errorf("cell %d channel %d mean %v, want %v", cell, ch, m, v)
			}
		}
	}
}

// 1-pixel checkerboard: every 2x2 cell of a 6x6 image holds two black and two
// white pixels: mean 0.5, std 0.5, skew 0 in every channel.
func TestColorMomentsCheckerboard(t *testing.T) {
	got := ColorMoments(paint(6, 6, checker))
	for i := 0; i < ColorDim; i += 3 {
		checkVec(t, "checkerboard", got[i:i+3], []float64{0.5, 0.5, 0}, 1e-12)
	}
}

func checker(x, y int) color.Color {
	if (x+y)%2 == 0 {
		return color.Black
	}
	return color.White
}

// Cells are row-major (top-left, top-middle, ..., bottom-right): a 9x9 image
// with a different colour in each 3x3 cell puts each colour in its slot.
func TestColorMomentsGridOrder(t *testing.T) {
	cellColor := func(cell int) color.RGBA { return color.RGBA{uint8(20 * cell), uint8(250 - 20*cell), 7, 255} }
	got := ColorMoments(paint(9, 9, func(x, y int) color.Color { return cellColor(y/3*3 + x/3) }))
	for cell := range 9 {
		c := cellColor(cell)
		for ch, v := range []uint8{c.R, c.G, c.B} {
			o := idx(cell/3, cell%3, ch, 0)
			checkVec(t, "cell", got[o:o+3], []float64{float64(v) / 255, 0, 0}, 1e-6)
		}
	}
}

// A two-colour split that does not follow the grid: 64 wide, black for
// x < 32. Cell columns are [0,21), [21,42), [42,64): the middle one holds
// 11 black and 10 white columns, a Bernoulli with p = 10/21: mean 10/21,
// std sqrt(p(1-p)) = sqrt(110)/21, third central moment p(1-p)(1-2p) =
// 110/9261, so skew = cbrt(110/9261) = 0.228163 (positive: the white
// minority is the long tail).
func TestColorMomentsSplitCell(t *testing.T) {
	got := ColorMoments(step(64, 64))
	for cy := range 3 {
		for ch := range 3 {
			o := idx(cy, 0, ch, 0)
			checkVec(t, "left", got[o:o+3], []float64{0, 0, 0}, 1e-12)
			o = idx(cy, 1, ch, 0)
			checkVec(t, "middle", got[o:o+3], []float64{10.0 / 21, 0.4994327848, 0.2281628503}, 1e-9)
			o = idx(cy, 2, ch, 0)
			checkVec(t, "right", got[o:o+3], []float64{1, 0, 0}, 1e-12)
		}
	}
}

// Skewness is the signed cube root of the third central moment: a 2x2 cell
// with values {1, 0, 0, 0} has mean 1/4, std sqrt(3)/4 and third moment
// (3(-1/4)^3 + (3/4)^3)/4 = 3/32, skew cbrt(3/32) = 0.454280; the inverse
// cell {0, 1, 1, 1} has skew -0.454280.
func TestColorMomentsSkewness(t *testing.T) {
	img := paint(6, 6, func(x, y int) color.Color {
		switch {
		case x == 0 && y == 0: // one white pixel in cell (0, 0)
			return color.White
		case x >= 4 && y >= 4 && !(x == 5 && y == 5): // three in cell (2, 2)
			return color.White
		}
		return color.Black
	})
	got := ColorMoments(img)
	for ch := range 3 {
		o := idx(0, 0, ch, 0)
		checkVec(t, "cell 0", got[o:o+3], []float64{0.25, 0.4330127019, 0.4542801482}, 1e-9)
		o = idx(2, 2, ch, 0)
		checkVec(t, "cell 8", got[o:o+3], []float64{0.75, 0.4330127019, -0.4542801482}, 1e-9)
	}
}

// With fewer than 3 pixels along an axis, a cell that would be empty takes
// the pixel at its start: for 2 pixels the cells are [0,1), [0,1), [1,2).
func TestColorMomentsTinyImages(t *testing.T) {
	got := ColorMoments(paint(2, 1, func(x, _ int) color.Color {
		if x == 0 {
			return color.Black
		}
		return color.White
	}))
	for cy := range 3 {
		for cx, mean := range []float64{0, 0, 1} {
			if m := got[idx(cy, cx, 0, 0)]; m != mean {
				t.Errorf("cell (%d,%d) mean %v, want %v", cy, cx, m, mean)
			}
		}
	}
	for cell, lohi := range [][2]int{{0, 1}, {0, 1}, {1, 2}} {
		if lo, hi := gridCell(2, cell); lo != lohi[0] || hi != lohi[1] {
			t.Errorf("gridCell(2, %d) = [%d,%d), want %v", cell, lo, hi, lohi)
		}
	}
}
