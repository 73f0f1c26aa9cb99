package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/pfskl"
	"gonum.org/v1/gonum/mat"
)

// The PF-SKL protocol of Mao & Tsang (spec mao-pfskl-and-umkl.md A.12,
// A.14), suite "mao": transductive accuracy on the unlabelled points of
// random labelled/unlabelled splits (every class labelled at least once; a
// seed per split), for
//   - skl-kta: pfskl's Algorithm 1 on the graph of the set's (k, p), eps 1e-6;
//   - laprls: LapRLS (Belkin et al. 2006) on the same L^p and a Gaussian
//     ambient kernel of fixed sigma = mean ||x_i||, (gamma_A, gamma_I) chosen
//     from the 7 x 7 grid by the paper's 5-fold scheme (train on one fold,
//     validate on the other four), one-vs-rest for more classes;
//   - skl: pfskl's Algorithm 2, (mu, C) chosen from spec A.8's 7 x 7 grid by
//     the same 5-fold scheme, all on the one eigendecomposition (Fig. 1);
//   - svm: a C-SVM on the labelled points alone with exp(-||x-y||^2 / d)
//     (LIBSVM's default gamma = 1/d), C the grid value of best mean test
//     accuracy over the splits (the paper's oracle, which favours it).
//
// [Deviations: LapSVM and SimpleMKL are not run; the SVM is one-vs-rest
// for more than two classes where LIBSVM is one-vs-one.] The graph and its
// eigendecomposition do not depend on the labels: they are built once per
// data set, timed as "graph+eig" (the paper's "Lap" column plus the
// eigendecomposition its SKL_KTA time includes); "skl-kta" is then the
// per-split fit.
//
// Data: G50C by the paper's recipe (seeded); the UCI multiple-features
// pixel view (2000 handwritten digits, 240 pixel averages, 10 classes)
// stands in for USPST, which is not in ../shared/data (same task, digits
// from pixels, 10 classes, n_l = 50, the USPST graph k = 10, p = 2); and
// the binary UCI sets ionosphere, sonar, breast and pima (LIBSVM scaled
// copies; n_l = 50; the SSL-book graph k = 10, p = 2), for which the paper
// has no numbers.

var maoSuite = suite{
	protocols: []protocol{{tables: []tableInfo{
		{"mao-2", "PF-SKL Table 2: transductive accuracy (%) on the unlabelled points", 10},
		{"mao-3", "PF-SKL Table 3: time (s) per split (graph+eig once per data set)", 10},
	}, run: runMao}},
	methods:      func() []string { return maoMethods },
	methodTables: func(string) []string { return []string{"mao-2", "mao-3"} },
}

// maoMethods are the columns; skl is Algorithm 2 with (mu, C) chosen by
// the same 5-fold scheme as LapRLS (the paper's Fig. 1, no numbers).
var maoMethods = []string{"laprls", "skl-kta", "svm", "skl"}

// maoSet is a data set of the protocol with its graph parameters and
// labelled-set size, and the paper's row it stands beside.
type maoSet struct {
	d        *labelled
	k, p, nl int
	paperRow string // "" for none
}

// maoPaper is PF-SKL Table 2 (%) and Table 3 (s) for the methods run:
// LapRLS, SKL_KTA, SVM.
var maoPaper = map[string]struct{ acc, sec [3]paperCell }{
	"g50c":  {[3]paperCell{{94.64, 0.70}, {94.60, 0.64}, {91.08, 1.50}}, [3]paperCell{{235.3, 106.96}, {1.8, 0.50}, {0.1, 0.47}}},
	"uspst": {[3]paperCell{{89.44, 1.80}, {89.67, 1.32}, {79.33, 2.33}}, [3]paperCell{{15296.0, 203.11}, {23.3, 0.83}, {1.0, 0.03}}},
}

// maoPaperLap is Table 3's "Lap" column.
var maoPaperLap = map[string]float64{"g50c": 2.5, "uspst": 14.1}

