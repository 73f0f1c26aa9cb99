package kernelmath

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// A C-SVM on a precomputed kernel matrix, trained by SMO as LIBSVM does
// (Chang & Lin, LIBSVM, Solver::Solve): the dual
//
//	min_a 1/2 a'Qa - 1'a,  Q_ij = y_i y_j K_ij,  y'a = 0,  0 <= a_i <= C_i,
//
// two variables at a time, the pair chosen by the second-order working-set
// selection WSS2 of Fan, Chen & Lin (JMLR 2005): i maximises -y_t G_t over
// I_up, j minimises -b_ij^2 / a_ij over I_low with b_ij > 0, where G = Qa - 1,
// a_ij = K_ii + K_jj - 2 K_ij (tau = 1e-12 if not positive), stopping when
// the maximal violation m(a) - M(a) falls below Eps (1e-3, LIBSVM's -e). The
// two-variable update, its clipping to the box and the bias (the mean of
// -y_i G_i over the free support vectors, else the midpoint of the feasible
// interval) are LIBSVM's. No shrinking: the kernel is in memory.

// SVMOptions configures TrainSVM.
type SVMOptions struct {
	// C bounds the dual variables (required, > 0).
	C float64
	// WeightPos and WeightNeg scale C for the +1 and -1 class (LIBSVM's
	// -wi); 0 means 1.
	WeightPos, WeightNeg float64
	// Eps is the stopping tolerance on the maximal KKT violation (default
	// 1e-3, as LIBSVM).
	Eps float64
	// MaxIter caps the SMO iterations (default max(10^7, 100 n), as LIBSVM).
	MaxIter int
}

// SVM is a trained binary C-SVM: f(x) = sum_i Alpha_i Y_i k(x_i, x) + Bias.
type SVM struct {
	Alpha []float64 // dual variables, one per training point
	Y     []int     // the training labels, +1 or -1
	Bias  float64   // b
	SV    []int     // the support vectors (Alpha > 0), ascending
	// Train holds the decision values f(x_i) of the training points.
	Train      []float64
	Iterations int // SMO iterations (pairs updated)
	// Objective is the dual objective 1/2 a'Qa - 1'a at the solution.
	Objective float64
	// Violation is the maximal KKT violation m(a) - M(a) at the end (<= Eps).
	Violation float64
}

// ErrSVMNotConverged is wrapped when SMO reaches MaxIter.
var ErrSVMNotConverged = errors.New("svm: not converged")

const svmTau = 1e-12

// TrainSVM trains a C-SVM on the kernel k over n training points with
// labels y (+1 / -1, both present). ctx is checked every 1024 iterations.
// Errors wrap ErrInput (sizes, labels, options, NaN/Inf),
// ErrSVMNotConverged, or are ctx.Err().
func TrainSVM(ctx context.Context, k *mat.SymDense, y []int, opt SVMOptions) (*SVM, error) {
	if k == nil || k.SymmetricDim() == 0 {
		return nil, inputErr("svm: the kernel is empty")
	}
	n := k.SymmetricDim()
	if len(y) != n {
		return nil, inputErr("svm: %d labels for a %d x %d kernel", len(y), n, n)
	}
	if err := CheckSym("svm: kernel", k, n); err != nil {
		return nil, err
	}
	var pos, neg int
	for i, yi := range y {
		switch yi {
		case 1:
			pos++
		case -1:
			neg++
		default:
			return nil, inputErr("svm: label %d of point %d is not +1 or -1", yi, i)
		}
	}
	if pos == 0 || neg == 0 {
		return nil, inputErr("svm: both classes are needed (%d positive, %d negative)", pos, neg)
	}
	if !(opt.C > 0) || math.IsInf(opt.C, 0) {
		return nil, inputErr("svm: C must be positive and finite, got %v", opt.C)
	}
	weight := func(w float64) (float64, error) {
		switch {
		case w == 0:
			return 1, nil
		case w > 0 && !math.IsInf(w, 0):
			return w, nil
		}
		return 0, inputErr("svm: class weights must be positive and finite, got %v", w)
	}
	wp, err := weight(opt.WeightPos)
	if err != nil {
		return nil, err
	}
	wn, err := weight(opt.WeightNeg)
	if err != nil {
		return nil, err
	}
	eps := opt.Eps
	if eps <= 0 {
		eps = 1e-3
	}
	maxIter := opt.MaxIter
	if maxIter <= 0 {
		maxIter = max(10_000_000, 100*n)
	}
	s := &smo{n: n, y: append([]int(nil), y...), raw: k.RawSymmetric(),
		alpha: make([]float64, n), g: make([]float64, n), c: make([]float64, n),
		rowI: make([]float64, n), rowJ: make([]float64, n)}
	for i := range n {
		s.g[i] = -1
		s.c[i] = opt.C * wp
		if y[i] < 0 {
			s.c[i] = opt.C * wn
		}
	}
	iter := 0
	for ; ; iter++ {
		if iter%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		i, j, viol := s.selectPair()
		if j < 0 || viol < eps {
			s.viol = max(viol, 0)
			break
		}
		if iter >= maxIter {
			return nil, fmt.Errorf("%w: %d iterations, maximal violation %.3g > eps %g", ErrSVMNotConverged, iter, viol, eps)
		}
		s.update(i, j)
	}
	return s.model(iter), nil
}

