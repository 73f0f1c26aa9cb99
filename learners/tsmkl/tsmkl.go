// Package tsmkl is two-stage multiple kernel learning by binary
// classification of K-examples (TS-MKL; Kumar, Niculescu-Mizil, Kavukcuoglu
// & Daume, ICML 2012; Kumar's thesis ch. 5-6; shared/specs/kumar-thesis.md
// sections 1.6, 1.8, 5 and 7). Every pair i <= j of labelled training
// points is a K-example z_ij = (K_1(i,j), ..., K_p(i,j)) with K-label
// t_ij = +1 when y_i = y_j and -1 otherwise, whatever the number of
// classes. A non-negative linear K-classifier mu,
//
//	min_{mu >= 0} lambda/2 |mu|^2 + mean [1 - t mu.z]_+   (eq. 5.2, no bias),
//
// trained by projected mini-batch Pegasos (spec 1.8: B = 100, T = 1000,
// step 1/(lambda s), clip at 0 and then scale into the ball of radius
// 1/sqrt(lambda)), gives the kernel K_mu = sum_l mu_l K_l, PSD since
// mu >= 0. The polynomial variant (ch. 6.2.1) expands z into its unique
// monomials of degree 1..d (d = 2: p + p(p+1)/2 terms; d = 3 adds the
// p(p+1)(p+2)/6 cubes), so that the learned kernel is
// sum mu_l K_l + sum_{a<=b} mu_ab K_a o K_b [+ cubic terms], PSD by the
// Schur product theorem. Expanded examples are formed on the fly.
//
// lambda is chosen as the thesis does (section 5.3.1): one random 80/20
// split of the balanced K-examples, Pegasos on the 80% for each lambda of
// the grid 100 * 4^-j, j = 0..16, and the lambda of the lowest mean
// validation hinge loss; then Pegasos again on all of them.
//
// Balancing (spec 5 step 1, whose exact scheme the thesis leaves open):
// every K-example of the rarer K-label is kept and as many of the other
// are drawn uniformly without replacement.
//
// Deviations, all [I] in the spec: the returned mu is the last Pegasos
// iterate, not normalised ([D] does not normalise it; an SVM with C chosen
// by cross-validation does not care); the unique monomials are used, not
// the thesis' p^2 ordered pairs (duplicated columns would halve their
// penalty).
//
// Registered learners (both Need kernels and labels; points labelled
// learners.Unlabeled give no K-example):
//   - "tsmkl": kind weights; Weights = mu over the base kernels,
//     Kernel = sum mu_l K_l;
//   - "tsmkl-poly": kind kernel; Kernel = the polynomial combination;
//   - "tsmkl-rf": kind kernel; random-forest TS-MKL with landmark
//     features (rf.go), Kernel = Phi Phi^T.
//
// The learners first centre each base kernel and scale it to unit mean
// feature-space variance (normalize = "center-standardize", spec 1.6, as
// in every experiment of the thesis), and Weights / Kernel refer to the
// normalised kernels; normalize = "none" uses them as given. Fit, Model
// and Normalize expose the same for kernels over train and test points.
package tsmkl

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Registry names.
const (
	Name     = "tsmkl"
	NamePoly = "tsmkl-poly"
)

// Options configures Fit. The zero value of a field means its default.
type Options struct {
	Degree     int       // 1 (linear, default), 2 or 3
	Lambda     float64   // > 0: use it; 0: choose it on the grid
	Grid       []float64 // the lambda grid (default 100 * 4^-j, j = 0..16)
	Iterations int       // Pegasos steps T (default 1000, the thesis' UCI value)
	Batch      int       // mini-batch size B (default 100)
	Seed       uint64
}

// DefaultGrid is the thesis' lambda grid, 100 * 4^-j for j = 0..16.
func DefaultGrid() []float64 {
	g := make([]float64, 17)
	for j := range g {
		g[j] = 100 * math.Pow(4, -float64(j))
	}
	return g
}

// Model is a learned K-classifier: non-negative coefficients over the
// monomials of degree 1..Degree of the p base kernels.
type Model struct {
	Degree int
	P      int
	// Monomials lists the kernel indices of each term (ascending), the
	// degree-1 terms first, in the order of Coef.
	Monomials [][]int
	Coef      []float64
	Lambda    float64
	// ValidationLoss is the mean hinge loss on the held-out 20% at the
	// chosen lambda (NaN when lambda was given).
	ValidationLoss float64
	// TrainLoss is the mean hinge loss of Coef on all the K-examples.
	TrainLoss float64
	Examples  int // balanced K-examples trained on
}