var (
	lapGrid  = []float64{1e-6, 1e-4, 1e-2, 1e-1, 1, 10, 1e2}
	svmCGrid = []float64{1e-3, 1e-2, 1e-1, 1, 10, 1e2, 1e3}
)

// g50c is the G50C recipe (spec A.12.1): 550 points in 50 dimensions, two
// balanced unit-covariance Gaussians with means +-(delta/2) e,
// e = (1, ..., 1)/sqrt(50), delta = 2 Phi^-1(0.95): Bayes error 5%.
func g50c(seed uint64) *labelled {
	const n, d = 550, 50
	half := 1.6448536269514722 / math.Sqrt(d) // Phi^-1(0.95) per coordinate
	rng := rand.New(rand.NewPCG(seed, 0x650c))
	rows, y := make([][]float64, n), make([]float64, n)
	for i := range rows {
		c := float64(i % 2)
		rows[i] = make([]float64, d)
		for f := range rows[i] {
			rows[i][f] = (2*c-1)*half + rng.NormFloat64()
		}
		y[i] = c
	}
	out, _ := newLabelled("g50c", "synthetic: G50C recipe, 550 points, d = 50, Bayes error 5%", rows, y)
	return out
}

func (r *runner) maoSets() ([]maoSet, error) {
	if len(r.cfg.Datasets) > 0 {
		ds, err := r.loadSets(nil)
		if err != nil {
			return nil, err
		}
		var out []maoSet
		for _, d := range ds {
			out = append(out, maoSet{d: d, k: 10, p: 2, nl: 50})
		}
		return out, nil
	}
	if r.dataDir == "" {
		return nil, errNoData
	}
	sets := []maoSet{{d: g50c(uint64(r.cfg.Seed)), k: 50, p: 5, nl: 50, paperRow: "g50c"}}
	for _, b := range []builtin{
		{name: "mfeat-pixel(uspst)", rel: "uci/pmlb/mfeat_pixel.tsv.gz"},
		setIonosphere, setSonar, setBreast, setDiabetes,
	} {
		d, err := loadBuiltin(r.dataDir, b)
		if err != nil {
			return nil, err
		}
		s := maoSet{d: d, k: 10, p: 2, nl: 50}
		if b.name == "mfeat-pixel(uspst)" {
			s.paperRow = "uspst"
		}
		sets = append(sets, s)
	}
	return sets, nil
}

