package kernelmath

import (
	"context"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Plumbing shared by the supervised, SVM-based kernel-weight learners
// (learners/mkl, learners/twolayer): their common parameters, the binary
// SVM tasks of an input's labels and their summed dual, and the base
// kernels with unit-trace scales, combined over all points for the output
// and restricted to the labelled points, packed, for the iterations.

// SVMTasks are the binary C-SVM problems on the labelled points of an
// input. With two classes present there is one task, the higher class index
// +1 against the lower -1 (class 1 against class 0); with more, one task per
// class against the rest, whose duals an MKL learner sums so that all
// classes share one kernel (the multiclass MKL of Zien & Ong, ICML 2007).
type SVMTasks struct {
	Points []int   // the labelled points (indices into the input), ascending
	Y      [][]int // one +1/-1 vector over Points per task
}

// NewSVMTasks builds the tasks from class indices (Unlabeled points are left
// out). Fewer than two classes among the labelled points is an error
// wrapping ErrInput.
func NewSVMTasks(labels []int) (*SVMTasks, error) {
	var classes []int
	t := &SVMTasks{}
	for i, c := range labels {
		switch {
		case c == Unlabeled:
			continue
		case c < 0:
			return nil, inputErr("label %d of point %d is invalid", c, i)
		}
		t.Points = append(t.Points, i)
		if !slices.Contains(classes, c) {
			classes = append(classes, c)
		}
	}
	if len(classes) < 2 {
		return nil, inputErr("an SVM needs labelled points of at least two classes, got %d class(es) among %d labelled points", len(classes), len(t.Points))
	}
	slices.Sort(classes)
	if len(classes) == 2 {
		classes = classes[1:] // one task: the higher class against the lower
	}
	for _, c := range classes {
		y := make([]int, len(t.Points))
		for a, i := range t.Points {
			y[a] = -1
			if labels[i] == c {
				y[a] = 1
			}
		}
		t.Y = append(t.Y, y)
	}
	return t, nil
}

// SVMDuals is the solution of every task of an SVMTasks on one kernel.
type SVMDuals struct {
	// Value is the summed dual optimum sum_c (1'a_c - 1/2 b_c' K b_c):
	// the MKL objective at this kernel.
	Value float64
	// Beta holds b_c = a_c o y_c for every task, over the labelled points.
	Beta [][]float64
	// Support lists the positions (into SVMTasks.Points) where some b_c is
	// non-zero, ascending.
	Support []int
}

// Train trains the SVM of every task on k, a kernel over the labelled
// points (in the order of Points). Errors are TrainSVM's.
func (t *SVMTasks) Train(ctx context.Context, k *mat.SymDense, opt SVMOptions) (*SVMDuals, error) {
	d := &SVMDuals{}
	inSupport := make([]bool, len(t.Points))
	for c, y := range t.Y {
		m, err := TrainSVM(ctx, k, y, opt)
		if err != nil {
			if len(t.Y) > 1 {
				err = fmt.Errorf("task %d of %d: %w", c+1, len(t.Y), err)
			}
			return nil, err
		}
		d.Value -= m.Objective
		beta := make([]float64, len(y))
		for _, i := range m.SV {
			beta[i] = m.Alpha[i] * float64(y[i])
			inSupport[i] = true
		}
		d.Beta = append(d.Beta, beta)
	}
	for a, in := range inSupport {
		if in {
			d.Support = append(d.Support, a)
		}
	}
	return d, nil
}

// Outer returns W = sum_c b_c b_c' over the support (|Support| square),
// multiplied elementwise by h[Support, Support] when h, a matrix over the
// labelled points, is not nil: <W, K[S, S]> = sum_c b_c' (K o h) b_c.
func (d *SVMDuals) Outer(h *mat.SymDense) *mat.SymDense {
	s := len(d.Support)
	w := mat.NewSymDense(max(s, 1), nil)
	if s == 0 {
		return w
	}
	raw := w.RawSymmetric()
	for _, beta := range d.Beta {
		for a, i := range d.Support {
			if beta[i] == 0 {
				continue
			}
			row := raw.Data[a*raw.Stride : a*raw.Stride+s]
			for b := a; b < s; b++ {
				row[b] += beta[i] * beta[d.Support[b]]
			}
		}
	}
	if h != nil {
		for a, i := range d.Support {
			row := raw.Data[a*raw.Stride : a*raw.Stride+s]
			for b := a; b < s; b++ {
				row[b] *= h.At(i, d.Support[b])
			}
		}
	}
	return w
}

// KernelSet is a list of base kernels over the same n points, each with a
// scale factor applied wherever it is used, so that normalising them does
// not copy n x n matrices.
type KernelSet struct {
	Kernels []*mat.SymDense
	Scales  []float64
}

// NewKernelSet returns the kernels with scale 1. The list is copied (not
// the matrices), so that appending to the set leaves the caller's slice
// alone.
func NewKernelSet(kernels []*mat.SymDense) *KernelSet {
	s := &KernelSet{Kernels: slices.Clone(kernels), Scales: make([]float64, len(kernels))}
	for t := range s.Scales {
		s.Scales[t] = 1
	}
	return s
}

// UnitTrace sets every scale to 1 / sum_{i in points} K_ii, the unit-trace
// normalisation on those points (a kernel whose trace there is not positive
// keeps scale 1).
func (s *KernelSet) UnitTrace(points []int) {
	for t, k := range s.Kernels {
		s.Scales[t] = 1
		if tr := TraceOver(k, points); tr > 0 {
			s.Scales[t] = 1 / tr
		}
	}
}

// TraceOver returns sum_{i in points} K_ii.
func TraceOver(k *mat.SymDense, points []int) float64 {
	tr := 0.0
	for _, i := range points {
		tr += k.At(i, i)
	}
	return tr
}

// Combine sets dst (n x n) to sum_t w_t s_t K_t. Kernels of weight 0 cost
// nothing.
func (s *KernelSet) Combine(dst *mat.SymDense, w []float64) {
	out := dst.RawSymmetric()
	n := out.N
	for a := range n {
		clear(out.Data[a*out.Stride+a : a*out.Stride+n])
	}
	for t, k := range s.Kernels {
		if c := w[t] * s.Scales[t]; c != 0 {
			raw := k.RawSymmetric()
			for a := range n {
				floats.AddScaled(out.Data[a*out.Stride+a:a*out.Stride+n], c, raw.Data[a*raw.Stride+a:a*raw.Stride+n])
			}
		}
	}
}

// Restrict returns the kernels restricted to points (ascending), scaled
// and packed for the iterations of a learner (see Restricted).
func (s *KernelSet) Restrict(points []int) *Restricted {
	r := &Restricted{Points: points}
	for t, k := range s.Kernels {
		r.Add(k, s.Scales[t])
	}
	return r
}

// Restricted holds kernels restricted to a set of points, each scaled and
// stored as the packed upper triangle of K[points, points] (row a holds
// columns a..p-1), so that combining them and contracting them with a
// matrix are unit-stride loops (gonum's assembly AXPY and dot) rather than
// gathers from n x n matrices: p(p+1)/2 floats a kernel.
type Restricted struct {
	Points []int
	rows   [][]float64
	acc    []float64 // Combine's accumulator
}

// Add appends the kernel k (over all n points) with the given scale.
func (r *Restricted) Add(k *mat.SymDense, scale float64) {
	p := len(r.Points)
	row := make([]float64, 0, p*(p+1)/2)
	raw := k.RawSymmetric()
	for a, i := range r.Points {
		src := raw.Data[i*raw.Stride:]
		for _, j := range r.Points[a:] {
			row = append(row, scale*src[j])
		}
	}
	r.rows = append(r.rows, row)
}

// Combine sets dst (len(Points) square) to sum_t w_t s_t K_t[Points, Points].
// Kernels of weight 0 cost nothing.
func (r *Restricted) Combine(dst *mat.SymDense, w []float64) {
	p := len(r.Points)
	if r.acc == nil {
		r.acc = make([]float64, p*(p+1)/2)
	}
	acc := r.acc
	clear(acc)
	for t, row := range r.rows {
		if w[t] != 0 {
			floats.AddScaled(acc, w[t], row)
		}
	}
	out := dst.RawSymmetric()
	off := 0
	for a := range p {
		copy(out.Data[a*out.Stride+a:a*out.Stride+p], acc[off:off+p-a])
		off += p - a
	}
}

// Contract returns q_t = s_t <W, K_t[Points[sub], Points[sub]]> for every
// kernel, with W symmetric, len(sub) square, and sub ascending positions
// into Points. With sub under half the points (a sparse SVM) it gathers
// the entries it needs; above, it spreads W over the packed triangle and
// takes unit-stride dot products: gathering wins while the gathered entries
// are few, and loses once they approach half the triangle
// (docs/evaluation.md).
func (r *Restricted) Contract(w *mat.SymDense, sub []int) []float64 {
	p, s := len(r.Points), len(sub)
	// W's upper triangle with the off-diagonal doubled, and the packed
	// index of every entry.
	wr := w.RawSymmetric()
	vals := make([]float64, 0, s*(s+1)/2)
	idx := make([]int, 0, s*(s+1)/2)
	for a, i := range sub {
		off := i*p - i*(i-1)/2 - i // start of packed row i, minus i
		vals = append(vals, wr.Data[a*wr.Stride+a])
		idx = append(idx, off+i)
		for b, j := range sub[a+1:] {
			vals = append(vals, 2*wr.Data[a*wr.Stride+a+1+b])
			idx = append(idx, off+j)
		}
	}
	q := make([]float64, len(r.rows))
	if 2*s < p {
		for t, row := range r.rows {
			sum := 0.0
			for e, k := range idx {
				sum += vals[e] * row[k]
			}
			q[t] = sum
		}
		return q
	}
	packed := make([]float64, p*(p+1)/2)
	for e, k := range idx {
		packed[k] = vals[e]
	}
	for t, row := range r.rows {
		q[t] = floats.Dot(packed, row)
	}
	return q
}
