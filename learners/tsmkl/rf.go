package tsmkl

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/forest"
	"gonum.org/v1/gonum/mat"
)

// Random-forest TS-MKL with learning with similarity functions (Kumar's
// thesis 6.2.2; spec section 8). The K-classifier is a random forest
// (package forest: 500 trees, at least 3 samples a leaf, 10 random
// features a split, information gain) on the linear K-examples z_ij of the
// labelled points, built and balanced as for linear TS-MKL. Its similarity
// s(x, x') = the fraction of trees voting K-label +1 on z_xx' is in
// [0, 1] but indefinite, so it is not used as a kernel: as Balcan & Blum
// (2006), l landmarks t_1..t_l are drawn, the same number from each class
// of the labelled points (l = n_labelled/3, the landmarks may be training
// points too), and every point x gets the features
// phi(x) = [s(x, t_1), ..., s(x, t_l)]. The thesis then trains a linear
// classifier on phi; a linear SVM on phi is a kernel SVM on
// K = Phi Phi^T, PSD by construction, which is the learned kernel.
//
// Spec section 8 leaves open [I]: K-examples beyond MaxPairs are
// subsampled, balanced (half of each K-label); a class with fewer points
// than its share of landmarks gives all of them.

// NameRF is the registry name of random-forest TS-MKL.
const NameRF = "tsmkl-rf"

// RFOptions configures FitRF.
type RFOptions struct {
	Forest forest.Options
	// MaxPairs caps the balanced K-examples (half of each K-label); 0 is no cap.
	MaxPairs int
	Seed     uint64 // seed of the balancing and the cap (the forest has its own)
}

// RFModel is a random-forest K-classifier over p base kernels.
type RFModel struct {
	Forest   *forest.Forest
	Examples int // K-examples the forest was grown on
}

// FitRF grows the forest on the balanced K-examples of the labelled points
// of the kernels (used as given: normalise them first, see Normalize).
func FitRF(ctx context.Context, kernels []*mat.SymDense, labels []int, opt RFOptions) (*RFModel, error) {
	if len(kernels) == 0 {
		return nil, fmt.Errorf("%w: tsmkl-rf needs base kernels", learners.ErrInput)
	}
	if opt.MaxPairs < 0 {
		return nil, fmt.Errorf("%w: tsmkl-rf: max pairs %d < 0", learners.ErrInput, opt.MaxPairs)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x75a1))
	ks, err := kExamples(kernels, labels, rng)
	if err != nil {
		return nil, err
	}
	if opt.MaxPairs > 0 && ks.len() > opt.MaxPairs {
		ks = ks.subset(capBalanced(ks.t, opt.MaxPairs, rng))
	}
	y := make([]bool, ks.len())
	for e, t := range ks.t {
		y[e] = t > 0
	}
	f, err := forest.Fit(ctx, mat.NewDense(ks.len(), ks.p, ks.z), y, opt.Forest)
	if err != nil {
		return nil, err
	}
	return &RFModel{Forest: f, Examples: ks.len()}, nil
}

// capBalanced returns the sorted indices of at most max/2 K-examples of
// each K-label, drawn uniformly without replacement.
func capBalanced(t []float64, max int, rng *rand.Rand) []int {
	var pos, neg []int
	for e, v := range t {
		if v > 0 {
			pos = append(pos, e)
		} else {
			neg = append(neg, e)
		}
	}
	var keep []int
	for _, side := range [][]int{pos, neg} {
		for _, r := range rng.Perm(len(side))[:min(len(side), max/2)] {
			keep = append(keep, side[r])
		}
	}
	slices.Sort(keep)
	return keep
}