// Monomials returns the index tuples a <= b <= ... of degree 1..degree over p kernels.
func Monomials(p, degree int) [][]int {
	var out [][]int
	var grow func(prefix []int, from, left int)
	grow = func(prefix []int, from, left int) {
		if left == 0 {
			out = append(out, slices.Clone(prefix))
			return
		}
		for a := from; a < p; a++ {
			grow(append(prefix, a), a, left-1)
		}
	}
	for d := 1; d <= degree; d++ {
		grow(nil, 0, d)
	}
	return out
}

// expand writes the monomials of z into dst.
func expand(dst, z []float64, monos [][]int) {
	for m, idx := range monos {
		v := 1.0
		for _, a := range idx {
			v *= z[a]
		}
		dst[m] = v
	}
}

// kset holds K-examples: z (p values each, row-major) and t.
type kset struct {
	p int
	z []float64
	t []float64
}

func (k *kset) len() int            { return len(k.t) }
func (k *kset) row(i int) []float64 { return k.z[i*k.p : (i+1)*k.p] }

func (k *kset) subset(idx []int) *kset {
	out := &kset{p: k.p, z: make([]float64, 0, len(idx)*k.p), t: make([]float64, 0, len(idx))}
	for _, i := range idx {
		out.z = append(out.z, k.row(i)...)
		out.t = append(out.t, k.t[i])
	}
	return out
}

// kExamples builds the balanced K-training set of the labelled points.
func kExamples(kernels []*mat.SymDense, labels []int, rng *rand.Rand) (*kset, error) {
	var pts []int
	for i, y := range labels {
		if y != learners.Unlabeled {
			pts = append(pts, i)
		}
	}
	p := len(kernels)
	var pos, neg []int // pair indices into the full list
	var pairs [][2]int
	for a, i := range pts {
		for _, j := range pts[a:] {
			if labels[i] == labels[j] {
				pos = append(pos, len(pairs))
			} else {
				neg = append(neg, len(pairs))
			}
			pairs = append(pairs, [2]int{i, j})
		}
	}
	if len(neg) == 0 {
		return nil, fmt.Errorf("%w: tsmkl needs labelled points of two or more classes", learners.ErrInput)
	}
	if len(pos) > len(neg) {
		pos, neg = neg, pos
	}
	keep := append(slices.Clone(pos), neg[:0:0]...)
	for _, r := range rng.Perm(len(neg))[:len(pos)] {
		keep = append(keep, neg[r])
	}
	slices.Sort(keep)
	ks := &kset{p: p, z: make([]float64, 0, len(keep)*p), t: make([]float64, 0, len(keep))}
	for _, e := range keep {
		i, j := pairs[e][0], pairs[e][1]
		for _, k := range kernels {
			ks.z = append(ks.z, k.At(i, j))
		}
		t := -1.0
		if labels[i] == labels[j] {
			t = 1
		}
		ks.t = append(ks.t, t)
	}
	return ks, nil
}

// pegasos runs projected mini-batch Pegasos with non-negativity (spec 1.8)
// and returns the last iterate.
func pegasos(ctx context.Context, ks *kset, monos [][]int, lambda float64, iters, batch int, rng *rand.Rand) ([]float64, error) {
	dim := len(monos)
	mu := make([]float64, dim)
	acc := make([]float64, dim)
	ez := make([]float64, dim)
	radius := 1 / math.Sqrt(lambda)
	for s := 1; s <= iters; s++ {
		// Every step: a check costs nothing beside a mini-batch.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		clear(acc)
		for range batch {
			e := rng.IntN(ks.len())
			expand(ez, ks.row(e), monos)
			t := ks.t[e]
			if t*floats.Dot(mu, ez) < 1 {
				floats.AddScaled(acc, t, ez)
			}
		}
		eta := 1 / (lambda * float64(s))
		floats.Scale(1-eta*lambda, mu)
		floats.AddScaled(mu, eta/float64(batch), acc)
		for i, v := range mu {
			mu[i] = math.Max(v, 0)
		}
		if nrm := floats.Norm(mu, 2); nrm > radius {
			floats.Scale(radius/nrm, mu)
		}
	}
	return mu, nil
}

