// Package tlk is the transferred learning of the kernel of Abbasnejad's
// thesis, ch. 4 (spec shared/specs/abbasnejad-thesis.md section 2): a
// conformal, data-dependent kernel
//
//	kappa(x, x') = q(x) q(x') k(x, x'),  q(x) = alpha_0 + sum_l alpha_l h(x, s_l),
//	h(x, s) = exp(-||x - s||^2 / (2 sigma))   (sigma not squared, as eq. 4.2),
//
// over a base kernel k (polynomial (gamma x.y + c0)^degree), the s_l the
// support vectors of a C-SVM on the labelled points X. alpha maximises the
// ratio
//
//	J(alpha) = tr(S_b) / (tr(S_w) + lambda tr(Delta)) = alpha'M alpha / alpha'N_lambda alpha
//
// of the Fisher between- and within-class scatter of the mapped labelled
// points and the squared MMD between them and the auxiliary points Y (eq.
// 4.6): M = H_X' B0 H_X, N = H_X' W0 H_X and
// D = H_Z' (K_Z o ee') H_Z, e = [1_n/n; -1_m/m], with
// B0 = blockdiag_c(K_cc / n_c) - K/n and W0 = diag(K) - blockdiag_c(K_cc / n_c)
// (spec 2.3, which fixes the thesis' 1/n^2 and 1/n_c^2 to Xiong et al.'s
// 1/n_c). lambda = 0 is the FDA-optimised kernel of Xiong et al. 2005, the
// thesis' "Optimized" baseline.
//
// Two solvers (spec 2.4): "eigen", the top generalised eigenvector of
// (M, N_lambda + eps I) by Cholesky and a symmetric eigensolve; "gradient"
// (the default, the thesis' algorithm, eq. 4.15), ascent from alpha = e_0
// (q = 1: the base kernel) with step eta0 (1 - t/N), N = iterations,
// eta0 moving alpha by 10% of its norm, a step halved while it lowers J,
// stopping when J changes by less than 1e-10 relative. alpha is finally
// scaled so that q averages 1 over X, keeping kappa on k's scale for a
// fixed SVM C.
//
// The auxiliary set is filtered as the thesis says ("KNN on the auxiliary
// dataset to find the most related points", k = 15), read as the union of
// every labelled point's 15 nearest auxiliary points.
//
// [Extension: the thesis runs two classes; with more, the support vectors
// are the union of one-vs-rest SVMs', and the scatter formulas are the
// general l-class ones.]
//
// The learner "tlk" (KindKernel; needs features and labels) takes the
// labelled points as X and the unlabelled ones as the raw auxiliary set, and
// outputs kappa over all n points (PSD for any alpha: Q K Q). Train gives
// the model itself, for kernels against new points.
package tlk

