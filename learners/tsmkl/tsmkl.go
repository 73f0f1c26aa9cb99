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
// Link targets (FitTarget; an extension for the recommenders, not in the
// thesis): without labels, a target kernel Y over the points stands for
// them, pair (i, j), i <= j, having K-label +1 when Y_ij > 0 (linked: friends,
// or users with a group in common) and -1 otherwise. Labels are the case
// Y = y y^T (Y_ij = [y_i = y_j], or +-1), and give the very same fit. Up to
// Options.MaxPairs pairs (2,047 points) every pair is a K-example and
// balanced as above; beyond, forming the n(n+1)/2 pairs is out of the
// question (thousands of users), and Options.Sample pairs of each K-label
// are drawn uniformly without replacement: the linked ones through the
// rows of the target, a row drawn in proportion to its links, the others
// uniformly; one sweep over the target's rows counts the links (O(n)
// memory, at most 3 n rows read). Only the pairs of the balanced set are
// ever evaluated in the base kernels. DEVIATION from eq. 5.2 with sparse
// links: the objective's sum over all pairs is estimated on the sample,
// which is what the balanced subsample of step 1 does already.
//
// Registered learners (Needs kernels and labels, or a link target in their
// place: learners.AcceptLinkTarget; labels win when both are given; points
// labelled learners.Unlabeled give no K-example):
//   - "tsmkl": kind weights; Weights = mu over the base kernels (>= 0, not
//     on the simplex: Spec.Simplex is false), Kernel = sum mu_l K_l; it
//     accepts implicit kernels (kernelmath.KernelMatrix, as the recommender
//     gives for thousands of users), and then forms Kernel only up to
//     learners.DenseOutputMax points (nil above);
//   - "tsmkl-poly": kind kernel; Kernel = the polynomial combination (stored
//     kernels only);
//   - "tsmkl-rf": kind kernel; random-forest TS-MKL with landmark
//     features (rf.go), Kernel = Phi Phi^T (kernels and labels only).
//
// The learners first centre each base kernel and scale it to unit mean
// feature-space variance (normalize = "center-standardize", spec 1.6, as
// in every experiment of the thesis; implicit kernels are centred and
// scaled entry by entry, never stored), and Weights / Kernel refer to the
// normalised kernels; normalize = "none" uses them as given. A caller that
// combines the kernels as it holds them with Weights (the recommender's
// kernelmath.NewKernelSum) gets sum mu_l K_l, not the normalised
// combination: the centring is a translation in feature space, and the
// scales differ from the learned kernel's by each kernel's mean centred
// diagonal (0.74 to 0.98 for the recommender's base kernels on
// ego-Facebook and BlogCatalog, scaled to mean diagonal 1 and mostly
// sparse), and mu keeps the scale Pegasos gives it (|mu| up to
// 1/sqrt(lambda)). Fit, Model and Normalize expose the same for kernels
// over train and test points.
package tsmkl

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
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
	// MaxPairs and Sample apply to a link target (FitTarget): with
	// n(n+1)/2 <= MaxPairs (default DefaultMaxPairs) every pair is a
	// K-example, as with labels; above, Sample K-examples of each K-label
	// (default DefaultSample) are drawn.
	MaxPairs int
	Sample   int
}

// The defaults of Options.MaxPairs (every pair up to 2,047 points) and
// Options.Sample (50,000 balanced K-examples: Pegasos draws 100,000 at the
// default T and B).
const (
	DefaultMaxPairs = 1 << 21
	DefaultSample   = 25000
)

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
	pts, linked := labelled(labels)
	return allPairs(stored(kernels), pts, linked, errOneClass, rng)
}

// labelled returns the points with a label and the K-labels of their pairs.
func labelled(labels []int) (pts []int, linked func(i int) (func(j int) bool, error)) {
	for i, y := range labels {
		if y != learners.Unlabeled {
			pts = append(pts, i)
		}
	}
	return pts, func(i int) (func(j int) bool, error) {
		return func(j int) bool { return labels[i] == labels[j] }, nil
	}
}

// targetLinks returns the K-labels of row i's pairs from a link target:
// entry > 0. It reads the row once (cost: one Row of the target).
func targetLinks(ctx context.Context, target kernelmath.KernelMatrix) func(i int) (func(j int) bool, error) {
	row := make([]float64, target.Dim())
	return func(i int) (func(j int) bool, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		target.Row(i, row)
		return func(j int) bool { return row[j] > 0 }, nil
	}
}

