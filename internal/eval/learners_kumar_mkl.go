package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/tsmkl"
	"gonum.org/v1/gonum/mat"
)

// The TS-MKL protocol of Kumar's thesis (spec 10.4, 1.6, 1.7, 5): sonar,
// ionosphere (33 features: the constant one dropped) and pima, 10 random
// 80/20 splits; features z-scored with the training statistics ([I]);
// base kernels over all points, each centred with the training statistics
// and scaled to unit mean training variance (tsmkl.Normalize); an SVM with
// C chosen by 4-fold cross-validation on the training set over
// {10^-2, ..., 10^2} (cValues; DEVIATION: the spec suggests up to 10^3,
// dropped for time: SMO at C = 1000 on pima's overlapping classes took
// minutes a fit on the shared cores), accuracy on the test set.
// Table 5.2 uses the 13 kernels on the full feature vector (setting A: 9
// Gaussians exp(-g|x-y|^2), g = 2^-10..2^-2, (x.y+1)^q for q = 2, 3, 4,
// and x.y); Table 6.1 the per-feature linear kernels x_f y_f. The best
// single kernel is chosen (with C) by the same cross-validation, not on the
// test set ([I]: the thesis does not say). alignf gets the target
// y_i y_j on the training points. Times are of the kernel-learning stage
// alone (tsmkl: K-examples, lambda selection and the final Pegasos).

var tsmklSets = []builtin{setSonar, setIonosphere, {name: "pima", rel: "uci/libsvm/pima_scale"}}

const (
	kumarSplits = 10
	kumarFolds  = 4
	// poly3MaxDim caps the degree-3 expansion (C(p+3,3)-1 terms) run in
	// Table 6.1: sonar's 60 features give 39,710 and ionosphere's 33 give
	// 7,139 terms, 18 Pegasos runs of 10^5 expanded examples each, beyond
	// the time budget; pima's 8 give 164.
	poly3MaxDim = 2000
)

// settingA returns setting A's 13 kernels over the rows of z.
func settingA(z *mat.Dense) []*mat.SymDense {
	var ks []*mat.SymDense
	for e := -10; e <= -2; e++ {
		ks = append(ks, kernelmath.RBF(z, 1/math.Pow(2, float64(e))))
	}
	for _, q := range []int{2, 3, 4} {
		ks = append(ks, kernelmath.Polynomial(z, q, 1))
	}
	return append(ks, kernelmath.Linear(z))
}

func perFeature(z *mat.Dense) []*mat.SymDense {
	n, d := z.Dims()
	ks := make([]*mat.SymDense, d)
	for f := range d {
		ks[f] = kernelmath.Linear(z.Slice(0, n, f, f+1).(*mat.Dense))
	}
	return ks
}

// kumarSplit is one 80/20 split with its labels as +1 / -1.
type kumarSplit struct {
	d           *labelled
	train, test []int
	z           *mat.Dense
	folds       [][]int // positions in train
	y           []int
	eval        *mklSplit // for svmTest
}

func newKumarSplit(d *labelled, seed uint64) *kumarSplit {
	n := len(d.labels)
	rng := rand.New(rand.NewPCG(seed, 0x6b75))
	perm := rng.Perm(n)
	cut := n * 4 / 5
	s := &kumarSplit{d: d, train: perm[:cut], test: perm[cut:], y: make([]int, n)}
	for i, l := range d.labels {
		s.y[i] = 2*l - 1
	}
	s.z = standardizeOn(d.x, s.train)
	s.folds = make([][]int, kumarFolds)
	for p, f := range rng.Perm(len(s.train)) {
		s.folds[p%kumarFolds] = append(s.folds[p%kumarFolds], f)
	}
	s.eval = &mklSplit{y: s.y}
	return s
}

