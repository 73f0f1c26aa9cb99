// Package pfskl is parameter-free spectral kernel learning (Mao & Tsang,
// "Parameter-Free Spectral Kernel Learning"; spec
// shared/specs/mao-pfskl-and-umkl.md part A): a transductive kernel
// K = U diag(lambda) U' that shares the eigenvectors U of the normalised
// Laplacian L = I - D^-1/2 S D^-1/2 of a Gaussian-weighted kNN graph on all
// n points, with a spectrum learned from the labels.
//
// SKL (Algorithm 2) takes C and mu and sets, per eigenvalue (eq. 8),
//
//	lambda_i = [ sqrt(A_ii / (2 mu b_i)) - 1/C ]_+,  b_i = max(gamma_i, 0)^p + eps,
//
// with a = U_l' y_l and A_ii = a_i^2 (the squared row norms of U_l' Y_l for
// one-hot labels), and labels the unlabelled points by
// f_u = K_ul (K_ll + I/C)^-1 y_l. SKL_KTA (Algorithm 1) sets mu by
// kernel-target alignment in closed form (eq. 10); by Proposition 4 its
// decision values do not depend on C, mu or the scale c: they are
// f_u = (Kbar - I)_ul Kbar_ll^-1 y_l with Kbar = U diag(c w) U',
// w_i = sqrt(A_ii / (2 b_i)). Fit computes them through the faithful path
// (the unclipped lambda at C, the RLS solve with K_ll + I/C); the tests check
// that it equals the simplified K~_ul K~_ll^-1 y_l.
//
// Numerical pitfalls (spec A.8): the graph's connected components are
// counted and reported; the null space of L, one eigenvector per component,
// is replaced by its exact basis D^1/2 1_comp / ||.|| before a = U_l' y_l is
// formed, so the result does not depend on the eigensolver's arbitrary basis
// of that repeated eigenvalue. Other repeated eigenvalues remain a property
// of the method, not fixed here.
//
// The learner "pfskl" (KindKernel; needs features and labels, some of them
// Unlabeled) outputs the learned kernel over all n points: Kbar for
// algorithm "skl-kta", K for "skl" (both PSD). The transductive decision
// values, which the kernel alone does not give, come from Fit.
package pfskl

import (
	"context"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// Name is the registry name of the learner.
const Name = "pfskl"

const needs = learners.NeedFeatures | learners.NeedLabels

func init() {
	learners.Register(learners.Spec{
		Name: Name,
		Kind: learners.KindKernel,
		Doc: "Parameter-free spectral kernel learning (Mao & Tsang): a transductive kernel on the eigenvectors of the " +
			"normalised Laplacian of a Gaussian kNN graph, its spectrum set in closed form from the labels; skl-kta sets " +
			"mu by kernel-target alignment (no parameter but the graph's), skl takes C and mu. Needs features and labels " +
			"(unlabelled points marked); the output kernel is over all points.",
		Needs: needs,
		Params: []learners.Param{
			learners.Enum("algorithm", "skl-kta", []string{"skl-kta", "skl"}, "skl-kta (Algorithm 1, parameter-free) or skl (Algorithm 2, given C and mu)"),
			learners.Int("k", 10, 1, 1<<20, "nearest neighbours of the graph (OR-symmetrised)"),
			learners.Int("p", 1, 1, 10, "Laplacian degree: the eigenvalues of L^p are used"),
			learners.Positive("eps", 1e-6, "ridge added to the Laplacian eigenvalues (not given by the paper)"),
			learners.Positive("C", 1, "RLS trade-off (skl; skl-kta's decision values do not depend on it)"),
			learners.Positive("mu", 1, "manifold weight (skl only)"),
		},
		New: func(v learners.Values) (learners.Learner, error) {
			return Learner{Graph: GraphParams{K: v.Int("k"), P: v.Int("p"), Eps: v.Float("eps")},
				KTA: v.String("algorithm") == "skl-kta", C: v.Float("C"), Mu: v.Float("mu")}, nil
		},
	})
}

// GraphParams are the graph's: k nearest neighbours, Laplacian degree p and ridge eps.
type GraphParams struct {
	K, P int
	Eps  float64
}

// Learner is the registered learner.
type Learner struct {
	Graph GraphParams
	KTA   bool    // Algorithm 1 (else Algorithm 2 with C and Mu)
	C, Mu float64 // C for both (the faithful path of SKL_KTA); Mu for SKL
}

var _ learners.Learner = (*Learner)(nil)

// Fit learns the kernel over all points of in from the labelled ones.
func (l Learner) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	labelled, y, err := Targets(in.Labels)
	if err != nil {
		return nil, err
	}
	sp, err := NewSpectrum(ctx, in.Features, l.Graph)
	if err != nil {
		return nil, err
	}
	res, err := sp.Fit(labelled, y, l.KTA, l.C, l.Mu)
	if err != nil {
		return nil, err
	}
	return &learners.Output{Kernel: sp.Kernel(res.Lambda), Stats: learners.Stats{Converged: true, Objective: res.Objective}}, nil
}