import (
	"context"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Name is the registry name of the learner.
const Name = "tlk"

const needs = learners.NeedFeatures | learners.NeedLabels

func init() {
	learners.Register(learners.Spec{
		Name: Name,
		Kind: learners.KindKernel,
		Doc: "Transferred learning of the kernel (Abbasnejad 2010, ch. 4): a conformal kernel q(x)q(x')k(x,x') on a " +
			"polynomial base kernel, q a sum of Gaussian bumps on the support vectors of an SVM, maximising the Fisher " +
			"ratio of the labelled points with an MMD penalty towards the unlabelled (auxiliary) points; lambda = 0 is " +
			"Xiong et al.'s FDA-optimised kernel. Needs features and labels; unlabelled points are the auxiliary set.",
		Needs: needs,
		Params: []learners.Param{
			learners.Float("lambda", 1, 0, math.Inf(1), "weight of the MMD to the auxiliary points (0: FDA-optimised kernel; not given by the thesis)"),
			learners.Bool("relative", false, "lambda is relative: the weight is lambda tr(S_w)/tr(Delta) of the base kernel (spec 2.6's scale-free reading)"),
			learners.Positive("sigma", 5, "bump width: h(x,s) = exp(-||x-s||^2/(2 sigma)), sigma not squared"),
			learners.Int("knn", 15, 1, 1<<20, "auxiliary points kept per labelled point (its nearest)"),
			learners.Positive("C", 1, "C of the SVM whose support vectors carry the bumps"),
			learners.Int("degree", 2, 1, 10, "degree of the polynomial base kernel"),
			learners.Float("gamma", 0, 0, math.Inf(1), "scale of x.y in the base kernel; 0 for 1/d (LibSVM's default)"),
			learners.Float("coef0", 0, 0, math.Inf(1), "constant of the base kernel"),
			learners.Enum("solver", "gradient", []string{"gradient", "eigen"}, "gradient ascent (eq. 4.15) or the top generalised eigenvector"),
			learners.Int("iterations", 200, 1, 1_000_000, "gradient-ascent iterations N"),
		},
		New: func(v learners.Values) (learners.Learner, error) {
			return Learner{Config{Lambda: v.Float("lambda"), Relative: v.Bool("relative"), Sigma: v.Float("sigma"), KNN: v.Int("knn"), C: v.Float("C"),
				Degree: v.Int("degree"), Gamma: v.Float("gamma"), Coef0: v.Float("coef0"),
				Eigen: v.String("solver") == "eigen", Iterations: v.Int("iterations")}}, nil
		},
	})
}

// Config holds TLK's settings (spec 2.6).
type Config struct {
	Lambda, Sigma float64
	// Relative scales Lambda by tr(S_w)/tr(Delta) at alpha = e_0 (the base
	// kernel): tr(S_w) sums over the n points while tr(Delta) is an MMD^2,
	// so an absolute lambda of 1 leaves the transfer term negligible.
	Relative     bool
	KNN          int
	C            float64
	Degree       int
	Gamma, Coef0 float64 // Gamma 0 means 1/d
	Eigen        bool    // Solver A (else B, gradient ascent)
	Iterations   int
}

// Learner is the registered learner.
type Learner struct{ Config }

var _ learners.Learner = (*Learner)(nil)

// Fit learns kappa over all points: the labelled ones are X, the others Y_raw.
func (l Learner) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	var lab, aux []int
	for i, c := range in.Labels {
		if c == learners.Unlabeled {
			aux = append(aux, i)
		} else {
			lab = append(lab, i)
		}
	}
	x := rowsOf(in.Features, lab)
	y := make([]int, len(lab))
	for r, i := range lab {
		y[r] = in.Labels[i]
	}
	m, err := Train(ctx, x, y, rowsOf(in.Features, aux), l.Config)
	if err != nil {
		return nil, err
	}
	q := m.Q(in.Features)
	k := m.base(in.Features, in.Features)
	n := len(q)
	out := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			out.SetSym(i, j, q[i]*q[j]*k.At(i, j))
		}
	}
	return &learners.Output{Kernel: out, Stats: learners.Stats{Objective: m.J, Iterations: m.Iterations, Converged: m.Converged}}, nil
}

// Model is a trained TLK kernel.
type Model struct {
	SV        *mat.Dense // the p support vectors s_l (rows)
	Alpha     []float64  // alpha_0..alpha_p, scaled so that q averages 1 over X
	Aux       []int      // the auxiliary rows kept by the kNN filter
	J         float64    // the ratio reached
	JBase     float64    // J(e_0): the base kernel's ratio
	Lambda    float64    // the MMD weight used (Config.Lambda, scaled when Relative)
	Converged bool       // gradient ascent stopped on its tolerance (always true for eigen)
	// Iterations of gradient ascent (0 for eigen).
	Iterations int
	cfg        Config
	gamma      float64
	M, N, D    *mat.SymDense // the quadratic forms, (p+1) x (p+1)
}