// cv returns the 4-fold cross-validation accuracy of the best C and that C.
func (s *kumarSplit) cv(ctx context.Context, k *mat.SymDense) (float64, float64, error) {
	bestAcc, bestC := -1.0, 0.0
	for _, c := range cValues {
		correct := 0.0
		for f, fold := range s.folds {
			var fit, val []int
			for g, other := range s.folds {
				for _, p := range other {
					if g == f {
						val = append(val, s.train[p])
					} else {
						fit = append(fit, s.train[p])
					}
				}
			}
			acc, err := s.eval.svmTest(ctx, k, fit, val, c)
			if err != nil && !errors.Is(err, kernelmath.ErrSVMNotConverged) {
				return 0, 0, err
			}
			correct += acc * float64(len(fold))
		}
		if acc := correct / float64(len(s.train)); acc > bestAcc {
			bestAcc, bestC = acc, c
		}
	}
	return bestAcc, bestC, nil
}

// accuracy chooses C by cross-validation and returns the test accuracy.
func (s *kumarSplit) accuracy(ctx context.Context, k *mat.SymDense) (float64, error) {
	_, c, err := s.cv(ctx, k)
	if err != nil {
		return 0, err
	}
	return s.eval.svmTest(ctx, k, s.train, s.test, c)
}

func (s *kumarSplit) trainLabels() []int {
	out := make([]int, len(s.train))
	for i, p := range s.train {
		out[i] = s.d.labels[p]
	}
	return out
}

func combine(kernels []*mat.SymDense, w []float64) *mat.SymDense {
	n := kernels[0].SymmetricDim()
	k := mat.NewSymDense(n, nil)
	dst := k.RawSymmetric()
	for l, kl := range kernels {
		if w[l] == 0 {
			continue
		}
		src := kl.RawSymmetric()
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				dst.Data[i*dst.Stride+j] += w[l] * src.Data[i*src.Stride+j]
			}
		}
	}
	return k
}

// kumarMKLRep runs the methods of one kernel set on one split.
func kumarMKLRep(ctx context.Context, s *kumarSplit, table, setting string, kernels []*mat.SymDense, methods []string) ([]measurement, []string, error) {
	tsmkl.Normalize(kernels, s.train)
	var ms []measurement
	var notes []string
	name := s.d.name
	trainKernels := make([]*mat.SymDense, len(kernels))
	for l, k := range kernels {
		trainKernels[l] = subSym(k, s.train)
	}
	for _, method := range methods {
		if method == "tsmkl-rf" {
			acc, learn, err := s.rfTSMKL(ctx, kernels, trainKernels, rfOptions, rfDraws)
			if err != nil {
				return nil, nil, fmt.Errorf("%s %s %s: %w", name, setting, method, err)
			}
			ms = append(ms, measurement{table, name, method, metricAccuracy, acc}, measurement{table, name, method, metricSeconds, learn},
				measurement{"mkl-time", name + " " + setting, method, metricSeconds, learn})
			continue
		}
		t0 := time.Now()
		var k *mat.SymDense
		switch method {
		case "uniform":
			w := make([]float64, len(kernels))
			for l := range w {
				w[l] = 1 / float64(len(kernels))
			}
			k = combine(kernels, w)
		case "best-kernel":
			bestAcc := -1.0
			for _, kl := range kernels {
				acc, _, err := s.cv(ctx, kl)
				if err != nil {
					return nil, nil, err
				}
				if acc > bestAcc {
					bestAcc, k = acc, kl
				}
			}
		case "alignf":
			l, _, err := learners.New("alignf", nil)
			if err != nil {
				return nil, nil, err
			}
			n := len(s.train)
			target := mat.NewSymDense(n, nil)
			for a, i := range s.train {
				for b := a; b < n; b++ {
					target.SetSym(a, b, float64(s.y[i]*s.y[s.train[b]]))
				}
			}
			out, err := safeFit(ctx, l, &learners.Input{Kernels: trainKernels, Target: target})
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s %s alignf: %v", name, setting, err))
				continue
			}
			k = combine(kernels, out.Weights)
		default: // tsmkl-1, tsmkl-2, tsmkl-3
			deg := int(method[len(method)-1] - '0')
			if dim := len(tsmkl.Monomials(len(kernels), deg)); dim > poly3MaxDim {
				notes = append(notes, fmt.Sprintf("%s %s %s: %d monomials, above the run's cap %d: not run", name, setting, method, dim, poly3MaxDim))
				continue
			}
			m, err := tsmkl.Fit(ctx, trainKernels, s.trainLabels(), tsmkl.Options{Degree: deg, Seed: uint64(len(s.train))})
			if err != nil {
				return nil, nil, err
			}
			k = m.Combine(kernels)
		}
		learn := time.Since(t0).Seconds()
		acc, err := s.accuracy(ctx, k)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s %s: %w", name, setting, method, err)
		}
		ms = append(ms, measurement{table, name, method, metricAccuracy, acc},
			measurement{"mkl-time", name + " " + setting, method, metricSeconds, learn})
	}
	return ms, notes, nil
}