// Why a K-training set is empty, for the error.
const (
	errOneClass  = "tsmkl needs labelled points of two or more classes"
	errNoLink    = "tsmkl: the link target links no pair (no entry > 0)"
	errAllLinked = "tsmkl: the link target links every pair (no entry <= 0)"
)

// allPairs builds the balanced K-training set of every pair i <= j of pts
// (spec 5 step 1); linked(i) gives the K-labels of i's pairs and is called
// once for each i, in order. noNeg is the error when no pair is unlinked.
func allPairs(kernels []kernelmath.KernelMatrix, pts []int, linked func(i int) (func(j int) bool, error), noNeg string, rng *rand.Rand) (*kset, error) {
	var pos, neg []int // pair indices into the full list
	var pairs [][2]int
	var t []bool
	for a, i := range pts {
		same, err := linked(i)
		if err != nil {
			return nil, err
		}
		for _, j := range pts[a:] {
			l := same(j)
			if l {
				pos = append(pos, len(pairs))
			} else {
				neg = append(neg, len(pairs))
			}
			pairs = append(pairs, [2]int{i, j})
			t = append(t, l)
		}
	}
	switch {
	case len(neg) == 0:
		return nil, fmt.Errorf("%w: %s", learners.ErrInput, noNeg)
	case len(pos) == 0:
		return nil, fmt.Errorf("%w: %s", learners.ErrInput, errNoLink)
	}
	if len(pos) > len(neg) {
		pos, neg = neg, pos
	}
	keep := append(slices.Clone(pos), neg[:0:0]...)
	for _, r := range rng.Perm(len(neg))[:len(pos)] {
		keep = append(keep, neg[r])
	}
	slices.Sort(keep)
	ks := &kset{p: len(kernels), z: make([]float64, 0, len(keep)*len(kernels)), t: make([]float64, 0, len(keep))}
	for _, e := range keep {
		ks.add(kernels, pairs[e], t[e])
	}
	return ks, nil
}

// add appends the K-example of pair ij with K-label +1 when linked, -1 otherwise.
func (k *kset) add(kernels []kernelmath.KernelMatrix, ij [2]int, linked bool) {
	for _, kern := range kernels {
		k.z = append(k.z, kern.At(ij[0], ij[1]))
	}
	t := -1.0
	if linked {
		t = 1
	}
	k.t = append(k.t, t)
}

