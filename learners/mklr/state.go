package mklr

import (
	"fmt"
	"math"
	"slices"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

// State is the fitted state of a Model without its kernels: what a model
// store keeps. The serving features (n x |S| or n x 2|S| floats) are not in
// it: FromState recomputes them from the kernel rows of the imports, as
// training does, so a stored model costs O(|S| + terms) numbers, not
// O(n |S|).
type State struct {
	Pair    PairKernel
	Imports []learners.Pair
	Alpha   []float64
	Bias    float64
	// KernelTerm says whether f has the term Gamma K_u(i, j)
	// (Options.KernelTerm); BaseWeights are the gamma_t of Options.Base.
	KernelTerm  bool
	Gamma       float64
	BaseWeights []float64
	Stats       Stats
}

// State returns the model's fitted state.
func (m *Model) State() State {
	return State{Pair: m.pair, Imports: m.imports, Alpha: m.alpha, Bias: m.bias,
		KernelTerm: m.kernelTerm, Gamma: m.gamma, BaseWeights: m.baseW, Stats: m.stats}
}

// FromState rebuilds the model trained with the user kernel k and the base
// kernels base (Options.Base, in order) whose state st is: given the same
// kernels, it scores as the trained model did. Errors wrap
// learners.ErrInput: a state that does not fit the kernels (an import out
// of range, as many coefficients as imports or base kernels but not both,
// a non-finite coefficient, an unknown pair kernel).
func FromState(st State, k kernelmath.KernelMatrix, base []kernelmath.KernelMatrix) (*Model, error) {
	if k == nil {
		return nil, fmt.Errorf("%w: mklr: no kernel", learners.ErrInput)
	}
	n := k.Dim()
	switch {
	case st.Pair < PairTensor || st.Pair > PairDifference:
		return nil, fmt.Errorf("%w: mklr: unknown pair kernel %v", learners.ErrInput, st.Pair)
	case len(st.Alpha) != len(st.Imports):
		return nil, fmt.Errorf("%w: mklr: %d coefficients for %d imports", learners.ErrInput, len(st.Alpha), len(st.Imports))
	case len(st.BaseWeights) != len(base):
		return nil, fmt.Errorf("%w: mklr: %d base-kernel coefficients for %d base kernels", learners.ErrInput, len(st.BaseWeights), len(base))
	}
	for _, vs := range [][]float64{{st.Bias, st.Gamma}, st.Alpha, st.BaseWeights} {
		if i := slices.IndexFunc(vs, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }); i >= 0 {
			return nil, fmt.Errorf("%w: mklr: a coefficient is %v", learners.ErrInput, vs[i])
		}
	}
	for b, kb := range base {
		if kb == nil || kb.Dim() != n {
			return nil, fmt.Errorf("%w: mklr: base kernel %d is nil or not %d x %d", learners.ErrInput, b, n, n)
		}
	}
	rows := make([][2][]float64, len(st.Imports))
	for s, p := range st.Imports {
		if err := checkPair("import", p, n); err != nil {
			return nil, err
		}
		rows[s] = [2][]float64{make([]float64, n), make([]float64, n)}
		k.Row(p.I, rows[s][0])
		k.Row(p.J, rows[s][1])
	}
	return newModel(st, k, base, rows)
}

// newModel assembles a model from its state, its kernels and the kernel
// rows of its imports: the end of training and FromState.
func newModel(st State, k kernelmath.KernelMatrix, base []kernelmath.KernelMatrix, rows [][2][]float64) (*Model, error) {
	m := &Model{pair: st.Pair, imports: st.Imports, alpha: st.Alpha, bias: st.Bias,
		kernelTerm: st.KernelTerm, gamma: st.Gamma, baseW: st.BaseWeights, stats: st.Stats}
	var coef []float64
	var ks []kernelmath.KernelMatrix
	if st.KernelTerm {
		coef, ks = append(coef, st.Gamma), append(ks, k)
	}
	coef, ks = append(coef, st.BaseWeights...), append(ks, base...)
	if len(ks) > 0 {
		terms, err := kernelmath.NewKernelSum(coef, ks)
		if err != nil {
			return nil, fmt.Errorf("mklr: %w", err)
		}
		m.terms = terms
	}
	m.setFeatures(k.Dim(), rows)
	return m, nil
}
