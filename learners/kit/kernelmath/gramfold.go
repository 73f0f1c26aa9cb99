package kernelmath

import "fmt"

// RowOf sets dst (length n) to X x for the sparse feature vector x of a
// point outside the kernel (cols ascending, in [0, m), with values vals):
// its row against the n points, x . x_j, as Row gives a point inside.
// Given a point's own feature vector it repeats Row's arithmetic exactly.
func (g *Gram) RowOf(cols []int, vals []float64, dst []float64) error {
	if len(cols) != len(vals) || len(dst) != g.n {
		return fmt.Errorf("gram: %d columns, %d values, %d outputs for %d points", len(cols), len(vals), len(dst), g.n)
	}
	clear(dst)
	for p, k := range cols {
		if k < 0 || k >= g.m || p > 0 && k <= cols[p-1] {
			return fmt.Errorf("gram: column %d at %d is outside [0, %d) or not ascending", k, p, g.m)
		}
		rows, xs := g.xt.row(k)
		for q, j := range rows {
			dst[j] += vals[p] * xs[q]
		}
	}
	return nil
}