// sampledPairs draws the balanced K-training set of a link target over n
// points without forming the n(n+1)/2 pairs: one sweep over the target's
// rows counts the linked pairs (i, j >= i) of each row; then m =
// min(sample, linked pairs, unlinked pairs) pairs of each K-label are drawn
// uniformly without replacement (Floyd's algorithm over the pairs of that
// K-label numbered row by row), reading only the rows that hold a drawn
// pair. Positives thus come from the links of sampled rows, a row drawn
// in proportion to its links, and negatives uniformly from the unlinked
// pairs. With sample at least the rarer K-label's count, the set has the
// law of allPairs': every pair of the rarer K-label and a uniform subset of
// the other. Cost: 3 n Row calls of the target at most, O(n + m) memory.
func sampledPairs(ctx context.Context, kernels []kernelmath.KernelMatrix, target kernelmath.KernelMatrix, sample int, rng *rand.Rand) (*kset, error) {
	n := target.Dim()
	links := targetLinks(ctx, target)
	count := make([]int, n) // linked pairs (i, j >= i) of row i
	total := 0
	for i := range n {
		same, err := links(i)
		if err != nil {
			return nil, err
		}
		for j := i; j < n; j++ {
			if same(j) {
				count[i]++
			}
		}
		total += count[i]
	}
	unlinked := n*(n+1)/2 - total
	switch {
	case total == 0:
		return nil, fmt.Errorf("%w: %s", learners.ErrInput, errNoLink)
	case unlinked == 0:
		return nil, fmt.Errorf("%w: %s", learners.ErrInput, errAllLinked)
	}
	m := min(sample, total, unlinked)
	ks := &kset{p: len(kernels), z: make([]float64, 0, 2*m*len(kernels)), t: make([]float64, 0, 2*m)}
	for _, linked := range []bool{true, false} {
		of := func(i int) int { // pairs of this K-label in row i
			if linked {
				return count[i]
			}
			return n - i - count[i]
		}
		// Floyd: m distinct ranks in [0, size), sorted.
		size := total
		if !linked {
			size = unlinked
		}
		drawn := make(map[int]bool, m)
		for r := size - m; r < size; r++ {
			if x := rng.IntN(r + 1); drawn[x] {
				drawn[r] = true
			} else {
				drawn[x] = true
			}
		}
		ranks := slices.Sorted(maps.Keys(drawn))
		// Walk the rows: rank r is the (r - first)-th pair of its K-label in
		// the row where the ranks before it end.
		first := 0
		for i := 0; i < n && len(ranks) > 0; i++ {
			end := first + of(i)
			if ranks[0] >= end {
				first = end
				continue
			}
			same, err := links(i)
			if err != nil {
				return nil, err
			}
			at := first
			for j := i; j < n && len(ranks) > 0 && ranks[0] < end; j++ {
				if same(j) != linked {
					continue
				}
				if at == ranks[0] {
					ks.add(kernels, [2]int{i, j}, linked)
					ranks = ranks[1:]
				}
				at++
			}
			first = end
		}
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
	return fitLabels(ctx, stored(kernels), labels, opt)
}

// FitTarget learns the K-classifier from kernels over n points (used as
// given) and a link target over them: pair (i, j), i <= j, is a K-example
// with K-label +1 when target(i, j) > 0 and -1 otherwise; labels are the
// case target = [y_i = y_j], and give the same K-examples, rng draws and
// model. Up to Options.MaxPairs pairs, every pair is enumerated as with
// labels; above, the balanced K-examples are sampled (sampledPairs), so
// that thousands of points (users, with sparse links) cost O(n) memory.
func FitTarget(ctx context.Context, kernels []kernelmath.KernelMatrix, target kernelmath.KernelMatrix, opt Options) (*Model, error) {
	if target == nil {
		return nil, fmt.Errorf("%w: tsmkl needs a link target", learners.ErrInput)
	}
	for t, k := range kernels {
		if k.Dim() != target.Dim() {
			return nil, fmt.Errorf("%w: tsmkl: base kernel %d is %d x %d, the target %d x %d", learners.ErrInput, t, k.Dim(), k.Dim(), target.Dim(), target.Dim())
		}
	}
	n := target.Dim()
	return fit(ctx, kernels, opt, func(rng *rand.Rand) (*kset, error) {
		if n*(n+1)/2 <= cmpOr(opt.MaxPairs, DefaultMaxPairs) {
			pts := make([]int, n)
			for i := range pts {
				pts[i] = i
			}
			return allPairs(kernels, pts, targetLinks(ctx, target), errAllLinked, rng)
		}
		return sampledPairs(ctx, kernels, target, cmpOr(opt.Sample, DefaultSample), rng)
	})
}

func fitLabels(ctx context.Context, kernels []kernelmath.KernelMatrix, labels []int, opt Options) (*Model, error) {
	return fit(ctx, kernels, opt, func(rng *rand.Rand) (*kset, error) {
		pts, linked := labelled(labels)
		return allPairs(kernels, pts, linked, errOneClass, rng)
	})
}

// stored wraps stored kernels as KernelMatrix.
func stored(kernels []*mat.SymDense) []kernelmath.KernelMatrix {
	out := make([]kernelmath.KernelMatrix, len(kernels))
	for t, k := range kernels {
		out[t] = kernelmath.DenseKernel{K: k}
	}
	return out
}

// fit is Fit and FitTarget once examples builds the K-training set.
func fit(ctx context.Context, kernels []kernelmath.KernelMatrix, opt Options, examples func(*rand.Rand) (*kset, error)) (*Model, error) {
	if len(kernels) == 0 {
		return nil, fmt.Errorf("%w: tsmkl needs base kernels", learners.ErrInput)
	}
	deg := max(opt.Degree, 1)
	if deg > 3 {
		return nil, fmt.Errorf("%w: tsmkl degree %d: 1, 2 or 3", learners.ErrInput, opt.Degree)
	}
	iters, batch := cmpOr(opt.Iterations, 1000), cmpOr(opt.Batch, 100)
	rng := rand.New(rand.NewPCG(opt.Seed, 0x75a1))
	ks, err := examples(rng)
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

// standardized is a kernel centred and scaled as Normalize does (over all
// its points), without storing it: entry (K_ij + c - m_i - m_j) / s, m the
// row means, c their mean and s the mean centred diagonal (1 when <= 1e-12).
// Each method costs what K's does, plus O(n).
type standardized struct {
	k      kernelmath.KernelMatrix
	m      []float64
	c, inv float64
}

func standardize(k kernelmath.KernelMatrix) *standardized {
	n := float64(k.Dim())
	m := k.RowSums()
	floats.Scale(1/n, m)
	c := floats.Sum(m) / n
	s := 0.0
	for i, d := range k.Diag() {
		s += d + c - 2*m[i]
	}
	st := &standardized{k: k, m: m, c: c, inv: 1}
	if s /= n; s > 1e-12 {
		st.inv = 1 / s
	}
	return st
}

var _ kernelmath.KernelMatrix = (*standardized)(nil)

func (s *standardized) Dim() int            { return s.k.Dim() }
func (s *standardized) At(i, j int) float64 { return (s.k.At(i, j) + s.c - s.m[i] - s.m[j]) * s.inv }

func (s *standardized) Row(i int, dst []float64) {
	s.k.Row(i, dst)
	for j := range dst {
		dst[j] = (dst[j] + s.c - s.m[i] - s.m[j]) * s.inv
	}
}

func (s *standardized) Apply(dst, x []float64) {
	s.k.Apply(dst, x)
	sum, mx := floats.Sum(x), floats.Dot(s.m, x)
	for i := range dst {
		dst[i] = (dst[i] + (s.c-s.m[i])*sum - mx) * s.inv
	}
}

func (s *standardized) Diag() []float64 {
	d := s.k.Diag()
	for i := range d {
		d[i] = (d[i] + s.c - 2*s.m[i]) * s.inv
	}
	return d
}

// RowSums is 0 (up to rounding): centring removes the row means.
func (s *standardized) RowSums() []float64 { return kernelmath.RowSumsByApply(s) }

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
			"Weights = mu (not normalised, not on the simplex), Kernel = sum mu_l K_l over the centred, standardised kernels. " +
			"Needs kernels and labels, or in their place a link target (pairs with an entry > 0 linked, as friendships); " +
			"accepts implicit kernels (Output.Kernel is then formed only up to 2000 points).",
		Needs:  needsLinear,
		Params: common,
		New:    func(v learners.Values) (learners.Learner, error) { return build(v, 1), nil },
	})
	learners.Register(learners.Spec{
		Name: NamePoly,
		Kind: learners.KindKernel,
		Doc: "Polynomial TS-MKL (Kumar's thesis 6.2.1): a non-negative K-classifier on the degree-2 (or 3) monomials of the " +
			"base-kernel values, giving the PSD kernel sum mu_l K_l + sum mu_ab K_a o K_b [+ cubic terms]. " +
			"Needs kernels and labels, or in their place a link target.",
		Needs: needsPoly,
		Params: append(slices.Clone(common),
			learners.Int("degree", 2, 2, 3, "degree of the monomial expansion")),
		New: func(v learners.Values) (learners.Learner, error) { return build(v, v.Int("degree")), nil },
	})
}