// Train fits the model on labelled rows x with classes y (0..c-1, c >= 2)
// and the raw auxiliary rows aux (may be empty: then TLK is FDA).
func Train(ctx context.Context, x *mat.Dense, y []int, aux *mat.Dense, cfg Config) (*Model, error) {
	n, d := x.Dims()
	if n < 2 {
		return nil, fmt.Errorf("%w: tlk: %d labelled point(s)", learners.ErrInput, n)
	}
	if aux != nil {
		if _, ad := aux.Dims(); ad != d {
			return nil, fmt.Errorf("%w: tlk: auxiliary rows have %d features, want %d", learners.ErrInput, ad, d)
		}
	}
	m := &Model{cfg: cfg, gamma: cfg.Gamma}
	if m.gamma == 0 {
		m.gamma = 1 / float64(d)
	}
	sv, err := m.supportVectors(ctx, x, y)
	if err != nil {
		return nil, err
	}
	m.SV = rowsOf(x, sv)
	var ya *mat.Dense
	if aux != nil && cfg.Lambda > 0 {
		m.Aux = filterAux(x, aux, cfg.KNN)
		ya = rowsOf(aux, m.Aux)
	}
	m.forms(x, y, ya)
	m.Lambda = cfg.Lambda
	if cfg.Relative && m.D.At(0, 0) > 0 {
		m.Lambda *= m.N.At(0, 0) / m.D.At(0, 0)
	}
	nl := mat.NewSymDense(len(sv)+1, nil)
	nl.ScaleSym(m.Lambda, m.D)
	nl.AddSym(nl, m.N)
	e0 := make([]float64, len(sv)+1)
	e0[0] = 1
	m.JBase = ratio(m.M, nl, e0)
	var alpha []float64
	if cfg.Eigen {
		alpha, m.J, err = topGeneralised(m.M, nl)
		m.Converged = true
	} else {
		alpha, m.J, m.Iterations, m.Converged, err = ascend(ctx, m.M, nl, e0, cfg.Iterations)
	}
	if err != nil {
		return nil, err
	}
	m.Alpha = alpha
	if mean := floats.Sum(m.Q(x)) / float64(n); mean != 0 && !math.IsNaN(mean) {
		floats.Scale(1/mean, m.Alpha)
	}
	return m, nil
}

// supportVectors trains the C-SVM (one-vs-rest beyond two classes) on the
// base kernel and returns its support vectors (the union, ascending).
func (m *Model) supportVectors(ctx context.Context, x *mat.Dense, y []int) ([]int, error) {
	n, _ := x.Dims()
	classes := 0
	for i, c := range y {
		if c < 0 {
			return nil, fmt.Errorf("%w: tlk: class %d of labelled point %d", learners.ErrInput, c, i)
		}
		classes = max(classes, c+1)
	}
	kb := m.base(x, x)
	k := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			k.SetSym(i, j, kb.At(i, j))
		}
	}
	var models []*kernelmath.SVM
	if classes == 2 {
		pm := make([]int, n)
		for i, c := range y {
			pm[i] = 2*c - 1
		}
		s, err := kernelmath.TrainSVM(ctx, k, pm, kernelmath.SVMOptions{C: m.cfg.C})
		if err != nil {
			return nil, fmt.Errorf("tlk: %w", err)
		}
		models = append(models, s)
	} else {
		o, err := kernelmath.TrainOVR(ctx, k, y, kernelmath.SVMOptions{C: m.cfg.C})
		if err != nil {
			return nil, fmt.Errorf("tlk: %w", err)
		}
		models = o.Models
	}
	is := make([]bool, n)
	for _, s := range models {
		for _, i := range s.SV {
			is[i] = true
		}
	}
	var sv []int
	for i, ok := range is {
		if ok {
			sv = append(sv, i)
		}
	}
	return sv, nil
}

// base returns k(a_i, b_j) = (gamma a_i.b_j + c0)^degree.
func (m *Model) base(a, b *mat.Dense) *mat.Dense {
	var k mat.Dense
	k.Mul(a, b.T())
	k.Apply(func(_, _ int, v float64) float64 { return math.Pow(m.gamma*v+m.cfg.Coef0, float64(m.cfg.Degree)) }, &k)
	return &k
}

// design returns H: row i is [1, h(x_i, s_1), ..., h(x_i, s_p)].
func (m *Model) design(x *mat.Dense) *mat.Dense {
	n, _ := x.Dims()
	p, _ := m.SV.Dims()
	h := mat.NewDense(n, p+1, nil)
	for i := range n {
		h.Set(i, 0, 1)
		for l := range p {
			dist := floats.Distance(x.RawRowView(i), m.SV.RawRowView(l), 2)
			h.Set(i, l+1, math.Exp(-dist*dist/(2*m.cfg.Sigma)))
		}
	}
	return h
}