// hinge is the mean hinge loss of mu on the K-examples.
func hinge(ks *kset, monos [][]int, mu []float64) float64 {
	ez := make([]float64, len(monos))
	loss := 0.0
	for e := range ks.len() {
		expand(ez, ks.row(e), monos)
		loss += math.Max(0, 1-ks.t[e]*floats.Dot(mu, ez))
	}
	return loss / float64(ks.len())
}

// Fit learns the K-classifier from kernels over the training points (used
// as given: normalise them first, see Normalize) and their labels.
func Fit(ctx context.Context, kernels []*mat.SymDense, labels []int, opt Options) (*Model, error) {
	if len(kernels) == 0 {
		return nil, fmt.Errorf("%w: tsmkl needs base kernels", learners.ErrInput)
	}
	deg := max(opt.Degree, 1)
	if deg > 3 {
		return nil, fmt.Errorf("%w: tsmkl degree %d: 1, 2 or 3", learners.ErrInput, opt.Degree)
	}
	iters, batch := cmpOr(opt.Iterations, 1000), cmpOr(opt.Batch, 100)
	rng := rand.New(rand.NewPCG(opt.Seed, 0x75a1))
	ks, err := kExamples(kernels, labels, rng)
	if err != nil {
		return nil, err
	}
	monos := Monomials(len(kernels), deg)
	m := &Model{Degree: deg, P: len(kernels), Monomials: monos, Lambda: opt.Lambda, ValidationLoss: math.NaN(), Examples: ks.len()}
	if m.Lambda <= 0 {
		grid := opt.Grid
		if len(grid) == 0 {
			grid = DefaultGrid()
		}
		perm := rng.Perm(ks.len())
		cut := max(1, ks.len()*4/5)
		fit, val := ks.subset(perm[:cut]), ks.subset(perm[cut:])
		if val.len() == 0 {
			val = fit
		}
		best := math.Inf(1)
		for _, l := range grid {
			mu, err := pegasos(ctx, fit, monos, l, iters, batch, rand.New(rand.NewPCG(opt.Seed, math.Float64bits(l))))
			if err != nil {
				return nil, err
			}
			// Ties go to the larger lambda (the grid descends): the simpler model.
			if loss := hinge(val, monos, mu); loss < best {
				best, m.Lambda, m.ValidationLoss = loss, l, loss
			}
		}
	}
	m.Coef, err = pegasos(ctx, ks, monos, m.Lambda, iters, batch, rand.New(rand.NewPCG(opt.Seed, 1)))
	if err != nil {
		return nil, err
	}
	m.TrainLoss = hinge(ks, monos, m.Coef)
	return m, nil
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Value is the learned similarity of a pair from its base-kernel values z
// (p of them): sum over the monomials of coef * prod z.
func (m *Model) Value(z []float64) float64 {
	s := 0.0
	for t, c := range m.Coef {
		if c == 0 {
			continue
		}
		v := c
		for _, a := range m.Monomials[t] {
			v *= z[a]
		}
		s += v
	}
	return s
}

// Combine returns the learned kernel over the points of the given base
// kernels (any points: normalised with the training statistics, the
// test-vs-train entries are what an SVM needs).
func (m *Model) Combine(kernels []*mat.SymDense) *mat.SymDense {
	n := kernels[0].SymmetricDim()
	out := mat.NewSymDense(n, nil)
	raws := make([]blasSym, len(kernels))
	for l, k := range kernels {
		r := k.RawSymmetric()
		raws[l] = blasSym{r.Data, r.Stride}
	}
	z := make([]float64, len(kernels))
	o := out.RawSymmetric()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			for l, r := range raws {
				z[l] = r.data[i*r.stride+j]
			}
			o.Data[i*o.Stride+j] = m.Value(z)
		}
	}
	return out
}

type blasSym struct {
	data   []float64
	stride int
}

// Normalize centres every kernel (over all its points) with the statistics
// of the training points and divides it by the mean centred training
// diagonal (spec 1.6): K_c = K - 1 m' - m 1' + c, m_i the mean of K_i.
// over the training points, c the mean of the training block; s =
// tr(K_c[train]) / |train|. A kernel with s <= 0 (constant on the training
// points) is only centred. The kernels are changed in place.
func Normalize(kernels []*mat.SymDense, train []int) {
	for _, k := range kernels {
		n := k.SymmetricDim()
		m := make([]float64, n)
		for i := range n {
			for _, j := range train {
				m[i] += k.At(i, j)
			}
			m[i] /= float64(len(train))
		}
		c := 0.0
		for _, i := range train {
			c += m[i]
		}
		c /= float64(len(train))
		raw := k.RawSymmetric()
		for i := 0; i < n; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+n]
			for j := i; j < n; j++ {
				row[j] += c - m[i] - m[j]
			}
		}
		s := 0.0
		for _, i := range train {
			s += k.At(i, i)
		}
		if s /= float64(len(train)); s > 1e-12 {
			k.ScaleSym(1/s, k)
		}
	}
}