// Similarity returns the len(rows) x len(cols) matrix of s(x_i, x_j), i in
// rows, j in cols: the fraction of trees voting +1 on (K_1(i,j), ...,
// K_p(i,j)), the kernels normalised as those FitRF got. Rows are shared
// among GOMAXPROCS goroutines and the context is checked before each.
func (m *RFModel) Similarity(ctx context.Context, kernels []*mat.SymDense, rows, cols []int) (*mat.Dense, error) {
	if len(kernels) != m.Forest.P() {
		return nil, fmt.Errorf("%w: tsmkl-rf: %d kernels for a forest over %d", learners.ErrInput, len(kernels), m.Forest.P())
	}
	if len(rows) == 0 || len(cols) == 0 {
		return nil, fmt.Errorf("%w: tsmkl-rf: similarity of %d x %d points", learners.ErrInput, len(rows), len(cols))
	}
	n := kernels[0].SymmetricDim()
	for _, k := range kernels {
		if k.SymmetricDim() != n {
			return nil, fmt.Errorf("%w: tsmkl-rf: kernels of %d and %d points", learners.ErrInput, n, k.SymmetricDim())
		}
	}
	for _, i := range append(slices.Clone(rows), cols...) {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("%w: tsmkl-rf: point %d of %d", learners.ErrInput, i, n)
		}
	}
	raws := make([]blasSym, len(kernels))
	for l, k := range kernels {
		r := k.RawSymmetric()
		raws[l] = blasSym{r.Data, r.Stride}
	}
	out := mat.NewDense(len(rows), len(cols), nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range min(runtime.GOMAXPROCS(0), len(rows)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			z := mat.NewDense(len(cols), len(kernels), nil)
			for {
				a := int(next.Add(1)) - 1
				if a >= len(rows) {
					return
				}
				if err := ctx.Err(); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				for b, j := range cols {
					lo, hi := min(rows[a], j), max(rows[a], j)
					zb := z.RawRowView(b)
					for l, r := range raws {
						zb[l] = r.data[lo*r.stride+hi]
					}
				}
				_ = m.Forest.Fractions(out.RawRowView(a), z) // the sizes agree: no error
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// Landmarks draws the landmarks among the labelled points: l =
// floor(fraction * labelled), floor(l / classes) (at least 1) from each
// class, uniformly without replacement; sorted.
func Landmarks(labels []int, fraction float64, rng *rand.Rand) ([]int, error) {
	if !(fraction > 0 && fraction <= 1) {
		return nil, fmt.Errorf("%w: tsmkl-rf: landmark fraction %v not in (0, 1]", learners.ErrInput, fraction)
	}
	var classes [][]int
	labelled := 0
	for i, y := range labels {
		if y == learners.Unlabeled {
			continue
		}
		if y < 0 {
			return nil, fmt.Errorf("%w: tsmkl-rf: label %d of point %d", learners.ErrInput, y, i)
		}
		for len(classes) <= y {
			classes = append(classes, nil)
		}
		classes[y] = append(classes[y], i)
		labelled++
	}
	present := 0
	for _, c := range classes {
		if len(c) > 0 {
			present++
		}
	}
	if present == 0 {
		return nil, fmt.Errorf("%w: tsmkl-rf: no labelled point", learners.ErrInput)
	}
	each := max(1, int(fraction*float64(labelled))/present)
	var out []int
	for _, c := range classes {
		for _, r := range rng.Perm(len(c))[:min(len(c), each)] {
			out = append(out, c[r])
		}
	}
	slices.Sort(out)
	return out, nil
}

// LWSKernel returns Phi Phi^T, the kernel of a linear classifier on the
// rows of phi.
func LWSKernel(phi *mat.Dense) *mat.SymDense {
	n, _ := phi.Dims()
	k := mat.NewSymDense(n, nil)
	k.SymOuterK(1, phi)
	return k
}

func init() {
	learners.Register(learners.Spec{
		Name: NameRF,
		Kind: learners.KindKernel,
		Doc: "Random-forest TS-MKL (Kumar's thesis 6.2.2): a random forest on the K-examples (base-kernel values of labelled pairs, " +
			"same class or not) gives the similarity s(x,x') = fraction of trees voting same-class; points get the features " +
			"phi(x) = s(x, landmarks), the landmarks drawn equally per class from the labelled points, and Kernel = Phi Phi^T " +
			"(a linear SVM on phi; PSD by construction). Needs kernels and labels.",
		Needs: learners.NeedKernels | learners.NeedLabels,
		Params: []learners.Param{
			learners.Int("trees", 500, 1, 100000, "number of trees"),
			learners.Int("min_leaf", 3, 1, 1000000, "minimum bootstrap samples in a leaf"),
			learners.Int("mtry", 10, 1, 1000000, "features (base kernels) tried per split; all of them when fewer"),
			learners.Float("landmarks", 1.0/3, 1e-6, 1, "landmarks as a fraction of the labelled points (drawn equally per class)"),
			learners.Int("max_pairs", 200000, 2, 1000000, "cap on the balanced K-examples the forest is grown on (half of each K-label)"),
			normalizeParam,
			learners.Int("seed", 0, 0, math.MaxInt32, "seed of the balancing, the forest and the landmarks"),
		},
		New: func(v learners.Values) (learners.Learner, error) {
			seed := uint64(v.Int("seed"))
			return &RFLearner{normalize: v.String("normalize") == "center-standardize", landmarks: v.Float("landmarks"), opt: RFOptions{
				Forest:   forest.Options{Trees: v.Int("trees"), MinLeaf: v.Int("min_leaf"), Mtry: v.Int("mtry"), Seed: seed},
				MaxPairs: v.Int("max_pairs"), Seed: seed}}, nil
		},
	})
}

// RFLearner is the registered random-forest TS-MKL learner.
type RFLearner struct {
	normalize bool
	landmarks float64
	opt       RFOptions
}

var _ learners.Learner = (*RFLearner)(nil)

// Fit grows the forest on the labelled points of in and returns the
// landmark kernel Phi Phi^T over all the points.
func (l *RFLearner) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	kernels := normalized(in, l.normalize)
	// The forest is 90% of the progress, the similarities the rest.
	fctx := learners.WithProgress(ctx, func(f float64) { learners.Progress(ctx, 0.9*f) })
	m, err := FitRF(fctx, kernels, in.Labels, l.opt)
	if err != nil {
		return nil, err
	}
	marks, err := Landmarks(in.Labels, l.landmarks, rand.New(rand.NewPCG(l.opt.Seed, 0x1a4d)))
	if err != nil {
		return nil, err
	}
	all := make([]int, in.N())
	for i := range all {
		all[i] = i
	}
	phi, err := m.Similarity(ctx, kernels, all, marks)
	if err != nil {
		return nil, err
	}
	learners.Progress(ctx, 1)
	return &learners.Output{Kernel: LWSKernel(phi), Stats: learners.Stats{Iterations: m.Forest.Trees(), Converged: true}}, nil
}