func runMao(ctx context.Context, r *runner, out map[string]*LearnersTable) error {
	sets, err := r.maoSets()
	if err != nil {
		return err
	}
	reps := tableReps(out)
	methods := slices.DeleteFunc(slices.Clone(maoMethods), func(m string) bool { return !r.selected(m) })
	var rows2, rows3 []LearnerRow
	var notes []string
	for _, set := range sets {
		begin := time.Now()
		sp, err := pfskl.NewSpectrum(ctx, set.d.x, pfskl.GraphParams{K: set.k, P: set.p, Eps: 1e-6})
		if err != nil {
			return fmt.Errorf("%s: %w", set.d.name, err)
		}
		lapTime := time.Since(begin).Seconds()
		n, dim := set.d.x.Dims()
		notes = append(notes, fmt.Sprintf("%s: n = %d, d = %d, %d classes, n_l = %d, k = %d, p = %d: %d edges, %d connected component(s), graph+eig %.1f s",
			set.d.name, n, dim, set.d.classes, set.nl, set.k, set.p, sp.Edges, len(sp.Components), lapTime))
		var lap *lapRLS
		if slices.Contains(methods, "laprls") {
			begin := time.Now()
			if lap, err = newLapRLS(set.d.x, sp, set.p); err != nil {
				return fmt.Errorf("%s: laprls: %w", set.d.name, err)
			}
			notes = append(notes, fmt.Sprintf("%s: laprls set-up (eigendecompositions of K = R R^T and of R^T L^p R, once per data set, not in its per-split time) %.1f s",
				set.d.name, time.Since(begin).Seconds()))
		}
		res := make([]maoRep, reps)
		err = r.parallel(ctx, "mao "+set.d.name, reps, func(ctx context.Context, i int) error {
			var err error
			res[i], err = maoSplit(ctx, set, sp, lap, methods, r.seedFor(set.d.name, i))
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", set.d.name, err)
		}
		r2, r3, more := maoRows(set, res, methods, lapTime)
		rows2, rows3, notes = append(rows2, r2...), append(rows3, r3...), append(notes, more...)
	}
	if t, ok := out["mao-2"]; ok {
		t.Rows, t.Notes = rows2, notes
		if ranks, note := rankRows("mao-2", rows2, methods); len(ranks) > 0 {
			t.Rows = append(t.Rows, ranks...)
			t.Notes = append(t.Notes, note)
		}
	}
	if t, ok := out["mao-3"]; ok {
		t.Rows = rows3
		t.Notes = append(t.Notes, "times are per fit on a shared machine; the paper's are MATLAB (LapRLS, SKL_KTA) and LIBSVM C++ (SVM): compare ratios")
	}
	return nil
}

// maoRep is what one split measured.
type maoRep struct {
	acc, sec map[string]float64
	svmAcc   []float64 // per C of svmCGrid
	svmSec   []float64
	cDrift   float64 // largest relative change of SKL_KTA's f over C in {1e-3, 1, 1e3}
	lapPair  [2]float64
	sklPair  [2]float64 // (mu, C)
}

// maoSplit draws the labelled points (every class at least once) and runs the methods.
func maoSplit(ctx context.Context, set maoSet, sp *pfskl.Spectrum, lap *lapRLS, methods []string, seed uint64) (maoRep, error) {
	rep := maoRep{acc: map[string]float64{}, sec: map[string]float64{}}
	labels := drawLabelled(set.d, set.nl, seed)
	lab, y, err := pfskl.Targets(labels)
	if err != nil {
		return rep, err
	}
	var unl []int
	for i, l := range labels {
		if l == learners.Unlabeled {
			unl = append(unl, i)
		}
	}
	score := func(pred []int) float64 {
		ok := 0
		for r, i := range unl {
			if pred[r] == set.d.labels[i] {
				ok++
			}
		}
		return float64(ok) / float64(len(unl))
	}
	for _, m := range methods {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		begin := time.Now()
		switch m {
		case "skl-kta":
			res, err := sp.Fit(lab, y, true, 1, 1)
			if err != nil {
				return rep, err
			}
			rep.sec[m] = time.Since(begin).Seconds()
			rep.acc[m] = score(res.Predict())
			for _, c := range []float64{1e-3, 1e3} {
				other, err := sp.Fit(lab, y, true, c, 1)
				if err != nil {
					return rep, err
				}
				rep.cDrift = max(rep.cDrift, relDiff(other.F, res.F))
			}
		case "laprls":
			pred, pair, err := lap.cvFit(ctx, lab, y, unl, set.d.labels, seed)
			if err != nil {
				return rep, err
			}
			rep.sec[m] = time.Since(begin).Seconds()
			rep.acc[m], rep.lapPair = score(pred), pair
		case "skl":
			pred, pair, err := sklCV(ctx, sp, lab, y, set.d.labels, seed)
			if err != nil {
				return rep, err
			}
			rep.sec[m] = time.Since(begin).Seconds()
			rep.acc[m], rep.sklPair = score(pred), pair
		case "svm":
			_, dim := set.d.x.Dims()
			k := kernelmath.RBF(set.d.x, float64(dim))
			kl := subSym(k, lab)
			for _, c := range svmCGrid {
				begin := time.Now()
				pred, err := svmPredict(ctx, k, kl, lab, unl, set.d.labels, set.d.classes, c)
				if err != nil {
					return rep, err
				}
				rep.svmSec = append(rep.svmSec, time.Since(begin).Seconds())
				rep.svmAcc = append(rep.svmAcc, score(pred))
			}
		}
	}
	return rep, nil
}

// drawLabelled returns the data set's labels with all but nl points
// Unlabeled: one random point of every class, then random others.
func drawLabelled(d *labelled, nl int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0x1abe1))
	perm := rng.Perm(len(d.labels))
	out := make([]int, len(d.labels))
	for i := range out {
		out[i] = learners.Unlabeled
	}
	have := make([]bool, d.classes)
	count := 0
	for _, i := range perm {
		if !have[d.labels[i]] {
			have[d.labels[i]], out[i] = true, d.labels[i]
			count++
		}
	}
	for _, i := range perm {
		if count >= nl {
			break
		}
		if out[i] == learners.Unlabeled {
			out[i] = d.labels[i]
			count++
		}
	}
	return out
}

