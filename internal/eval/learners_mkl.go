package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// The MKL protocols of thesis 4.5.1 and 5.3 (UMKL paper 4.1-4.3, spec
// B.9.2), run on the same splits so that the methods Tables 4.2 and 5.2
// share are the same runs, as in the thesis: per repetition a random 50/50
// train/test split; features standardised with the training mean and
// deviation; the base kernels of Xu et al. (Gaussians of 10 widths and
// polynomials of degree 1-3 on all features and on each one,
// kernelmath.MKLBaseKernels) over all points, each divided by the trace of
// its training block (the training scalar applied to test rows, spec 1.1).
// 2LMKL^Inf starts from the 13 of them on all features and adds Gaussians
// itself (thesis 4.5.1, spec 4.3).
//
// Tables 4.2 and 5.2: a learner learns from the training points, and a
// C-SVM on its kernel is scored on the test half. A learner that takes
// labels gets every point with the test points unlabelled and returns its
// kernel over all of them (how the non-linear two-layer kernel reaches test
// points; no test label is used); any other one (UMKL, AvgKernel, alignf
// with the label target) gets the training points alone, and its weights
// combine the base kernels over all points. C and the learner's own
// parameters are chosen by 5-fold cross-validation on the training half
// over C in {10^-2, ..., 10^2} (the learner's own C, for the SVM-based
// ones, is the SVM's): a learner that uses labels is refitted on every
// fold's training part; one that does not (UMKL) is fitted once on the
// training inputs, which hold no label, for every parameter set.
// [Deviations: LpMKL's p in {2, 3, 4} is chosen by the same
// cross-validation, where the thesis reports the best p; UMKL's gamma and B,
// "chosen by CV" in the paper over an unstated grid, over spec B.5's.]
//
// Table 5.3: the kernel (fitted on the training inputs) is reduced by KPCA
// to 2 dimensions on the training points, every point projected with the
// training centring, and a 5-NN classifier of the projected training points
// is scored on the test half.

// cValues is the C grid of the cross-validation (thesis 4.5.1).
var cValues = []float64{0.01, 0.1, 1, 10, 100}

// gaussianWidths are the widths of the single-kernel SVM baseline, chosen
// by cross-validation [ambiguous in the thesis; spec 4.5.1: the 10 widths].
var gaussianWidths = []float64{0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64}

const (
	cvFolds   = 5
	kpcaDims  = 2
	knnK      = 5
	kpcaSigma = 1.0 // the Gaussian baseline of Table 5.3
)

// mklMethod is a column of Tables 4.2, 5.2 or 5.3.
type mklMethod struct {
	name    string // row name
	learner string // registry name; "" for a plain Gaussian kernel
	// grid gives the parameter sets tried by cross-validation (JSON
	// objects); for a Gaussian, {"sigma": s}.
	grid func(spec learners.Spec) []string
	kpca bool // Table 5.3: scored by KPCA + 5-NN, no SVM
	// allFeatures gives the learner only the kernelmath.MKLGroupSize base
	// kernels on all features: 2LMKL^Inf's initial antecedent layer
	// (thesis 4.5.1, spec 4.3), which its column generation extends.
	allFeatures bool
}

func defaults(learners.Spec) []string { return []string{"{}"} }

func gaussianGrid(learners.Spec) []string {
	out := make([]string, len(gaussianWidths))
	for i, s := range gaussianWidths {
		out[i] = fmt.Sprintf(`{"sigma":%g}`, s)
	}
	return out
}

// lpGrid tries p in {2, 3, 4} ("best reported" in the thesis; chosen by
// cross-validation here) when the learner has a parameter p.
func lpGrid(spec learners.Spec) []string {
	if !hasParam(spec, "p") {
		return defaults(spec)
	}
	return []string{`{"p":2}`, `{"p":3}`, `{"p":4}`}
}

// umklGrid is the UMKL paper's "gamma and B by CV on the training data"
// over the grid of the UMKL spec (B.5; the paper gives none): gamma in
// {10^-2, ..., 10^2}, B in {5, 10, 20} (the thesis spec's suggestion, its
// 9.9, is the gammas >= 1 alone).
func umklGrid(learners.Spec) []string {
	var out []string
	for _, g := range []float64{0.01, 0.1, 1, 10, 100} {
		for _, b := range []int{5, 10, 20} {
			out = append(out, fmt.Sprintf(`{"gamma":%g,"basis":%d}`, g, b))
		}
	}
	return out
}

