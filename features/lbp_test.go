package features

import (
	"image/color"
	"testing"
)

// Bin order: uniform codes in increasing value. Worked out by hand: the
// uniform codes below 64 are 0 and the runs of ones inside bits 0..5,
// 0 1 2 3 4 6 7 8 12 14 15 16 24 28 30 31 32 48 56 60 62 63.
func TestLBPBins(t *testing.T) {
	uniform := []int{0, 1, 2, 3, 4, 6, 7, 8, 12, 14, 15, 16, 24, 28, 30, 31, 32, 48, 56, 60, 62, 63}
	for bin, code := range uniform {
		if got := lbpBin[code]; int(got) != bin {
			t.Errorf("code %d: bin %d, want %d", code, got, bin)
		}
	}
	// 5 = 00000101 has 4 transitions, 85 = 01010101 has 8, 129 = 10000001
	// is a run across the wrap (uniform), 254 and 255 are the last two.
	for code, bin := range map[int]int{5: 58, 85: 58, 9: 58, 254: 56, 255: 57} {
		if got := lbpBin[code]; int(got) != bin {
			t.Errorf("code %d: bin %d, want %d", code, got, bin)
		}
	}
	if lbpBin[129] == LBPDim-1 {
		t.Error("code 129 (run wrapping bit 7 to bit 0) must be uniform")
	}
	n := 0
	for _, b := range lbpBin {
		if b < LBPDim-1 {
			n++
		}
	}
	if n != 58 {
		t.Errorf("%d uniform codes, want 58", n)
	}
}

// Flat: every neighbour equals the centre, so (>=) every code is 255.
func TestLBPFlat(t *testing.T) {
	want := make([]float64, LBPDim)
	want[57] = 1
	checkVec(t, "flat", LBP(flat(10, 7, color.RGBA{30, 140, 90, 255})), want, 0)
}

// 1-pixel checkerboard: the diagonal neighbours have the centre's colour,
// the edge neighbours the other one. A black centre gives 255 (bin 57); a
// white one sets only the diagonal bits 0, 2, 4, 6: 85, non-uniform (bin
// 58). The 6x6 image has 4x4 interior pixels, 8 of each.
func TestLBPCheckerboard(t *testing.T) {
	want := make([]float64, LBPDim)
	want[57], want[58] = 0.5, 0.5
	checkVec(t, "checkerboard", LBP(paint(6, 6, checker)), want, 0)
}

// Vertical step, black for x < 32 in 64x64: every interior pixel gives 255
// except the first white column (x = 32), whose left neighbours (bits 0, 6,
// 7) are darker: 00111110 = 62, bin 20. Interior columns are 1..62, so bin
// 20 holds 1/62 and bin 57 holds 61/62.
func TestLBPStep(t *testing.T) {
	want := make([]float64, LBPDim)
	want[20], want[57] = 1.0/62, 61.0/62
	checkVec(t, "step", LBP(step(64, 64)), want, 1e-15)
}

// Images without interior pixels give an empty histogram.
func TestLBPNoInterior(t *testing.T) {
	for _, size := range [][2]int{{1, 1}, {2, 2}, {2, 50}, {50, 2}} {
		if s := sum(LBP(noise(size[0], size[1], 1))); s != 0 {
			t.Errorf("%v: histogram sums to %v, want 0", size, s)
		}
	}
	if s := sum(LBP(noise(3, 3, 1))); s != 1 {
		t.Errorf("3x3: histogram sums to %v, want 1", s)
	}
}
