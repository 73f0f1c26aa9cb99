//go:build openblas

package kernelmath

// The openblas build tag (go build -tags openblas; needs cgo and Debian's
// libopenblas-dev and liblapacke-dev, whose lapack.h declares the Fortran
// routines) makes PartialEigen reduce A to tridiagonal form with OpenBLAS's
// dsytrd and apply the reflectors to the eigenvectors with its dormtr: the
// two O(n^3) and O(n^2 p) steps, blocked on BLAS-3 kernels. The eigenvalues
// (Dsterf) and the inverse iteration for the wanted vectors stay in Go:
// dstemr (MRRR, index range) took 4 times as long as inverseIteration on
// hsicnpk's matrices at n = 200, whose positive eigenvalues cluster near
// zero, and dsyevr itself uses dstebz and dstein (inverse iteration) for a
// partial range. gonum.org/v1/netlib, the usual binding, does not build
// against gonum v0.17 (its Implementation lacks Dlapmr), hence these two
// wrappers. OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS) sets the threads of
// the BLAS kernels; unset, this package sets one, OpenBLAS's default being a
// thread per core: at a search's sizes a second thread costs more CPU (its
// workers spin between calls) than it saves (docs/evaluation.md).

/*
#cgo LDFLAGS: -lopenblas
#include <lapack.h>

void openblas_set_num_threads(int);

// The wrappers take scalars by value, so that no Go pointer to a scalar
// escapes to the heap on the hot path. The symmetric matrix is the lower
// triangle of a row-major array, that is the upper triangle column-major.
static int kr_dsytrd(int n, double *a, double *d, double *e, double *tau, double *work, int lwork) {
	int info = 0;
	LAPACK_dsytrd("U", &n, a, &n, d, e, tau, work, &lwork, &info);
	return info;
}

// kr_dormtr overwrites the row-major q x n z, whose rows are eigenvectors of
// T, with those of A: column-major, z is the n x q Z, overwritten with Q Z.
static int kr_dormtr(int n, int q, double *a, double *tau, double *z, double *work, int lwork) {
	int info = 0;
	LAPACK_dormtr("L", "U", "N", &n, &q, a, &n, tau, z, &n, work, &lwork, &info);
	return info;
}
*/
import "C"

import (
	"fmt"
	"os"
)

func init() {
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" && os.Getenv("OMP_NUM_THREADS") == "" {
		C.openblas_set_num_threads(1)
	}
}

// lapackState is the LAPACK path's workspace, sized for order n.
type lapackState struct {
	n    int
	work []float64
}

// useLAPACK: GonumTridiag and noLAPACK select the pure-Go path.
func (pe *PartialEigen) useLAPACK() bool { return !pe.GonumTridiag && !pe.noLAPACK }

func (pe *PartialEigen) tridiagonalize() error {
	if !pe.useLAPACK() {
		pe.tridiagonalizeGo()
		return nil
	}
	n := pe.n
	if pe.lp.n != n || pe.lp.work == nil {
		// Workspace queries (lwork = -1): dsytrd, and dormtr for q = n,
		// the most VectorsTo asks for.
		q := []float64{0, 0}
		C.kr_dsytrd(C.int(n), nil, nil, nil, nil, (*C.double)(&q[0]), -1)
		C.kr_dormtr(C.int(n), C.int(n), nil, nil, nil, (*C.double)(&q[1]), -1)
		pe.lp = lapackState{n: n, work: make([]float64, max(int(q[0]), int(q[1]), 1))}
	}
	if info := C.kr_dsytrd(C.int(n), cd(pe.a), cd(pe.d), cd(pe.e), cd(pe.tau), cd(pe.lp.work), C.int(len(pe.lp.work))); info != 0 {
		return fmt.Errorf("%w: dsytrd info %d", ErrPartialEigen, info)
	}
	return nil
}

func (pe *PartialEigen) backTransform(z []float64, q int) error {
	if !pe.useLAPACK() {
		pe.backTransformGo(z, q)
		return nil
	}
	if info := C.kr_dormtr(C.int(pe.n), C.int(q), cd(pe.a), cd(pe.tau), cd(z), cd(pe.lp.work), C.int(len(pe.lp.work))); info != 0 {
		return fmt.Errorf("%w: dormtr info %d", ErrPartialEigen, info)
	}
	return nil
}

func cd(s []float64) *C.double { return (*C.double)(&s[0]) }