// The columns of the tables. 2LMKL and 2LMKL^Inf are the learners
// "twolayer" and "twolayer-inf"; KTA, the two-stage alignment baseline, is
// "alignf"; AvgKernel (and Table 5.3's Average) is "uniform".
var (
	methods42 = []mklMethod{
		{name: "svm", grid: gaussianGrid},
		{name: "uniform", learner: "uniform", grid: defaults},
		{name: "mkl-level", learner: "mkl-level", grid: defaults},
		{name: "lpmkl", learner: "lpmkl", grid: lpGrid},
		{name: "2lmkl", learner: "twolayer", grid: defaults},
		{name: "2lmkl-inf", learner: "twolayer-inf", grid: defaults, allFeatures: true},
	}
	methods52 = []mklMethod{
		{name: "uniform", learner: "uniform", grid: defaults},
		{name: "mkl-level", learner: "mkl-level", grid: defaults},
		{name: "lpmkl", learner: "lpmkl", grid: lpGrid},
		{name: "alignf", learner: "alignf", grid: defaults},
		{name: "umkl", learner: "umkl", grid: umklGrid},
	}
	methods53 = []mklMethod{
		{name: "gaussian", grid: func(learners.Spec) []string { return []string{fmt.Sprintf(`{"sigma":%g}`, kpcaSigma)} }, kpca: true},
		{name: "uniform", learner: "uniform", grid: defaults, kpca: true},
		{name: "umkl", learner: "umkl", grid: func(learners.Spec) []string { return []string{`{"gamma":100,"basis":10}`} }, kpca: true},
	}
	// rankedMethods42 are the MKL methods of Table 4.2 that it ranks (SVM
	// excluded, as the thesis; uniform too, which the thesis does not run there).
	rankedMethods42 = []string{"mkl-level", "lpmkl", "2lmkl", "2lmkl-inf"}
	rankedMethods52 = []string{"uniform", "mkl-level", "lpmkl", "alignf", "umkl"}
)

// The default data sets of each table: those of Tables 4.1 / 5.1 that are
// in ../shared/data.
var (
	sets42 = []builtin{setBreast, setDiabetes, setIonosphere, setSonar}
	sets5  = []builtin{setBreast, setDiabetes, setSonar}
)

// maxBaseKernelGB bounds the memory of one split's base kernels (two
// splits are held at once with the default workers, on 24 GB machines).
const maxBaseKernelGB = 6

// baseKernelGB is the memory of the 13 (d+1) base kernels of d over all its points.
func baseKernelGB(d *labelled) float64 {
	n, cols := d.x.Dims()
	return 13 * float64(cols+1) * float64(n) * float64(n) * 8 / 1e9
}

func hasParam(spec learners.Spec, name string) bool {
	return slices.ContainsFunc(spec.Params, func(p learners.Param) bool { return p.Name == name })
}