// relDiff is max |a - b| / max |b|.
func relDiff(a, b *mat.Dense) float64 {
	var diff mat.Dense
	diff.Sub(a, b)
	return mat.Norm(&diff, math.Inf(1)) / mat.Norm(b, math.Inf(1))
}

// svmPredict trains a C-SVM (one-vs-rest for more than two classes) on the
// labelled points and predicts the unlabelled ones.
func svmPredict(ctx context.Context, k, kl *mat.SymDense, lab, unl, labels []int, classes int, c float64) ([]int, error) {
	yl := make([]int, len(lab))
	for r, i := range lab {
		yl[r] = labels[i]
	}
	row := make([]float64, len(lab))
	fill := func(u int) {
		for r, i := range lab {
			row[r] = k.At(u, i)
		}
	}
	pred := make([]int, len(unl))
	if classes == 2 {
		for r := range yl {
			yl[r] = 2*yl[r] - 1
		}
		m, err := kernelmath.TrainSVM(ctx, kl, yl, kernelmath.SVMOptions{C: c})
		if err != nil {
			return nil, err
		}
		for r, u := range unl {
			fill(u)
			if m.Decision(row) > 0 {
				pred[r] = 1
			}
		}
		return pred, nil
	}
	m, err := kernelmath.TrainOVR(ctx, kl, yl, kernelmath.SVMOptions{C: c})
	if err != nil {
		return nil, err
	}
	for r, u := range unl {
		fill(u)
		pred[r] = m.Predict(row)
	}
	return pred, nil
}

// maoRows aggregates the splits of one data set: accuracy and time per
// method, the SVM at its oracle C, and notes.
func maoRows(set maoSet, res []maoRep, methods []string, lapTime float64) (acc, sec []LearnerRow, notes []string) {
	name := set.d.name
	paper, hasPaper := maoPaper[set.paperRow]
	add := func(rows []LearnerRow, table, method, metric string, xs []float64, p *paperCell) []LearnerRow {
		row := LearnerRow{Table: table, Dataset: name, Method: method, Metric: metric, Value: metrics.Mean(xs), Std: stdDev(xs), Runs: len(xs)}
		if p != nil {
			v := p.mean
			if metric == metricAccuracy {
				v /= 100
				row.PaperStd = p.std / 100
			} else {
				row.PaperStd = p.std
			}
			row.Paper = &v
		}
		return append(rows, row)
	}
	cellOf := func(cells [3]paperCell, m string) *paperCell {
		i := slices.Index(maoMethods, m)
		if !hasPaper || i >= len(cells) {
			return nil
		}
		return &cells[i]
	}
	for _, m := range methods {
		var a, s []float64
		if m == "svm" {
			best := 0
			for ci := range svmCGrid {
				if metrics.Mean(column(res, ci, true)) > metrics.Mean(column(res, best, true)) {
					best = ci
				}
			}
			a, s = column(res, best, true), column(res, best, false)
			notes = append(notes, fmt.Sprintf("%s: svm at the oracle C = %g (best mean accuracy over the splits of %v)", name, svmCGrid[best], svmCGrid))
		} else {
			for _, r := range res {
				a, s = append(a, r.acc[m]), append(s, r.sec[m])
			}
		}
		acc = add(acc, "mao-2", m, metricAccuracy, a, cellOf(paper.acc, m))
		sec = add(sec, "mao-3", m, metricSeconds, s, cellOf(paper.sec, m))
	}
	lap := LearnerRow{Table: "mao-3", Dataset: name, Method: "graph+eig", Metric: metricSeconds, Value: lapTime, Runs: 1}
	if v, ok := maoPaperLap[set.paperRow]; ok {
		lap.Paper = &v
	}
	sec = append(sec, lap)
	if slices.Contains(methods, "skl-kta") {
		drift := 0.0
		for _, r := range res {
			drift = max(drift, r.cDrift)
		}
		notes = append(notes, fmt.Sprintf("%s: SKL_KTA decision values over C in {1e-3, 1, 1e3} differ by at most %.2g (relative, max norm; Proposition 4)", name, drift))
	}
	for _, chosen := range []struct {
		method, what string
		pair         func(maoRep) [2]float64
	}{{"laprls", "LapRLS (gamma_A, gamma_I)", func(r maoRep) [2]float64 { return r.lapPair }},
		{"skl", "SKL (mu, C)", func(r maoRep) [2]float64 { return r.sklPair }}} {
		if slices.Contains(methods, chosen.method) {
			pairs := map[[2]float64]int{}
			for _, r := range res {
				pairs[chosen.pair(r)]++
			}
			notes = append(notes, fmt.Sprintf("%s: %s chosen: %v", name, chosen.what, pairs))
		}
	}
	return acc, sec, notes
}

