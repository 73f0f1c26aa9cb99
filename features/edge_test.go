package features

import (
	"image/color"
	"math"
	"testing"
)

func TestAngleBin(t *testing.T) {
	deg := func(d float64) (float32, float32) {
		s, c := math.Sincos(d * math.Pi / 180)
		return float32(c), float32(s)
	}
	for d, want := range map[float64]int{
		0: 0, 9.9: 0, 10.1: 1, 45: 4, 89.9: 8, 90: 9, 135: 13, 180: 18,
		225: 22, 269.9: 26, 270: 27, 300: 30, 359.9: 35,
	} {
		x, y := deg(d)
		if d == 90 || d == 270 { // exact axes: cos is not exactly 0 in floating point
			x = 0
		}
		if d == 180 {
			y = 0
		}
		if got := angleBin(x, y); got != want {
			t.Errorf("angle %v°: bin %d, want %d", d, got, want)
		}
	}
}

func TestEdgeHistogramFlat(t *testing.T) {
	want := make([]float64, EdgeDim)
	want[36] = 1
	for _, size := range [][2]int{{1, 1}, {2, 2}, {40, 30}} {
		checkVec(t, "flat", EdgeHistogram(flat(size[0], size[1], color.RGBA{10, 200, 30, 255})), want, 0)
	}
}

// A w x h step edge gives one edge pixel per row (or column): after the blur
// the two pixels beside the step have equal gradient magnitude, and the
// asymmetric non-maximum suppression keeps exactly one of them. The
// gradient points from dark to bright: dark-left 0° (bin 0), dark-right
// 180° (bin 18), dark-top 270° (bin 27, y points down), dark-bottom 90°
// (bin 9).
func TestEdgeHistogramSteps(t *testing.T) {
	const w, h = 64, 48
	dark, bright := color.Gray{20}, color.Gray{230}
	edge := func(isDark func(x, y int) bool) func(x, y int) color.Color {
		return func(x, y int) color.Color {
			if isDark(x, y) {
				return dark
			}
			return bright
		}
	}
	for _, c := range []struct {
		name  string
		img   func(x, y int) color.Color
		bin   int
		edges int
	}{
		{"dark left", edge(func(x, _ int) bool { return x < 32 }), 0, h},
		{"dark right", edge(func(x, _ int) bool { return x >= 20 }), 18, h},
		{"dark top", edge(func(_, y int) bool { return y < 24 }), 27, w},
		{"dark bottom", edge(func(_, y int) bool { return y >= 30 }), 9, w},
	} {
		want := make([]float64, EdgeDim)
		want[c.bin] = float64(c.edges) / (w * h)
		want[36] = 1 - want[c.bin]
		checkVec(t, c.name, EdgeHistogram(paint(w, h, c.img)), want, 1e-12)
	}
}

// Hysteresis: a weak edge (between 0.1 and 0.2 of the largest magnitude)
// is kept only when 8-connected to a strong one. The contrast of a step is
// proportional to its magnitude, so the thresholds are 0.1 and 0.2 of the
// largest contrast.
func TestEdgeHistogramHysteresis(t *testing.T) {
	const n = 64
	// Strong falling step 230 -> 0 at x = 10 (180°, bin 18) and an isolated
	// weak rising step 0 -> 30 (0.13 of 230) at x = 32: dropped.
	got := EdgeHistogram(paint(n, n, func(x, _ int) color.Color {
		switch {
		case x < 10:
			return color.Gray{230}
		case x < 32:
			return color.Gray{0}
		}
		return color.Gray{30}
	}))
	want := make([]float64, EdgeDim)
	want[18], want[36] = 1.0/n, 1-1.0/n
	checkVec(t, "isolated weak edge", got, want, 1e-12)

	// One step 0 -> v(y) at x = 32 whose contrast fades from 200 (top) to
	// 22 (bottom): rows with v < 40 are weak, but chained to the strong
	// rows above, so every row keeps its edge pixel. The right side gets
	// brighter upwards, tilting the gradient into (0°, 90°).
	got = EdgeHistogram(paint(n, n, func(x, y int) color.Color {
		if x < 32 {
			return color.Gray{0}
		}
		return color.Gray{uint8(200 - 178*y/(n-1))}
	}))
	if edges := sum(got[0:9]) * n * n; !near(edges, n, 1e-9) {
		t.Errorf("fading edge: %v edge pixels in (0°, 90°), want %d, one per row", edges, n)
	}
	if edges := sum(got[:36]) * n * n; !near(edges, n, 1e-9) {
		t.Errorf("fading edge: %v edge pixels, want %d", edges, n)
	}
}