// Targets returns the labelled points of labels (class indices or
// learners.Unlabeled) and their targets: one column of +1 (class 1) / -1
// (class 0) for two classes, one-hot columns for more. Every class index
// below the largest must occur among the labelled points.
func Targets(labels []int) ([]int, *mat.Dense, error) {
	var idx []int
	classes := 0
	for i, c := range labels {
		if c != learners.Unlabeled {
			idx = append(idx, i)
			classes = max(classes, c+1)
		}
	}
	count := make([]int, classes)
	for _, i := range idx {
		count[labels[i]]++
	}
	for c, k := range count {
		if k == 0 {
			return nil, nil, fmt.Errorf("%w: pfskl: class %d has no labelled point", learners.ErrInput, c)
		}
	}
	if classes < 2 {
		return nil, nil, fmt.Errorf("%w: pfskl: the labelled points must hold at least 2 classes, got %d", learners.ErrInput, classes)
	}
	if len(idx) == len(labels) {
		return nil, nil, fmt.Errorf("%w: pfskl: every point is labelled: a transductive learner needs unlabelled points", learners.ErrInput)
	}
	cols := classes
	if classes == 2 {
		cols = 1
	}
	y := mat.NewDense(len(idx), cols, nil)
	for r, i := range idx {
		switch {
		case classes == 2 && labels[i] == 1:
			y.Set(r, 0, 1)
		case classes == 2:
			y.Set(r, 0, -1)
		default:
			y.Set(r, labels[i], 1)
		}
	}
	return idx, y, nil
}

// Result is one PF-SKL fit on a Spectrum.
type Result struct {
	Labelled, Unlabelled []int
	// F holds the decision values of the unlabelled points (rows, in the
	// order of Unlabelled), one column per target column.
	F *mat.Dense
	// Lambda is the learned spectrum: c w for SKL_KTA (Kbar), eq. (8) for SKL.
	Lambda []float64
	// C and Mu are the trade-off used and mu: mu* of eq. (10) for SKL_KTA.
	C, Mu float64
	// Scale is SKL_KTA's c of Proposition 4 (1 when it degenerates; 0 for SKL).
	Scale float64
	// SStar is s* = mu*^(-1/2) with its sign (SKL_KTA; see spec A.6: it can be negative).
	SStar float64
	// Objective is the alignment of the unclipped kernel at |s*| (SKL_KTA) or F(lambda) of eq. (7) (SKL).
	Objective float64
}

// Predict returns the predicted class of every unlabelled point (see Classify).
func (r *Result) Predict() []int { return Classify(r.F) }

// Classify turns decision values (a row per point) into classes: for one
// column its sign (1 if > 0, else 0, as Targets codes two classes), for
// more the column of the largest value (the lowest on ties).
func Classify(f *mat.Dense) []int {
	rows, cols := f.Dims()
	out := make([]int, rows)
	for i := range rows {
		row := f.RawRowView(i)
		if cols == 1 {
			if row[0] > 0 {
				out[i] = 1
			}
			continue
		}
		for c, v := range row {
			if v > row[out[i]] {
				out[i] = c
			}
		}
	}
	return out
}

// Fit runs SKL_KTA (kta) or SKL with the given C and mu for the labelled
// points (rows of y, in that order) and labels the others.
func (sp *Spectrum) Fit(labelled []int, y *mat.Dense, kta bool, c, mu float64) (*Result, error) {
	n := len(sp.B)
	if err := sp.checkLabelled(labelled, y); err != nil {
		return nil, err
	}
	if !(c > 0) || math.IsInf(c, 0) || !(mu > 0) || math.IsInf(mu, 0) {
		return nil, fmt.Errorf("%w: pfskl: C and mu must be positive and finite, got %v and %v", learners.ErrInput, c, mu)
	}
	res := &Result{Labelled: labelled, C: c, Mu: mu, Lambda: make([]float64, n)}
	isLab := make([]bool, n)
	for _, i := range labelled {
		isLab[i] = true
	}
	for i := range n {
		if !isLab[i] {
			res.Unlabelled = append(res.Unlabelled, i)
		}
	}
	a := sp.TargetSpectrum(labelled, y)
	// lambda_i = shift + scale_i with the RLS solve on K_ll + I/C.
	lam := make([]float64, n)
	if kta {
		var yty mat.Dense
		yty.Mul(y.T(), y)
		k := sp.alignment(a, c, mat.Norm(&yty, 2)*mat.Norm(&yty, 2))
		res.Scale, res.SStar, res.Mu, res.Objective = k.scale, k.sStar, k.mu, k.kta
		for i := range n {
			res.Lambda[i] = k.scale * k.w[i]
			lam[i] = (k.scale*k.w[i] - 1) / c // the unclipped lambda of Proposition 4
		}
	} else {
		for i, aii := range a {
			res.Lambda[i] = math.Max(0, math.Sqrt(aii/(2*mu*sp.B[i]))-1/c)
			lam[i] = res.Lambda[i]
			res.Objective += 0.5*aii/(lam[i]+1/c) + mu*lam[i]*sp.B[i]
		}
	}
	f, err := sp.rls(labelled, res.Unlabelled, y, lam, 1/c)
	if err != nil {
		return nil, err
	}
	res.F = f
	return res, nil
}