// column returns the SVM accuracy (or time) at C index ci of every split.
func column(res []maoRep, ci int, accuracy bool) []float64 {
	out := make([]float64, len(res))
	for i, r := range res {
		if accuracy {
			out[i] = r.svmAcc[ci]
		} else {
			out[i] = r.svmSec[ci]
		}
	}
	return out
}

// lapRLS holds what every LapRLS solve on a data set shares (read-only, so
// splits run in parallel), computed once per data set.
//
// DEVIATION: none — the same estimator as spec A.14.1 (Belkin et al. 2006,
// eq. 36), another algebra. The spec's closed form is f = K alpha with
//
//	(J K + gamma_A l I + gamma_I l/n^2 L^p K) alpha = Y,
//
// J the diagonal 0/1 matrix of the l training points, Y their targets'
// rows at those points and 0 elsewhere: an n x n nonsymmetric LU solve per
// (gamma_A, gamma_I) and fold, 246 a split. Write it (M K + lam I) alpha = Y
// with M = J + c L^p, c = gamma_I l/n^2, lam = gamma_A l, and factor the
// ambient kernel K = R R^T (R = V Lam^1/2 from K's eigendecomposition, its
// tiny negative eigenvalues clipped to 0 and their columns dropped; R is
// K^1/2 V, and nothing below depends on which factor is used). Multiplying
// the system by R^T and setting beta = R^T alpha gives
//
//	(R^T M R + lam I) beta = R^T Y,   f = K alpha = R beta,
//
// for any solution alpha (beta is unique: the matrix is positive definite).
// R^T M R = c T + Z Z^T with T = R^T L^p R, fixed per data set, and Z the
// rows of R at the training points, transposed (r x l); R^T Y = Z Y_train.
// With T = W Theta W^T (eigendecomposition once per data set) and
// D = c T + lam I = W (c Theta + lam) W^T, the push-through identity
// (D + Z Z^T)^-1 Z = D^-1 Z (I + Z^T D^-1 Z)^-1 gives
//
//	f = P E Zt^T (I + Zt E Zt^T)^-1 Y_train,   P = R W,  E = (c Theta + lam)^-1,
//
// where Zt = the rows of P at the training points (Z^T W, l x r). A solve is
// then an l x l Cholesky and products with P: O(n l^2 + l^3 + n r cols) per
// (gamma_A, gamma_I) and fold instead of (2/3) n^3. Tests pin it to the LU
// form to 1e-8 relative (TestLapRLSMatchesLU).
type lapRLS struct {
	p     *mat.Dense // n x r: P = R W
	theta []float64  // the r eigenvalues of T = R^T L^p R, clipped at 0
}