// runMKL fills Tables 4.2, 5.2 and 5.3 from the same splits.
func runMKL(ctx context.Context, r *runner, out map[string]*LearnersTable) error {
	type job struct {
		d      *labelled
		tables []string // the tables this data set is in
	}
	var jobs []job
	if len(r.cfg.Datasets) > 0 {
		sets, err := r.loadSets(nil)
		if err != nil {
			return err
		}
		for _, d := range sets {
			if gb := baseKernelGB(d); gb > maxBaseKernelGB {
				for _, t := range out {
					t.Notes = append(t.Notes, fmt.Sprintf("%s: skipped: its base kernels need %.0f GB (at most %d): subsample it", d.name, gb, maxBaseKernelGB))
				}
				continue
			}
			if d.classes != 2 {
				for _, t := range out {
					t.Notes = append(t.Notes, fmt.Sprintf("%s: %d classes: skipped (the protocol is binary)", d.name, d.classes))
				}
				continue
			}
			jobs = append(jobs, job{d, []string{"4.2", "5.2", "5.3"}})
		}
	} else {
		if r.dataDir == "" {
			return errNoData
		}
		for _, b := range sets42 {
			d, err := loadBuiltin(r.dataDir, b)
			if err != nil {
				return err
			}
			j := job{d: d}
			for _, id := range []string{"4.2", "5.2", "5.3"} {
				if _, ok := out[id]; ok && (id == "4.2" || slices.Contains(sets5, b)) {
					j.tables = append(j.tables, id)
				}
			}
			if len(j.tables) > 0 {
				jobs = append(jobs, j)
			}
		}
		notes := map[string]string{
			"4.2": "waveform, liver, german, splice, australian, thyroid, ringnorm, heart, banana, titanic, flaresolar: not in ../shared/data (spec 7): rows skipped; " +
				"adult (a1a) skipped: its 13 x 124 base kernels of 1,605^2 need 33 GB (spec 4.2), run it with --dataset on a subsample",
			"5.2": "waveform, liver, german, australian, thyroid, heart, banana, titanic, flaresolar: not in ../shared/data (spec 7): rows skipped",
			"5.3": "waveform, liver, german, australian, heart, flaresolar: not in ../shared/data (spec 7): rows skipped",
		}
		for id, t := range out {
			t.Notes = append(t.Notes, notes[id])
		}
	}
	columns := map[string][]mklMethod{"4.2": methods42, "5.2": methods52, "5.3": methods53}
	for id, t := range out {
		names := make([]string, len(columns[id]))
		for i, m := range columns[id] {
			names[i] = m.name
		}
		_, missing := r.availability(names, func(name string) string { return learnerOfMethod(columns[id], name) })
		t.Notes = append(t.Notes, missing...)
	}
	if t, ok := out["5.2"]; ok {
		t.Notes = append(t.Notes, "GMKL has no Go counterpart: not run")
	}
	if t, ok := out["5.3"]; ok {
		t.Notes = append(t.Notes, "C-UKL / MMUKL (an SDP) has no Go counterpart: not run; Gaussian: exp(-|x-y|^2 / 2), sigma = 1, on the standardised features")
	}
	if t, ok := out["4.2"]; ok {
		t.Notes = append(t.Notes, "GMKL, IKL and MKM have no Go counterpart: not run; svm: one Gaussian exp(-|x-y|^2 / (2 sigma^2)), sigma chosen with C by 5-fold CV over 2^-3..2^6")
	}
	// The columns each data set runs: selected, registered, of its tables.
	type run struct {
		d       *labelled
		methods []tableMethod
	}
	var runs []run
	for _, j := range jobs {
		var methods []tableMethod
		for _, id := range j.tables {
			if _, ok := out[id]; !ok {
				continue
			}
			for _, m := range columns[id] {
				_, registered := learners.Lookup(m.learner)
				if r.selected(m.name) && (m.learner == "" || registered) {
					methods = append(methods, tableMethod{id, m})
				}
			}
		}
		if len(methods) > 0 {
			runs = append(runs, run{j.d, methods})
		}
	}
	n := tableReps(out)
	results := make([]repResult, len(runs)*n)
	err := r.parallel(ctx, "tables 4.2/5.2/5.3 (MKL)", len(results), func(ctx context.Context, i int) error {
		j, rep := runs[i/n], i%n
		var err error
		results[i], err = mklRep(ctx, j.d, r.seedFor(j.d.name, rep), j.methods)
		return err
	})
	if err != nil {
		return err
	}
	ranked := map[string][]string{"4.2": rankedMethods42, "5.2": rankedMethods52}
	for id, t := range out {
		ms, unconverged := collectReps(results, id)
		rows := aggregateRows(id, ms)
		t.Rows = append(rows, meanRows(id, rows)...)
		if methods, ok := ranked[id]; ok {
			ranks, note := rankRows(id, rows, presentMethods(rows, methods))
			t.Rows = append(t.Rows, ranks...)
			if note != "" {
				t.Notes = append(t.Notes, note)
			}
		}
		t.Notes = append(t.Notes, unconverged...)
	}
	return nil
}

// presentMethods returns the methods of ranked that have rows.
func presentMethods(rows []LearnerRow, ranked []string) []string {
	var out []string
	for _, m := range ranked {
		if slices.ContainsFunc(rows, func(r LearnerRow) bool { return r.Method == m }) {
			out = append(out, m)
		}
	}
	return out
}

func learnerOfMethod(ms []mklMethod, name string) string {
	for _, m := range ms {
		if m.name == name {
			return m.learner
		}
	}
	return ""
}

// tableMethod is a method to run for a table.
type tableMethod struct {
	table string
	m     mklMethod
}