type smo struct {
	n           int
	y           []int
	raw         blas64.Symmetric // upper triangle of the kernel
	alpha, g, c []float64
	rowI, rowJ  []float64
	viol        float64
}

func (s *smo) kij(i, j int) float64 {
	if i > j {
		i, j = j, i
	}
	return s.raw.Data[i*s.raw.Stride+j]
}

// qRow fills dst with row i of Q: y_i y_t K_it.
func (s *smo) qRow(i int, dst []float64) {
	d, st := s.raw.Data, s.raw.Stride
	for t := 0; t < i; t++ {
		dst[t] = d[t*st+i]
	}
	copy(dst[i:], d[i*st+i:i*st+s.n])
	if s.y[i] > 0 {
		for t, yt := range s.y {
			if yt < 0 {
				dst[t] = -dst[t]
			}
		}
	} else {
		for t, yt := range s.y {
			if yt > 0 {
				dst[t] = -dst[t]
			}
		}
	}
}

// isUp reports t in I_up (a_t can move so that y_t a_t grows), isLow t in
// I_low (y_t a_t can shrink).
func (s *smo) isUp(t int) bool {
	if s.y[t] > 0 {
		return s.alpha[t] < s.c[t]
	}
	return s.alpha[t] > 0
}

func (s *smo) isLow(t int) bool {
	if s.y[t] > 0 {
		return s.alpha[t] > 0
	}
	return s.alpha[t] < s.c[t]
}

// selectPair is WSS2. It returns the pair and the maximal violation
// m(a) - M(a) = max_{I_up} -y G - min_{I_low} -y G; j < 0 if no pair
// improves.
func (s *smo) selectPair() (i, j int, viol float64) {
	gmax, i := math.Inf(-1), -1
	for t := range s.n {
		if s.isUp(t) {
			if v := -float64(s.y[t]) * s.g[t]; v >= gmax {
				gmax, i = v, t
			}
		}
	}
	if i < 0 {
		return -1, -1, 0
	}
	gmax2, best, j := math.Inf(-1), math.Inf(1), -1
	kii := s.kij(i, i)
	for t := range s.n {
		if !s.isLow(t) {
			continue
		}
		yg := float64(s.y[t]) * s.g[t]
		gmax2 = max(gmax2, yg)
		b := gmax + yg
		if b <= 0 {
			continue
		}
		a := kii + s.kij(t, t) - 2*s.kij(i, t)
		if a <= 0 {
			a = svmTau
		}
		if v := -b * b / a; v <= best {
			best, j = v, t
		}
	}
	return i, j, gmax + gmax2
}

// update solves the two-variable subproblem in (i, j) and updates G
// (LIBSVM's update and clipping, verbatim in meaning).
func (s *smo) update(i, j int) {
	s.qRow(i, s.rowI)
	s.qRow(j, s.rowJ)
	ci, cj := s.c[i], s.c[j]
	ai, aj := s.alpha[i], s.alpha[j]
	a := s.rowI[i] + s.rowJ[j]
	if s.y[i] != s.y[j] {
		quad := a + 2*s.rowI[j]
		if quad <= 0 {
			quad = svmTau
		}
		delta := (-s.g[i] - s.g[j]) / quad
		diff := ai - aj
		s.alpha[i] += delta
		s.alpha[j] += delta
		if diff > 0 {
			if s.alpha[j] < 0 {
				s.alpha[j], s.alpha[i] = 0, diff
			}
		} else if s.alpha[i] < 0 {
			s.alpha[i], s.alpha[j] = 0, -diff
		}
		if diff > ci-cj {
			if s.alpha[i] > ci {
				s.alpha[i], s.alpha[j] = ci, ci-diff
			}
		} else if s.alpha[j] > cj {
			s.alpha[j], s.alpha[i] = cj, cj+diff
		}
	} else {
		quad := a - 2*s.rowI[j]
		if quad <= 0 {
			quad = svmTau
		}
		delta := (s.g[i] - s.g[j]) / quad
		sum := ai + aj
		s.alpha[i] -= delta
		s.alpha[j] += delta
		if sum > ci {
			if s.alpha[i] > ci {
				s.alpha[i], s.alpha[j] = ci, sum-ci
			}
		} else if s.alpha[j] < 0 {
			s.alpha[j], s.alpha[i] = 0, sum
		}
		if sum > cj {
			if s.alpha[j] > cj {
				s.alpha[j], s.alpha[i] = cj, sum-cj
			}
		} else if s.alpha[i] < 0 {
			s.alpha[i], s.alpha[j] = 0, sum
		}
	}
	di, dj := s.alpha[i]-ai, s.alpha[j]-aj
	for t := range s.g {
		s.g[t] += s.rowI[t]*di + s.rowJ[t]*dj
	}
}