// lapKernel is LapRLS's ambient Gaussian K, sigma = mean ||x_i|| (spec A.12.2).
func lapKernel(x *mat.Dense) *mat.SymDense {
	n, _ := x.Dims()
	sigma := 0.0
	for i := range n {
		sigma += mat.Norm(x.RowView(i), 2)
	}
	sigma /= float64(n)
	return kernelmath.RBF(x, 2*sigma*sigma)
}

// newLapRLS factors K = R R^T and T = R^T L^p R = W Theta W^T,
// L^p = U diag(gamma^p) U^T from the spectrum, and keeps P = R W and Theta.
// O(n^3): two eigendecompositions and three products.
func newLapRLS(x *mat.Dense, sp *pfskl.Spectrum, p int) (*lapRLS, error) {
	vals, v, err := kernelmath.Eigen(lapKernel(x))
	if err != nil {
		return nil, err
	}
	n := len(vals)
	lo := sort.Search(n, func(i int) bool { return vals[i] > 0 })
	// R = V Lam^1/2 over the positive eigenvalues (ascending).
	r := mat.DenseCopyOf(v.Slice(0, n, lo, n))
	for i := range n {
		row := r.RawRowView(i)
		for c := range row {
			row[c] *= math.Sqrt(vals[lo+c])
		}
	}
	// T = B B^T, B = R^T U diag(gamma^(p/2)).
	ug := mat.DenseCopyOf(sp.U)
	for i := range n {
		row := ug.RawRowView(i)
		for c := range row {
			row[c] *= math.Pow(sp.Gamma[c], float64(p)/2)
		}
	}
	var b mat.Dense
	b.Mul(r.T(), ug)
	t := mat.NewSymDense(n-lo, nil)
	t.SymOuterK(1, &b)
	theta, w, err := kernelmath.Eigen(t)
	if err != nil {
		return nil, err
	}
	for i, th := range theta {
		theta[i] = max(th, 0)
	}
	var pw mat.Dense
	pw.Mul(r, w)
	return &lapRLS{p: &pw, theta: theta}, nil
}

// solve returns the rows at of f = K alpha, alpha the LapRLS solution for
// the training points train (rows of y) at (gamma_A, gA) and (gamma_I, gI)
// (Belkin et al. 2006, eq. 36; see lapRLS for the algebra).
func (l *lapRLS) solve(train []int, y *mat.Dense, gA, gI float64, at []int) (*mat.Dense, error) {
	n, r := l.p.Dims()
	nl := float64(len(train))
	c, lam := gI*nl/float64(n*n), gA*nl
	_, cols := y.Dims()
	// zt = Zt E, zs = Zt E^1/2: I + Zt E Zt^T = I + zs zs^T.
	zt, zs := mat.NewDense(len(train), r, nil), mat.NewDense(len(train), r, nil)
	for k, i := range train {
		src, e, s := l.p.RawRowView(i), zt.RawRowView(k), zs.RawRowView(k)
		for j, th := range l.theta {
			inv := 1 / (c*th + lam)
			e[j], s[j] = src[j]*inv, src[j]*math.Sqrt(inv)
		}
	}
	g := mat.NewSymDense(len(train), nil)
	g.SymOuterK(1, zs)
	for k := range train {
		g.SetSym(k, k, g.At(k, k)+1)
	}
	var ch mat.Cholesky
	if !ch.Factorize(g) {
		return nil, fmt.Errorf("laprls: I + Z^T D^-1 Z not positive definite at gamma_A %g, gamma_I %g", gA, gI)
	}
	var x, v mat.Dense
	if err := ch.SolveTo(&x, y); err != nil {
		return nil, err
	}
	v.Mul(zt.T(), &x)
	f := mat.NewDense(len(at), cols, nil)
	for k, i := range at {
		f.RowView(k).(*mat.VecDense).MulVec(v.T(), l.p.RowView(i))
	}
	return f, nil
}

