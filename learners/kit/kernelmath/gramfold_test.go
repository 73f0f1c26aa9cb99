package kernelmath

import "testing"

// RowOf with a point's own feature vector is its Row; a vector of another
// point gives x . x_j; bad columns are errors.
func TestGramRowOf(t *testing.T) {
	// X rows: 0 -> (1, 0, 2), 1 -> (0, 3, 1), 2 -> (4, 0, 0).
	g, err := NewGram(3, 3, []Triplet{{0, 0, 1}, {0, 2, 2}, {1, 1, 3}, {1, 2, 1}, {2, 0, 4}})
	if err != nil {
		t.Fatal(err)
	}
	got, want := make([]float64, 3), make([]float64, 3)
	if err := g.RowOf([]int{1, 2}, []float64{3, 1}, got); err != nil {
		t.Fatal(err)
	}
	g.Row(1, want)
	for j := range want {
		if got[j] != want[j] {
			t.Errorf("own vector: entry %d = %v, Row gives %v", j, got[j], want[j])
		}
	}
	if err := g.RowOf([]int{0, 1}, []float64{1, 1}, got); err != nil {
		t.Fatal(err)
	}
	for j, w := range []float64{1, 3, 4} {
		if got[j] != w {
			t.Errorf("(1, 1, 0): entry %d = %v, want %v", j, got[j], w)
		}
	}
	for _, c := range []struct {
		cols []int
		vals []float64
		dst  int
	}{{[]int{3}, []float64{1}, 3}, {[]int{1, 0}, []float64{1, 1}, 3}, {[]int{-1}, []float64{1}, 3}, {[]int{0}, []float64{1, 2}, 3}, {[]int{0}, []float64{1}, 2}} {
		if err := g.RowOf(c.cols, c.vals, make([]float64, c.dst)); err == nil {
			t.Errorf("RowOf(%v, %v) into %d accepted", c.cols, c.vals, c.dst)
		}
	}
}