// Q returns q(x) for the rows of x.
func (m *Model) Q(x *mat.Dense) []float64 {
	var q mat.VecDense
	q.MulVec(m.design(x), mat.NewVecDense(len(m.Alpha), m.Alpha))
	return q.RawVector().Data
}

// Cross returns kappa(a_i, b_j) = q(a_i) q(b_j) k(a_i, b_j).
func (m *Model) Cross(a, b *mat.Dense) *mat.Dense {
	k := m.base(a, b)
	qa, qb := m.Q(a), m.Q(b)
	k.Apply(func(i, j int, v float64) float64 { return qa[i] * qb[j] * v }, k)
	return k
}

// forms builds M, N and D (spec 2.3) for labelled x (classes y) and the
// filtered auxiliary rows ya (nil: D = 0).
func (m *Model) forms(x *mat.Dense, y []int, ya *mat.Dense) {
	n, _ := x.Dims()
	count := map[int]float64{}
	for _, c := range y {
		count[c]++
	}
	kx := m.base(x, x)
	b0 := mat.NewDense(n, n, nil)
	w0 := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			block := 0.0
			if y[i] == y[j] {
				block = kx.At(i, j) / count[y[i]]
			}
			b0.Set(i, j, block-kx.At(i, j)/float64(n))
			w0.Set(i, j, -block)
		}
		w0.Set(i, i, w0.At(i, i)+kx.At(i, i))
	}
	hx := m.design(x)
	m.M, m.N = quadForm(hx, b0, hx), quadForm(hx, w0, hx)
	p1 := len(hx.RawRowView(0))
	m.D = mat.NewSymDense(p1, nil)
	if ya == nil {
		return
	}
	na, _ := ya.Dims()
	hy := m.design(ya)
	// D = H_Z' (K_Z o ee') H_Z, e = [1/n; -1/na]: the joint form.
	z := mat.NewDense(n+na, len(x.RawRowView(0)), nil)
	z.Stack(x, ya)
	hz := mat.NewDense(n+na, p1, nil)
	hz.Stack(hx, hy)
	kz := m.base(z, z)
	e := make([]float64, n+na)
	for i := range e {
		e[i] = 1 / float64(n)
		if i >= n {
			e[i] = -1 / float64(na)
		}
	}
	kz.Apply(func(i, j int, v float64) float64 { return v * e[i] * e[j] }, kz)
	m.D = quadForm(hz, kz, hz)
}

// quadForm returns the symmetric part of A' K B.
func quadForm(a, k, b *mat.Dense) *mat.SymDense {
	var t, r mat.Dense
	t.Mul(k, b)
	r.Mul(a.T(), &t)
	p, _ := r.Dims()
	out := mat.NewSymDense(p, nil)
	for i := range p {
		for j := i; j < p; j++ {
			out.SetSym(i, j, (r.At(i, j)+r.At(j, i))/2)
		}
	}
	return out
}

// ratio is J(alpha) = alpha'M alpha / alpha'N alpha.
func ratio(m, n *mat.SymDense, alpha []float64) float64 {
	v := mat.NewVecDense(len(alpha), alpha)
	return mat.Inner(v, m, v) / mat.Inner(v, n, v)
}