func (sp *Spectrum) checkLabelled(labelled []int, y *mat.Dense) error {
	n := len(sp.B)
	rows, _ := y.Dims()
	if rows != len(labelled) || len(labelled) == 0 || len(labelled) >= n {
		return fmt.Errorf("%w: pfskl: %d targets for %d labelled of %d points (want 1..n-1 labelled, one target row each)", learners.ErrInput, rows, len(labelled), n)
	}
	seen := make([]bool, n)
	for _, i := range labelled {
		if i < 0 || i >= n || seen[i] {
			return fmt.Errorf("%w: pfskl: labelled index %d is out of range or repeated", learners.ErrInput, i)
		}
		seen[i] = true
	}
	return nil
}

// TargetSpectrum returns A_ii = ||row i of U_l' Y_l||^2 for the labelled
// points (rows of y in that order). They sum to ||Y_l||_F^2 (= n_l).
func (sp *Spectrum) TargetSpectrum(labelled []int, y *mat.Dense) []float64 {
	n := len(sp.B)
	ul := sp.rows(labelled)
	var g mat.Dense
	g.Mul(ul.T(), y)
	a := make([]float64, n)
	for i := range n {
		for _, v := range g.RawRowView(i) {
			a[i] += v * v
		}
	}
	return a
}

// rows returns the rows idx of U.
func (sp *Spectrum) rows(idx []int) *mat.Dense {
	n := len(sp.B)
	out := mat.NewDense(len(idx), n, nil)
	for r, i := range idx {
		out.SetRow(r, sp.U.RawRowView(i))
	}
	return out
}

// rls returns f_u = K_ul (K_ll + ridge I)^-1 y with K = U diag(lam) U'.
// With every lam_i = 0 (SKL with mu too large) K = 0 and f = 0.
func (sp *Spectrum) rls(lab, unl []int, y *mat.Dense, lam []float64, ridge float64) (*mat.Dense, error) {
	ul, uu := sp.rows(lab), sp.rows(unl)
	scaled := mat.DenseCopyOf(ul)
	for r := range len(lab) {
		row := scaled.RawRowView(r)
		for i := range row {
			row[i] *= lam[i]
		}
	}
	var kll, kul mat.Dense
	kll.Mul(scaled, ul.T())
	kul.Mul(uu, scaled.T())
	for i := range len(lab) {
		kll.Set(i, i, kll.At(i, i)+ridge)
	}
	alpha, err := solveSPD(&kll, y)
	if err != nil {
		return nil, err
	}
	var f mat.Dense
	f.Mul(&kul, alpha)
	return &f, nil
}

// solveSPD solves A X = B for a symmetric A (stored full) that is positive
// definite up to rounding: Cholesky, then Cholesky with a jitter of
// 1e-10 tr(A)/m, then LU (spec A.8's fallbacks).
func solveSPD(a *mat.Dense, b *mat.Dense) (*mat.Dense, error) {
	m, _ := a.Dims()
	sym := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			sym.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	var x mat.Dense
	var ch mat.Cholesky
	if ch.Factorize(sym) && ch.SolveTo(&x, b) == nil {
		return &x, nil
	}
	jitter := 1e-10 * mat.Trace(sym) / float64(m)
	for i := range m {
		sym.SetSym(i, i, sym.At(i, i)+jitter)
	}
	if ch.Factorize(sym) && ch.SolveTo(&x, b) == nil {
		return &x, nil
	}
	var lu mat.LU
	lu.Factorize(a)
	if err := lu.SolveTo(&x, false, b); err != nil {
		return nil, fmt.Errorf("pfskl: the labelled block of the kernel is singular: %w", err)
	}
	return &x, nil
}

// Kernel returns U diag(lambda) U' over all points.
func (sp *Spectrum) Kernel(lambda []float64) *mat.SymDense {
	n := len(lambda)
	w := mat.NewDense(n, n, nil)
	for r := range n {
		src, dst := sp.U.RawRowView(r), w.RawRowView(r)
		for i, l := range lambda {
			dst[i] = src[i] * math.Sqrt(l)
		}
	}
	k := mat.NewSymDense(n, nil)
	k.SymOuterK(1, w)
	return k
}
