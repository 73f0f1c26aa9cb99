package kernelmath

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ErrInput wraps every error caused by bad input, so callers can map it to
// a client error.
var ErrInput = errors.New("bad learner input")

// Unlabeled marks a point without a class label.
const Unlabeled = -1

func inputErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, args...))
}

// CheckSym checks that k is n x n and that its upper triangle is finite.
// Errors wrap ErrInput and name the matrix.
func CheckSym(name string, k *mat.SymDense, n int) error {
	if k == nil {
		return inputErr("%s is missing", name)
	}
	if k.SymmetricDim() != n {
		return inputErr("%s is %d x %d, want %d x %d", name, k.SymmetricDim(), k.SymmetricDim(), n, n)
	}
	// Only the upper triangle is the matrix: the storage below it is unused.
	raw := k.RawSymmetric()
	for i := 0; i < n; i++ {
		if err := CheckFinite(name, raw.Data[i*raw.Stride+i:i*raw.Stride+n]); err != nil {
			return err
		}
	}
	return nil
}

// CheckFinite reports the first NaN or infinity in data as an error that
// wraps ErrInput and names the data.
func CheckFinite(name string, data []float64) error {
	// v - v is 0 for a finite v and NaN for NaN and the infinities: a
	// branch-free sum over the data (four of them, so that the additions
	// overlap), then a search only when it is NaN.
	var s [4]float64
	i := 0
	for ; i+4 <= len(data); i += 4 {
		s[0] += data[i] - data[i]
		s[1] += data[i+1] - data[i+1]
		s[2] += data[i+2] - data[i+2]
		s[3] += data[i+3] - data[i+3]
	}
	for _, v := range data[i:] {
		s[0] += v - v
	}
	if s[0]+s[1]+s[2]+s[3] == 0 {
		return nil
	}
	for _, v := range data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return inputErr("%s contains %v", name, v)
		}
	}
	return nil
}