// mklSplit is one repetition: the split, the standardised features and the
// base kernels over all points.
type mklSplit struct {
	d           *labelled
	train, test []int
	y           []int // +1 / -1 (class 1 is +1)
	z           *mat.Dense
	sqd         *mat.SymDense      // squared distances of z
	base        []*mat.SymDense    // over all points, each / its training-block trace
	folds       [][]int            // cross-validation folds: positions in train
	fitted      map[string]*fitted // kernels fitted on the training half, by learner and parameters
	table       string             // the table the method being run serves
	unconverged []fitEvent         // fits that stopped at their iteration cap
	failed      []fitEvent         // fits that returned an error
}

type fitted struct {
	k     *mat.SymDense
	err   error
	table string // the last table the fit served
}

// standardizeOn z-scores every row of x with the statistics of the given rows.
func standardizeOn(x *mat.Dense, rows []int) *mat.Dense {
	n, cols := x.Dims()
	_, mean, std := kernelmath.Standardize(rowsOf(x, rows))
	z := mat.NewDense(n, cols, nil)
	for i := range n {
		for f := range cols {
			if std[f] > 0 {
				z.Set(i, f, (x.At(i, f)-mean[f])/std[f])
			}
		}
	}
	return z
}

func newMKLSplit(d *labelled, seed uint64) *mklSplit {
	n := len(d.labels)
	rng := rand.New(rand.NewPCG(seed, 0x5b17))
	perm := rng.Perm(n)
	s := &mklSplit{d: d, train: perm[:n/2], test: perm[n/2:], y: make([]int, n), fitted: map[string]*fitted{}}
	for i, l := range d.labels {
		s.y[i] = 2*l - 1
	}
	s.z = standardizeOn(d.x, s.train)
	s.sqd = kernelmath.SqDistances(s.z)
	s.base = kernelmath.MKLBaseKernels(s.z)
	for _, k := range s.base {
		tr := 0.0
		for _, i := range s.train {
			tr += k.At(i, i)
		}
		if tr > 0 {
			k.ScaleSym(1/tr, k)
		}
	}
	fold := rng.Perm(len(s.train))
	s.folds = make([][]int, cvFolds)
	for p, f := range fold {
		s.folds[p%cvFolds] = append(s.folds[p%cvFolds], f)
	}
	return s
}

// errAllFailed says that every fit of a method on a split failed: the
// method has no number there (the failures are reported in the notes).
var errAllFailed = errors.New("every fit failed")

// mklRep runs every method on one split.
func mklRep(ctx context.Context, d *labelled, seed uint64, methods []tableMethod) (repResult, error) {
	s := newMKLSplit(d, seed)
	var res repResult
	// The same column in two tables is one run, its notes copied.
	type outcome struct {
		acc                 float64
		unconverged, failed []fitEvent
	}
	done := map[string]outcome{}
	retable := func(events []fitEvent, table string) []fitEvent {
		out := slices.Clone(events)
		for i := range out {
			out[i].table = table
		}
		return out
	}
	for _, tm := range methods {
		key := tm.m.name
		if tm.m.kpca {
			key += "/kpca"
		}
		o, ok := done[key]
		if ok {
			s.unconverged = append(s.unconverged, retable(o.unconverged, tm.table)...)
			s.failed = append(s.failed, retable(o.failed, tm.table)...)
		} else {
			s.table = tm.table
			nu, nf := len(s.unconverged), len(s.failed)
			var err error
			if tm.m.kpca {
				o.acc, err = s.kpcaAccuracy(ctx, tm.m)
			} else {
				o.acc, err = s.svmAccuracy(ctx, tm.m)
			}
			if errors.Is(err, errAllFailed) {
				o.acc = math.NaN() // no number on this split; s.failed says why
			} else if err != nil {
				return res, fmt.Errorf("%s %s: %w", d.name, tm.m.name, err)
			}
			o.unconverged, o.failed = slices.Clone(s.unconverged[nu:]), slices.Clone(s.failed[nf:])
			done[key] = o
		}
		if !math.IsNaN(o.acc) {
			res.measured = append(res.measured, measurement{tm.table, d.name, tm.m.name, metricAccuracy, o.acc})
		}
	}
	res.unconverged, res.failed = s.unconverged, s.failed
	return res, nil
}