// model assembles the SVM: the bias as LIBSVM's calculate_rho (b = -rho),
// the support vectors, training decision values y_t (G_t + 1) + b and the
// dual objective 1/2 sum a_t (G_t - 1).
func (s *smo) model(iter int) *SVM {
	ub, lb := math.Inf(1), math.Inf(-1)
	sumFree, nFree := 0.0, 0
	m := &SVM{Alpha: s.alpha, Y: s.y, Iterations: iter, Violation: s.viol, Train: make([]float64, s.n)}
	for t := range s.n {
		yg := float64(s.y[t]) * s.g[t]
		switch {
		case s.alpha[t] >= s.c[t]:
			if s.y[t] < 0 {
				ub = min(ub, yg)
			} else {
				lb = max(lb, yg)
			}
		case s.alpha[t] <= 0:
			if s.y[t] > 0 {
				ub = min(ub, yg)
			} else {
				lb = max(lb, yg)
			}
		default:
			sumFree += yg
			nFree++
		}
		if s.alpha[t] > 0 {
			m.SV = append(m.SV, t)
		}
		m.Objective += 0.5 * s.alpha[t] * (s.g[t] - 1)
	}
	rho := (ub + lb) / 2
	if nFree > 0 {
		rho = sumFree / float64(nFree)
	}
	m.Bias = -rho
	for t := range s.n {
		m.Train[t] = float64(s.y[t])*(s.g[t]+1) + m.Bias
	}
	return m
}

// Decision returns f(x) for a new point given its kernel values against the
// training points, row[i] = k(x_i, x) (len(row) must be the training size).
func (m *SVM) Decision(row []float64) float64 {
	f := m.Bias
	for _, i := range m.SV {
		f += m.Alpha[i] * float64(m.Y[i]) * row[i]
	}
	return f
}

// OVR is a one-vs-rest multi-class SVM: one binary SVM per class (that class
// +1, the others -1); the prediction is the class of largest decision value.
type OVR struct {
	Models []*SVM // one per class
}

// TrainOVR trains one SVM per class on labels 0..C-1 (C >= 2, every class
// present), all with the same options. Errors are as TrainSVM's.
func TrainOVR(ctx context.Context, k *mat.SymDense, labels []int, opt SVMOptions) (*OVR, error) {
	classes := 0
	for i, l := range labels {
		if l < 0 {
			return nil, inputErr("svm: label %d of point %d is negative", l, i)
		}
		classes = max(classes, l+1)
	}
	if classes < 2 {
		return nil, inputErr("svm: one-vs-rest needs at least 2 classes, got %d", classes)
	}
	o := &OVR{Models: make([]*SVM, classes)}
	y := make([]int, len(labels))
	for c := range classes {
		for i, l := range labels {
			y[i] = -1
			if l == c {
				y[i] = 1
			}
		}
		m, err := TrainSVM(ctx, k, y, opt)
		if err != nil {
			return nil, fmt.Errorf("class %d: %w", c, err)
		}
		o.Models[c] = m
	}
	return o, nil
}

// Decision returns the decision value of every class for a new point given
// its kernel row against the training points.
func (o *OVR) Decision(row []float64) []float64 {
	out := make([]float64, len(o.Models))
	for c, m := range o.Models {
		out[c] = m.Decision(row)
	}
	return out
}

// Predict returns the class of largest decision value (the lowest on ties).
func (o *OVR) Predict(row []float64) int {
	d := o.Decision(row)
	best := 0
	for c, v := range d {
		if v > d[best] {
			best = c
		}
	}
	return best
}