// What the learners need: kernels and labels or a link target; the linear
// one takes implicit kernels (its output is a combination of them), the
// polynomial one needs them stored (its kernel is formed entrywise).
const (
	needsPoly   = learners.NeedKernels | learners.NeedLabels | learners.AcceptLinkTarget
	needsLinear = needsPoly | learners.AcceptImplicit
)

// Learner is the registered TS-MKL learner (linear or polynomial).
type Learner struct {
	degree    int
	normalize bool
	opt       Options
}

var _ learners.Learner = (*Learner)(nil)

// Fit learns the combination from the base kernels and in.Labels, or
// without labels from the link target (FitTarget).
func (l *Learner) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	n := in.N()
	var kernels []kernelmath.KernelMatrix
	var dense []*mat.SymDense // the stored kernels, normalised; nil when implicit
	if len(in.Kernels) > 0 {
		dense = normalized(in, l.normalize)
		kernels = stored(dense)
	} else {
		kernels = slices.Clone(in.Matrices)
		if l.normalize {
			for t, k := range kernels {
				kernels[t] = standardize(k)
			}
		}
	}
	opt := l.opt
	opt.Degree = l.degree
	var m *Model
	var err error
	if len(in.Labels) > 0 {
		m, err = fitLabels(ctx, kernels, in.Labels, opt)
	} else {
		m, err = FitTarget(ctx, kernels, in.TargetKernel(), opt)
	}
	if err != nil {
		return nil, err
	}
	out := &learners.Output{Stats: learners.Stats{
		Iterations: cmpOr(opt.Iterations, 1000), Objective: m.TrainLoss, Converged: true}}
	switch {
	case dense != nil:
		out.Kernel = m.Combine(dense)
	case n <= learners.DenseOutputMax: // implicit kernels: the linear learner only
		sum, err := kernelmath.NewKernelSum(m.Coef, kernels)
		if err != nil {
			return nil, err
		}
		out.Kernel = kernelmath.KernelDense(sum)
	}
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