// kernel returns the kernel of method m with parameters params over all
// points, learned from the points fit (indices into the data set). A failed
// fit is recorded in s.failed.
func (s *mklSplit) kernel(ctx context.Context, m mklMethod, params string, fit []int) (_ *mat.SymDense, err error) {
	defer func() {
		if err != nil && ctx.Err() == nil {
			s.failed = append(s.failed, fitEvent{s.table, m.name, params, err})
		}
	}()
	if m.learner == "" {
		var p struct{ Sigma float64 }
		if err := json.Unmarshal([]byte(params), &p); err != nil || !(p.Sigma > 0) {
			return nil, fmt.Errorf("gaussian parameters %s: want {\"sigma\": s > 0}", params)
		}
		k := mat.NewSymDense(len(s.y), nil)
		for i := range len(s.y) {
			for j := i; j < len(s.y); j++ {
				k.SetSym(i, j, math.Exp(-s.sqd.At(i, j)/(2*p.Sigma*p.Sigma)))
			}
		}
		return k, nil
	}
	l, spec, err := learners.New(m.learner, json.RawMessage(params))
	if err != nil {
		return nil, err
	}
	// A learner that takes labels sees every point, those outside fit
	// unlabelled (the SVM-based learners train on the labelled points only
	// and return their kernel over all points, which is how a two-layer
	// kernel reaches unseen points). Any other learner (UMKL, AvgKernel,
	// alignment to a label target) sees the points fit alone, and its
	// weights combine the base kernels over all points.
	n := len(s.y)
	transductive := spec.Needs&learners.NeedLabels != 0
	points := fit
	if transductive {
		points = make([]int, n)
		for i := range points {
			points[i] = i
		}
	}
	base := s.base
	if m.allFeatures {
		base = s.base[:kernelmath.MKLGroupSize]
	}
	in := &learners.Input{}
	if spec.Needs&learners.NeedKernels != 0 {
		in.Kernels = base
		if !transductive {
			in.Kernels = make([]*mat.SymDense, len(base))
			for t, k := range base {
				in.Kernels[t] = subSym(k, fit)
			}
		}
	}
	if spec.Needs&learners.NeedFeatures != 0 {
		in.Features = rowsOf(s.z, points)
	}
	if transductive {
		in.Labels = make([]int, n)
		for i := range in.Labels {
			in.Labels[i] = learners.Unlabeled
		}
		for _, p := range fit {
			in.Labels[p] = s.d.labels[p]
		}
	}
	if spec.Needs&learners.NeedTarget != 0 {
		in.Target = mat.NewSymDense(len(fit), nil)
		for a, p := range fit {
			for b := a; b < len(fit); b++ {
				in.Target.SetSym(a, b, float64(s.y[p]*s.y[fit[b]]))
			}
		}
	}
	out, err := safeFit(ctx, l, in)
	if errors.Is(err, learners.ErrNotConverged) && out != nil {
		s.unconverged = append(s.unconverged, fitEvent{s.table, m.name, params, nil})
	} else if err != nil {
		return nil, err
	}
	if transductive {
		if out.Kernel == nil || out.Kernel.SymmetricDim() != n {
			return nil, fmt.Errorf("learner %q returned no kernel over the %d points it was given", m.learner, n)
		}
		return out.Kernel, nil
	}
	if len(out.Weights) != len(base) {
		return nil, fmt.Errorf("learner %q returned %d weights for %d base kernels: cannot extend its kernel to unseen points", m.learner, len(out.Weights), len(base))
	}
	k := mat.NewSymDense(n, nil)
	dst := k.RawSymmetric()
	for t, w := range out.Weights {
		if w == 0 {
			continue
		}
		src := base[t].RawSymmetric()
		for i := range n {
			d, v := dst.Data[i*dst.Stride+i:i*dst.Stride+n], src.Data[i*src.Stride+i:i*src.Stride+n]
			for j := range d {
				d[j] += w * v[j]
			}
		}
	}
	return k, nil
}

// trainKernel returns the kernel fitted on the whole training half, memoised (an
// unsupervised fit is shared by every fold and by Tables 5.2 and 5.3).
func (s *mklSplit) trainKernel(ctx context.Context, m mklMethod, params string) (*mat.SymDense, error) {
	key := m.learner + params
	if f, ok := s.fitted[key]; ok {
		if f.err != nil && f.table != s.table {
			// The failure is news to this table.
			s.failed = append(s.failed, fitEvent{s.table, m.name, params, f.err})
			f.table = s.table
		}
		return f.k, f.err
	}
	k, err := s.kernel(ctx, m, params, s.train)
	s.fitted[key] = &fitted{k, err, s.table}
	return k, err
}