// topGeneralised is Solver A: the top eigenvector of (M, N + eps I),
// eps = 1e-10 tr(N)/(p+1), raised 100-fold while Cholesky fails.
func topGeneralised(m, n *mat.SymDense) ([]float64, float64, error) {
	p := m.SymmetricDim()
	eps := 1e-10 * math.Max(mat.Trace(n), 1e-300) / float64(p)
	var ch mat.Cholesky
	reg := mat.NewSymDense(p, nil)
	for range 20 {
		reg.CopySym(n)
		for i := range p {
			reg.SetSym(i, i, reg.At(i, i)+eps)
		}
		if ch.Factorize(reg) {
			break
		}
		eps *= 100
	}
	var l mat.TriDense
	ch.LTo(&l)
	// C = L^-1 M L^-T.
	var li mat.TriDense
	if err := li.InverseTri(&l); err != nil {
		return nil, 0, fmt.Errorf("tlk: %w", err)
	}
	var t, c mat.Dense
	t.Mul(&li, m)
	c.Mul(&t, li.T())
	cs := mat.NewSymDense(p, nil)
	for i := range p {
		for j := i; j < p; j++ {
			cs.SetSym(i, j, (c.At(i, j)+c.At(j, i))/2)
		}
	}
	vals, vecs, err := kernelmath.Eigen(cs)
	if err != nil {
		return nil, 0, fmt.Errorf("tlk: %w", err)
	}
	var alpha mat.VecDense
	alpha.MulVec(li.T(), vecs.ColView(p-1))
	return alpha.RawVector().Data, vals[p-1], nil
}

// direction is (M/J2 - J1/J2^2 N) alpha, half the gradient of J.
func direction(m, n *mat.SymDense, alpha []float64) []float64 {
	v := mat.NewVecDense(len(alpha), alpha)
	var ma, na mat.VecDense
	ma.MulVec(m, v)
	na.MulVec(n, v)
	j1, j2 := mat.Dot(v, &ma), mat.Dot(v, &na)
	g := make([]float64, len(alpha))
	for i := range g {
		g[i] = ma.AtVec(i)/j2 - j1/(j2*j2)*na.AtVec(i)
	}
	return g
}

// ascend is Solver B (eq. 4.15): alpha += eta(t) (M/J2 - J1/J2^2 N) alpha.
func ascend(ctx context.Context, m, n *mat.SymDense, alpha []float64, iters int) ([]float64, float64, int, bool, error) {
	alpha = append([]float64(nil), alpha...)
	j := ratio(m, n, alpha)
	g := direction(m, n, alpha)
	gn := floats.Norm(g, 2)
	if gn == 0 {
		return alpha, j, 0, true, nil
	}
	eta0 := 0.1 * floats.Norm(alpha, 2) / gn
	for t := range iters {
		if err := ctx.Err(); err != nil {
			return nil, 0, t, false, err
		}
		eta := eta0 * (1 - float64(t)/float64(iters))
		var next []float64
		nj := math.Inf(-1)
		for range 50 {
			next = append([]float64(nil), alpha...)
			floats.AddScaled(next, eta, g)
			if nj = ratio(m, n, next); nj >= j {
				break
			}
			eta /= 2
		}
		if !(nj >= j) { // no step raises J: a stationary point
			return alpha, j, t, true, nil
		}
		done := math.Abs(nj-j) < 1e-10*math.Abs(j)
		alpha, j = next, nj
		if done {
			return alpha, j, t + 1, true, nil
		}
		g = direction(m, n, alpha)
	}
	return alpha, j, iters, false, nil
}

// filterAux returns the auxiliary rows among the k nearest (Euclidean) of
// any labelled point, ascending: kernelmath.NearestNeighbors over [X; aux]
// with the distances among labelled points set to +Inf.
func filterAux(x, aux *mat.Dense, k int) []int {
	n, d := x.Dims()
	na, _ := aux.Dims()
	z := mat.NewDense(n+na, d, nil)
	z.Stack(x, aux)
	dist := kernelmath.SqDistances(z)
	for i := range n {
		for j := i + 1; j < n; j++ {
			dist.SetSym(i, j, math.Inf(1))
		}
	}
	keep := make([]bool, na)
	for _, nbs := range kernelmath.NearestNeighbors(dist, k)[:n] {
		for _, j := range nbs {
			if j >= n {
				keep[j-n] = true
			}
		}
	}
	var out []int
	for a, ok := range keep {
		if ok {
			out = append(out, a)
		}
	}
	return out
}

// rowsOf returns the rows idx of x (nil for none).
func rowsOf(x *mat.Dense, idx []int) *mat.Dense {
	if len(idx) == 0 {
		return nil
	}
	_, d := x.Dims()
	out := mat.NewDense(len(idx), d, nil)
	for r, i := range idx {
		out.SetRow(r, x.RawRowView(i))
	}
	return out
}