// normalizeParam is the normalize parameter of every registered TS-MKL learner.
var normalizeParam = learners.Enum("normalize", "center-standardize", []string{"center-standardize", "none"},
	"centre each base kernel and scale it to unit mean variance first (the thesis), or use them as given")

func init() {
	common := []learners.Param{
		learners.Float("lambda", 0, 0, math.Inf(1), "Pegasos regularisation; 0 chooses it on the thesis' grid 100*4^-j by validation hinge loss"),
		learners.Int("iterations", 1000, 1, 1<<24, "Pegasos steps T (the thesis: 1000 on UCI, 100000 elsewhere)"),
		learners.Int("batch", 100, 1, 1<<20, "Pegasos mini-batch size B"),
		normalizeParam,
		learners.Int("seed", 0, 0, math.MaxInt32, "seed of the balancing, the validation split and the mini-batches"),
	}
	build := func(v learners.Values, degree int) *Learner {
		return &Learner{degree: degree, normalize: v.String("normalize") == "center-standardize", opt: Options{
			Lambda: v.Float("lambda"), Iterations: v.Int("iterations"), Batch: v.Int("batch"), Seed: uint64(v.Int("seed"))}}
	}
	learners.Register(learners.Spec{
		Name: Name,
		Kind: learners.KindWeights,
		Doc: "TS-MKL (Kumar et al., ICML 2012): kernel weights mu >= 0 of a linear K-classifier telling same-class " +
			"pairs from different-class pairs by their base-kernel values, trained by projected Pegasos; " +
			"Weights = mu (not normalised), Kernel = sum mu_l K_l over the centred, standardised kernels. Needs kernels and labels.",
		Needs:  learners.NeedKernels | learners.NeedLabels,
		Params: common,
		New:    func(v learners.Values) (learners.Learner, error) { return build(v, 1), nil },
	})
	learners.Register(learners.Spec{
		Name: NamePoly,
		Kind: learners.KindKernel,
		Doc: "Polynomial TS-MKL (Kumar's thesis 6.2.1): a non-negative K-classifier on the degree-2 (or 3) monomials of the " +
			"base-kernel values, giving the PSD kernel sum mu_l K_l + sum mu_ab K_a o K_b [+ cubic terms]. Needs kernels and labels.",
		Needs: learners.NeedKernels | learners.NeedLabels,
		Params: append(slices.Clone(common),
			learners.Int("degree", 2, 2, 3, "degree of the monomial expansion")),
		New: func(v learners.Values) (learners.Learner, error) { return build(v, v.Int("degree")), nil },
	})
}

// Learner is the registered TS-MKL learner (linear or polynomial).
type Learner struct {
	degree    int
	normalize bool
	opt       Options
}

// Fit learns the combination from in.Kernels and in.Labels.
func (l *Learner) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	if err := in.Validate(learners.NeedKernels | learners.NeedLabels); err != nil {
		return nil, err
	}
	kernels := normalized(in, l.normalize)
	opt := l.opt
	opt.Degree = l.degree
	m, err := Fit(ctx, kernels, in.Labels, opt)
	if err != nil {
		return nil, err
	}
	out := &learners.Output{Kernel: m.Combine(kernels), Stats: learners.Stats{
		Iterations: cmpOr(opt.Iterations, 1000), Objective: m.TrainLoss, Converged: true}}
	if l.degree == 1 {
		out.Weights = m.Coef
	}
	return out, nil
}

// normalized returns the input's kernels, or normalised copies of them
// (Normalize over all the points) when normalize is set.
func normalized(in *learners.Input, normalize bool) []*mat.SymDense {
	if !normalize {
		return in.Kernels
	}
	n := in.N()
	kernels := make([]*mat.SymDense, len(in.Kernels))
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	for t, k := range in.Kernels {
		kernels[t] = mat.NewSymDense(n, nil)
		kernels[t].CopySym(k)
	}
	Normalize(kernels, all)
	return kernels
}