// cvFit chooses (gamma_A, gamma_I) from the 7 x 7 grid by gridCV, then
// refits on all labelled points and predicts the unlabelled ones.
func (l *lapRLS) cvFit(ctx context.Context, lab []int, y *mat.Dense, unl, labels []int, seed uint64) ([]int, [2]float64, error) {
	row := make(map[int]int, len(lab))
	for r, i := range lab {
		row[i] = r
	}
	best, err := gridCV(ctx, lab, y, labels, seed, lapGrid, lapGrid, func(train []int, ty *mat.Dense, gA, gI float64) (func(int) int, error) {
		f, err := l.solve(train, ty, gA, gI, lab)
		if err != nil {
			return nil, err
		}
		pred := pfskl.Classify(f)
		return func(i int) int { return pred[row[i]] }, nil
	})
	if err != nil {
		return nil, best, err
	}
	f, err := l.solve(lab, y, best[0], best[1], unl)
	if err != nil {
		return nil, best, err
	}
	return pfskl.Classify(f), best, nil
}

// gridCV is the paper's 5-fold scheme (spec A.12.2) on the labelled points
// (lab, rows of y, classes in labels): stratified round-robin folds, fit on
// one fold, validate on the other four; it returns the pair of as x bs of
// highest validation accuracy (the first on ties). fit returns the
// predicted class of any point index.
func gridCV(ctx context.Context, lab []int, y *mat.Dense, labels []int, seed uint64, as, bs []float64,
	fit func(train []int, ty *mat.Dense, a, b float64) (func(int) int, error)) ([2]float64, error) {
	folds := stratifiedFolds(lab, labels, cvFolds, seed)
	best, bestAcc := [2]float64{}, -1.0
	for _, a := range as {
		for _, b := range bs {
			correct, total := 0, 0
			for _, fold := range folds {
				if err := ctx.Err(); err != nil {
					return best, err
				}
				train := make([]int, len(fold))
				ty := mat.NewDense(len(fold), y.RawMatrix().Cols, nil)
				for r, p := range fold {
					train[r] = lab[p]
					ty.SetRow(r, y.RawRowView(p))
				}
				pred, err := fit(train, ty, a, b)
				if err != nil {
					return best, err
				}
				for p, i := range lab {
					if !slices.Contains(fold, p) {
						total++
						if pred(i) == labels[i] {
							correct++
						}
					}
				}
			}
			if acc := float64(correct) / float64(total); acc > bestAcc {
				best, bestAcc = [2]float64{a, b}, acc
			}
		}
	}
	return best, nil
}

// stratifiedFolds deals the labelled points (positions in lab) to k folds
// class by class, round robin from a seeded shuffle, so that each fold
// holds every class it can (spec A.12.2 [INTERP]).
func stratifiedFolds(lab, labels []int, k int, seed uint64) [][]int {
	rng := rand.New(rand.NewPCG(seed, 0xf01d))
	perm := rng.Perm(len(lab))
	slices.SortStableFunc(perm, func(a, b int) int { return labels[lab[a]] - labels[lab[b]] })
	folds := make([][]int, k)
	for i, p := range perm {
		folds[i%k] = append(folds[i%k], p)
	}
	return folds
}

// sklCV chooses SKL's (mu, C) from the 7 x 7 grid of spec A.8 by gridCV
// on the one eigendecomposition, then fits on all labelled points and
// predicts the unlabelled ones (in index order).
func sklCV(ctx context.Context, sp *pfskl.Spectrum, lab []int, y *mat.Dense, labels []int, seed uint64) ([]int, [2]float64, error) {
	best, err := gridCV(ctx, lab, y, labels, seed, lapGrid, svmCGrid, func(train []int, ty *mat.Dense, mu, c float64) (func(int) int, error) {
		res, err := sp.Fit(train, ty, false, c, mu)
		if err != nil {
			return nil, err
		}
		pred := res.Predict()
		return func(i int) int {
			row, _ := slices.BinarySearch(res.Unlabelled, i)
			return pred[row]
		}, nil
	})
	if err != nil {
		return nil, best, err
	}
	res, err := sp.Fit(lab, y, false, best[1], best[0])
	if err != nil {
		return nil, best, err
	}
	return res.Predict(), best, nil
}
