//go:build !openblas

package kernelmath

// tridiagonalize reduces pe.a to the tridiagonal T (pe.d, pe.e), leaving
// the reflectors that backTransform applies; without the openblas build tag
// it is always the pure-Go path.
func (pe *PartialEigen) tridiagonalize() error {
	pe.tridiagonalizeGo()
	return nil
}

// backTransform overwrites the row-major q x n z, whose rows are
// eigenvectors of T, with those of A.
func (pe *PartialEigen) backTransform(z []float64, q int) error {
	pe.backTransformGo(z, q)
	return nil
}

// lapackState is the LAPACK path's workspace in an openblas build.
type lapackState struct{}