// svmAccuracy chooses the method's parameters and C by cross-validation on
// the training half and returns the test accuracy of the SVM trained on it.
func (s *mklSplit) svmAccuracy(ctx context.Context, m mklMethod) (float64, error) {
	spec, _ := learners.Lookup(m.learner)
	supervised := spec.Needs&(learners.NeedLabels|learners.NeedTarget) != 0
	takesC := m.learner != "" && hasParam(spec, "c") // the SVM-based learners' own C
	// The grid: parameter sets, each with the SVM's C values to try (one,
	// the learner's own, for a learner that takes C).
	type group struct {
		params string
		cs     []float64
	}
	var groups []group
	for _, p := range m.grid(spec) {
		if !takesC {
			groups = append(groups, group{p, cValues})
			continue
		}
		for _, c := range cValues {
			groups = append(groups, group{withParam(p, "c", c), []float64{c}})
		}
	}
	// Per parameter set, the fold kernels: a supervised learner is refitted
	// without the fold; any other kernel is the training-half one. A
	// parameter set whose fit fails is left out and reported.
	var bestParams string
	bestC, bestAcc := 0.0, -1.0
groups:
	for _, g := range groups {
		ks := make([]*mat.SymDense, cvFolds)
		for f := range cvFolds {
			var err error
			if supervised {
				ks[f], err = s.kernel(ctx, m, g.params, s.foldTrain(f))
			} else {
				ks[f], err = s.trainKernel(ctx, m, g.params)
			}
			if err != nil {
				if ctx.Err() != nil {
					return 0, ctx.Err()
				}
				continue groups
			}
		}
		for _, c := range g.cs {
			correct := 0.0
			for f := range cvFolds {
				val := make([]int, len(s.folds[f]))
				for i, p := range s.folds[f] {
					val[i] = s.train[p]
				}
				acc, err := s.svmTest(ctx, ks[f], s.foldTrain(f), val, c)
				if err != nil {
					if ctx.Err() != nil {
						return 0, ctx.Err()
					}
					s.failed = append(s.failed, fitEvent{s.table, m.name, withParam(g.params, "svm_c", c), err})
					continue groups
				}
				correct += acc * float64(len(val))
			}
			if acc := correct / float64(len(s.train)); acc > bestAcc {
				bestParams, bestC, bestAcc = g.params, c, acc
			}
		}
	}
	if bestAcc < 0 {
		return 0, errAllFailed
	}
	k, err := s.trainKernel(ctx, m, bestParams)
	if err == nil {
		var acc float64
		if acc, err = s.svmTest(ctx, k, s.train, s.test, bestC); err == nil {
			return acc, nil
		}
		s.failed = append(s.failed, fitEvent{s.table, m.name, withParam(bestParams, "svm_c", bestC), err})
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return 0, errAllFailed
}

// foldTrain returns the training points outside fold f.
func (s *mklSplit) foldTrain(f int) []int {
	var out []int
	for g, fold := range s.folds {
		if g == f {
			continue
		}
		for _, p := range fold {
			out = append(out, s.train[p])
		}
	}
	slices.Sort(out)
	return out
}

// svmTest trains a C-SVM on k over the points train and returns its
// accuracy on the points test.
func (s *mklSplit) svmTest(ctx context.Context, k *mat.SymDense, train, test []int, c float64) (float64, error) {
	y := make([]int, len(train))
	for i, p := range train {
		y[i] = s.y[p]
	}
	model, err := kernelmath.TrainSVM(ctx, subSym(k, train), y, kernelmath.SVMOptions{C: c})
	if err != nil {
		return 0, err
	}
	row := make([]float64, len(train))
	correct := 0
	for _, t := range test {
		for i, p := range train {
			row[i] = k.At(t, p)
		}
		pred := 1
		if model.Decision(row) < 0 {
			pred = -1
		}
		if pred == s.y[t] {
			correct++
		}
	}
	return float64(correct) / float64(len(test)), nil
}

// kpcaAccuracy is the 5-NN test accuracy in the 2-D KPCA embedding of the
// method's kernel (Table 5.3).
func (s *mklSplit) kpcaAccuracy(ctx context.Context, m mklMethod) (float64, error) {
	spec, _ := learners.Lookup(m.learner)
	params := m.grid(spec)[0]
	k, err := s.trainKernel(ctx, m, params)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, errAllFailed
	}
	emb, err := kpca(k, s.train, kpcaDims)
	if err != nil {
		return 0, err
	}
	trainLabels := make([]int, len(s.train))
	for i, p := range s.train {
		trainLabels[i] = s.d.labels[p]
	}
	correct := 0
	for _, t := range s.test {
		if knnPredict(emb, s.train, trainLabels, t, knnK) == s.d.labels[t] {
			correct++
		}
	}
	return float64(correct) / float64(len(s.test)), nil
}