func runTSMKL(ctx context.Context, r *runner, out map[string]*LearnersTable) error {
	sets, err := r.loadSets(tsmklSets)
	if err != nil {
		return err
	}
	for _, d := range sets {
		if d.classes != 2 {
			return fmt.Errorf("%s: %d classes; the TS-MKL tables are binary", d.name, d.classes)
		}
	}
	reps := tableReps(out)
	type job struct {
		d   *labelled
		rep int
	}
	var jobs []job
	for _, d := range sets {
		for rep := range reps {
			jobs = append(jobs, job{d, rep})
		}
	}
	results := make([]repResult, len(jobs))
	noteSets := make([][]string, len(jobs))
	err = r.parallel(ctx, "TS-MKL (tables 5.2, 6.1, 6.3)", len(jobs), func(ctx context.Context, i int) error {
		s := newKumarSplit(jobs[i].d, r.seedFor(jobs[i].d.name, jobs[i].rep))
		if out["5.2"] != nil || out["mkl-time"] != nil {
			ms, notes, err := kumarMKLRep(ctx, s, "5.2", "p=13", settingA(s.z), []string{"uniform", "best-kernel", "alignf", "tsmkl-1"})
			if err != nil {
				return err
			}
			results[i].measured = append(results[i].measured, ms...)
			noteSets[i] = append(noteSets[i], notes...)
		}
		if out["6.1"] != nil || out["mkl-time"] != nil {
			ms, notes, err := kumarMKLRep(ctx, s, "6.1", "p=d", perFeature(s.z), []string{"uniform", "tsmkl-1", "tsmkl-2", "tsmkl-3"})
			if err != nil {
				return err
			}
			results[i].measured = append(results[i].measured, ms...)
			noteSets[i] = append(noteSets[i], notes...)
		}
		if out["6.3"] != nil {
			ms, notes, err := kumarMKLRep(ctx, s, "6.3", "p=d", perFeature(s.z), []string{"tsmkl-rf"})
			if err != nil {
				return err
			}
			results[i].measured = append(results[i].measured, ms...)
			noteSets[i] = append(noteSets[i], notes...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	ms, _ := collectReps(results, "")
	seen := map[string]bool{}
	for _, notes := range noteSets {
		for _, n := range notes {
			seen[n] = true
		}
	}
	for id, t := range out {
		t.Rows = kumarPaper(aggregateRows(id, ms))
		for n := range seen {
			t.Notes = append(t.Notes, n)
		}
		sort.Strings(t.Notes)
	}
	return nil
}

// runTwoCircles is the toy of thesis 6.2.1.1 (n = 200, [I]; C = 1000).
func runTwoCircles(ctx context.Context, r *runner, out map[string]*LearnersTable) error {
	const n = 200
	rng := rand.New(rand.NewPCG(uint64(r.cfg.Seed), 0xc1c1))
	x := mat.NewDense(n, 2, nil)
	y, labels := make([]int, n), make([]int, n)
	for i := range n {
		rad := float64(1 + i%2)
		th := 2 * math.Pi * rng.Float64()
		x.Set(i, 0, rad*math.Cos(th))
		x.Set(i, 1, rad*math.Sin(th))
		labels[i], y[i] = i%2, 1-2*(i%2)
	}
	var ms []measurement
	for _, name := range []string{tsmkl.Name, tsmkl.NamePoly} {
		l, _, err := learners.New(name, json.RawMessage(fmt.Sprintf(`{"seed":%d}`, r.cfg.Seed)))
		if err != nil {
			return err
		}
		fit, err := l.Fit(ctx, &learners.Input{Kernels: perFeature(x), Labels: labels})
		if err != nil {
			return err
		}
		svm, err := kernelmath.TrainSVM(ctx, fit.Kernel, y, kernelmath.SVMOptions{C: 1000})
		if err != nil && !errors.Is(err, kernelmath.ErrSVMNotConverged) {
			return err
		}
		correct := 0
		for i, f := range svm.Train {
			if (f >= 0) == (y[i] > 0) {
				correct++
			}
		}
		method := map[string]string{tsmkl.Name: "tsmkl-1", tsmkl.NamePoly: "tsmkl-2"}[name]
		ms = append(ms, measurement{"toy", "two-circles", method, metricAccuracy, float64(correct) / n})
	}
	out["toy"].Rows = kumarPaper(aggregateRows("toy", ms))
	return nil
}

func init() {
	// Table 5.2, the p = 13 columns; Table 6.1; the toy (thesis, in %).
	for ds, cells := range map[string][4]paperCell{
		"sonar":      {{86.90, 4.24}, {86.42, 3.73}, {85.47, 3.26}, {86.19, 3.38}},
		"ionosphere": {{95.00, 2.04}, {94.28, 3.01}, {94.42, 2.17}, {94.29, 2.12}},
		"pima":       {{76.10, 2.63}, {76.30, 2.62}, {76.82, 3.15}, {76.42, 2.87}},
	} {
		for i, m := range []string{"best-kernel", "uniform", "alignf", "tsmkl-1"} {
			kumarPapers[paperKey{"5.2", ds, m, metricAccuracy}] = paperCell{cells[i].mean / 100, cells[i].std / 100}
		}
	}
	for ds, cells := range map[string][4]paperCell{
		"sonar":      {{74.52, 5.9}, {73.10, 3.4}, {83.57, 2.9}, {82.10, 5.9}},
		"ionosphere": {{87.14, 3.4}, {87.00, 3.3}, {90.43, 3.1}, {89.21, 3.8}},
		"pima":       {{75.84, 2.5}, {76.43, 2.1}, {76.56, 2.8}, {74.83, 2.6}},
	} {
		for i, m := range []string{"uniform", "tsmkl-1", "tsmkl-2", "tsmkl-3"} {
			kumarPapers[paperKey{"6.1", ds, m, metricAccuracy}] = paperCell{cells[i].mean / 100, cells[i].std / 100}
		}
	}
	// Table 6.3, its random-forest row (the others are Table 6.1's).
	for ds, c := range map[string]paperCell{"sonar": {82.86, 4.2}, "ionosphere": {92.71, 3.5}, "pima": {75.39, 2.9}} {
		kumarPapers[paperKey{"6.3", ds, "tsmkl-rf", metricAccuracy}] = paperCell{c.mean / 100, c.std / 100}
	}
	kumarPapers[paperKey{"toy", "two-circles", "tsmkl-1", metricAccuracy}] = paperCell{0.54, 0}
	kumarPapers[paperKey{"toy", "two-circles", "tsmkl-2", metricAccuracy}] = paperCell{1, 0}
}