// kpca embeds every point in the top dims kernel principal components of
// the training points (spec 1.10): the training Gram centred, its top
// eigenpairs (lambda_l, u_l), z_l(x) = sum_i u_il kc(x_i, x) / sqrt(lambda_l)
// with kc centred by the training statistics. A component of eigenvalue
// <= 0 (a rank-deficient kernel) is left at 0.
func kpca(k *mat.SymDense, train []int, dims int) (*mat.Dense, error) {
	n, m := k.SymmetricDim(), len(train)
	rowMean := make([]float64, n) // mean of k(x, x_i) over the training points
	for x := range n {
		for _, i := range train {
			rowMean[x] += k.At(x, i)
		}
		rowMean[x] /= float64(m)
	}
	all := 0.0
	for _, i := range train {
		all += rowMean[i]
	}
	all /= float64(m)
	centred := func(x, i int) float64 { return k.At(x, i) - rowMean[x] - rowMean[i] + all }
	kc := mat.NewSymDense(m, nil)
	for a, i := range train {
		for b := a; b < m; b++ {
			kc.SetSym(a, b, centred(i, train[b]))
		}
	}
	vals, vecs, err := kernelmath.Eigen(kc)
	if err != nil {
		return nil, err
	}
	emb := mat.NewDense(n, dims, nil)
	for l := range min(dims, m) {
		c := m - 1 - l // eigenvalues ascend
		if !(vals[c] > 1e-12*math.Max(1, vals[m-1])) {
			continue
		}
		scale := 1 / math.Sqrt(vals[c])
		for x := range n {
			v := 0.0
			for a, i := range train {
				v += vecs.At(a, c) * centred(x, i)
			}
			emb.Set(x, l, v*scale)
		}
	}
	return emb, nil
}

// knnPredict is the majority class of the k nearest training points of
// point t in the embedding (Euclidean; distance ties to the lower index, a
// tied vote to the class of the nearer neighbour).
func knnPredict(emb *mat.Dense, train, labels []int, t, k int) int {
	type nb struct {
		d float64
		i int
	}
	nbs := make([]nb, len(train))
	for a, i := range train {
		d := 0.0
		for c, v := range emb.RawRowView(t) {
			diff := v - emb.At(i, c)
			d += diff * diff
		}
		nbs[a] = nb{d, a}
	}
	slices.SortFunc(nbs, func(a, b nb) int {
		if a.d != b.d {
			if a.d < b.d {
				return -1
			}
			return 1
		}
		return a.i - b.i
	})
	votes := map[int]int{}
	best, bestVotes := -1, 0
	for _, n := range nbs[:min(k, len(nbs))] {
		votes[labels[n.i]]++
	}
	for _, n := range nbs[:min(k, len(nbs))] {
		if v := votes[labels[n.i]]; v > bestVotes {
			best, bestVotes = labels[n.i], v
		}
	}
	return best
}

// subSym returns the rows and columns idx of k.
func subSym(k *mat.SymDense, idx []int) *mat.SymDense {
	out := mat.NewSymDense(len(idx), nil)
	for a, i := range idx {
		for b := a; b < len(idx); b++ {
			out.SetSym(a, b, k.At(i, idx[b]))
		}
	}
	return out
}

// rowsOf returns the rows idx of x.
func rowsOf(x *mat.Dense, idx []int) *mat.Dense {
	_, cols := x.Dims()
	out := mat.NewDense(len(idx), cols, nil)
	for r, i := range idx {
		out.SetRow(r, x.RawRowView(i))
	}
	return out
}

// withParam adds "name": v to the JSON object params.
func withParam(params, name string, v float64) string {
	inner := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(params), "}"))
	sep := ","
	if inner == "{" {
		sep = ""
	}
	return fmt.Sprintf("%s%s%q:%g}", inner, sep, name, v)
}
