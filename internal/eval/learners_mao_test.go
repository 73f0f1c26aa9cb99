package eval

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/pfskl"
	"gonum.org/v1/gonum/mat"
)

// TestG50CRecipe: 275 points a class whose means differ by
// delta = 2 Phi^-1(0.95) = 3.2897 along e = 1/sqrt(50) (1, ..., 1).
func TestG50CRecipe(t *testing.T) {
	d := g50c(7)
	n, dim := d.x.Dims()
	if n != 550 || dim != 50 || d.classes != 2 {
		t.Fatalf("%d x %d, %d classes", n, dim, d.classes)
	}
	var proj [2]float64
	var count [2]int
	for i, c := range d.labels {
		s := 0.0
		for _, v := range d.x.RawRowView(i) {
			s += v
		}
		proj[c] += s / math.Sqrt(50)
		count[c]++
	}
	gap := proj[1]/float64(count[1]) - proj[0]/float64(count[0])
	// The projection of a class mean has sd 1/sqrt(275): 6 sd is 0.36.
	if count[0] != 275 || math.Abs(gap-3.2897) > 0.36 {
		t.Fatalf("classes %v, mean gap along e %.3f, want 3.2897", count, gap)
	}
}

func TestDrawLabelled(t *testing.T) {
	d := g50c(1)
	d.labels[0], d.classes = 2, 3 // one point of a rare class
	labels := drawLabelled(d, 10, 3)
	seen := map[int]int{}
	for _, l := range labels {
		seen[l]++
	}
	if seen[2] != 1 || seen[0]+seen[1]+seen[2] != 10 {
		t.Fatalf("labelled counts %v, want 10 with the rare class", seen)
	}
}

// TestMaoSonar runs the protocol on sonar (2 splits): every method has an
// accuracy above chance, SKL_KTA's decision values do not move with C, and
// the SVM's C is the oracle's.
func TestMaoSonar(t *testing.T) {
	path := dataFile(t, "uci/libsvm/sonar_scale")
	rep, err := Learners(context.Background(), LearnersConfig{Suite: "mao", Reps: 2, Workers: 1, Seed: 1, Datasets: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	tb := table(t, rep, "mao-2")
	for _, m := range maoMethods {
		r, ok := find(tb.Rows, "sonar", m, metricAccuracy)
		if !ok || r.Runs != 2 || !(r.Value > 0.55 && r.Value <= 1) {
			t.Errorf("%s: %+v", m, r)
		}
	}
	if !slices.ContainsFunc(tb.Notes, func(n string) bool { return strings.Contains(n, "over C in {1e-3, 1, 1e3} differ by at most") }) {
		t.Errorf("no C-invariance note in %v", tb.Notes)
	}
	if _, ok := find(table(t, rep, "mao-3").Rows, "sonar", "graph+eig", metricSeconds); !ok {
		t.Error("no graph+eig time")
	}
}

func TestSuiteErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  LearnersConfig
		want string
	}{
		{LearnersConfig{Suite: "mao", Tables: []string{"3.2"}}, "unknown table"},
		{LearnersConfig{Suite: "abbasnejad", Methods: []string{"skl-kta"}}, "unknown method"},
		{LearnersConfig{Suite: "abbasnejad", Tables: []string{"abb-5.2"}, Methods: []string{"tlk"}}, "it is in table abb-4.1"},
	} {
		if _, err := Learners(context.Background(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one saying %q", tc.cfg, err, tc.want)
		}
	}
}

func TestInfluenceNames(t *testing.T) {
	for combo, want := range map[string][]string{"LP": {"L", "P"}, "LG1": {"L", "G1"}, "LPG1G2": {"L", "P", "G1", "G2"}, "LPG2": {"L", "P", "G2"}} {
		var got []string
		for _, b := range baseNames {
			if containsKernel(combo, b) {
				got = append(got, b)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s holds %v, want %v", combo, got, want)
		}
	}
	if s := split(150, 4); !slices.Equal(s, []int{38, 38, 37, 37}) {
		t.Errorf("split(150, 4) = %v", s)
	}
}

// TestTLKTable runs Table 4.1's protocol once per bin for TLK and the
// linear kernel: on the synthetic set (sd 5, Bayes error 7.9%) both are
// near the Bayes accuracy.
func TestTLKTable(t *testing.T) {
	dataFile(t, "uci/pmlb/mfeat_pixel.tsv.gz")
	rep, err := Learners(context.Background(), LearnersConfig{Suite: "abbasnejad", Tables: []string{"abb-4.1"}, Methods: []string{"tlk", "linear"}, Reps: 1, Workers: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tb := table(t, rep, "abb-4.1")
	for _, m := range []string{"tlk", "linear"} {
		r, ok := find(tb.Rows, "synthetic/average", m, metricAccuracy)
		if !ok || r.Value < 0.86 || r.Value > 0.95 || r.Paper == nil {
			t.Errorf("%s: %+v", m, r)
		}
	}
}

// lapRLSByLU is LapRLS as spec A.14.1 writes it, the independent reference
// of lapRLS.solve: it returns the solver of f = K alpha,
// alpha = (J K + gA l I + gI l/n^2 L^p K)^-1 Y by a dense nonsymmetric LU
// solve, on all n points.
func lapRLSByLU(t *testing.T, x *mat.Dense, sp *pfskl.Spectrum, p int) func(train []int, y *mat.Dense, gA, gI float64) *mat.Dense {
	t.Helper()
	n, _ := x.Dims()
	k := mat.DenseCopyOf(lapKernel(x))
	scaled := mat.DenseCopyOf(sp.U)
	for r := range n {
		row := scaled.RawRowView(r)
		for i := range row {
			row[i] *= math.Pow(sp.Gamma[i], float64(p))
		}
	}
	var lp, lk mat.Dense
	lp.Mul(scaled, sp.U.T())
	lk.Mul(&lp, k)
	return func(train []int, y *mat.Dense, gA, gI float64) *mat.Dense {
		nl := float64(len(train))
		a := mat.NewDense(n, n, nil)
		a.Scale(gI*nl/float64(n*n), &lk)
		for _, i := range train {
			for j := range n {
				a.Set(i, j, a.At(i, j)+k.At(i, j))
			}
		}
		for i := range n {
			a.Set(i, i, a.At(i, i)+gA*nl)
		}
		_, cols := y.Dims()
		b := mat.NewDense(n, cols, nil)
		for r, i := range train {
			b.SetRow(i, y.RawRowView(r))
		}
		var lu mat.LU
		lu.Factorize(a)
		var alpha, f mat.Dense
		if err := lu.SolveTo(&alpha, false, b); err != nil {
			t.Fatal(err)
		}
		f.Mul(k, &alpha)
		return &f
	}
}

// threeBlobs is a 3-class set of n points in 4 dimensions (unit Gaussians
// around three means 3 apart).
func threeBlobs(t *testing.T, n int, seed uint64) *labelled {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	rows, y := make([][]float64, n), make([]float64, n)
	for i := range rows {
		c := i % 3
		rows[i] = make([]float64, 4)
		for f := range rows[i] {
			rows[i][f] = rng.NormFloat64()
		}
		rows[i][c] += 3
		y[i] = float64(c)
	}
	d, err := newLabelled("blobs", "test", rows, y)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// lapCase is a small data set with its graph and LapRLS set-up.
type lapCase struct {
	d    *labelled
	lap  *lapRLS
	lu   func(train []int, y *mat.Dense, gA, gI float64) *mat.Dense
	name string
}

func newLapCase(t *testing.T, name string, d *labelled, k, p int) lapCase {
	t.Helper()
	sp, err := pfskl.NewSpectrum(context.Background(), d.x, pfskl.GraphParams{K: k, P: p, Eps: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	lap, err := newLapRLS(d.x, sp, p)
	if err != nil {
		t.Fatal(err)
	}
	return lapCase{d: d, lap: lap, lu: lapRLSByLU(t, d.x, sp, p), name: name}
}

// TestLapRLSMatchesLU: the factored solve gives the LU form's f on every
// point to 1e-8 (relative, max norm) at the grid's extremes and inside it,
// for one column (two classes) and one-hot columns (three), for a fold-sized
// and a full labelled set.
func TestLapRLSMatchesLU(t *testing.T) {
	g := g50c(3)
	g.x = mat.DenseCopyOf(g.x.Slice(0, 100, 0, 50))
	g.labels = g.labels[:100]
	cases := []lapCase{newLapCase(t, "g50c[:100] p=5", g, 10, 5), newLapCase(t, "blobs p=2", threeBlobs(t, 90, 1), 6, 2)}
	pairs := [][2]float64{{1e-6, 1e-6}, {1e-6, 1e2}, {1e2, 1e-6}, {1e2, 1e2}, {1e-2, 1}, {1, 1e-4}}
	for _, tc := range cases {
		n, _ := tc.d.x.Dims()
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		for _, nl := range []int{10, 40} {
			lab, y, err := pfskl.Targets(drawLabelled(tc.d, nl, uint64(nl)))
			if err != nil {
				t.Fatal(err)
			}
			if _, cols := y.Dims(); cols != map[int]int{2: 1, 3: 3}[tc.d.classes] {
				t.Fatalf("%s: %d target columns for %d classes", tc.name, cols, tc.d.classes)
			}
			for _, pr := range pairs {
				got, err := tc.lap.solve(lab, y, pr[0], pr[1], all)
				if err != nil {
					t.Fatal(err)
				}
				want := tc.lu(lab, y, pr[0], pr[1])
				if d := relDiff(got, want); !(d < 1e-8) {
					t.Errorf("%s, l = %d, (gA, gI) = %v: f differs from the LU solve by %.3g", tc.name, nl, pr, d)
				}
				// The rows asked for, in their order.
				part, err := tc.lap.solve(lab, y, pr[0], pr[1], []int{5, 0})
				if err != nil {
					t.Fatal(err)
				}
				for r, i := range []int{5, 0} {
					if !slices.Equal(part.RawRowView(r), got.RawRowView(i)) {
						t.Errorf("%s: row %d of the at = {5, 0} solve is %v, want %v", tc.name, r, part.RawRowView(r), got.RawRowView(i))
					}
				}
			}
		}
	}
}

// TestLapRLSSplitUnchanged: on whole splits, LapRLS's cross-validated
// (gamma_A, gamma_I) and its predictions on the unlabelled points are those
// of the same 5-fold scheme run on the LU form.
func TestLapRLSSplitUnchanged(t *testing.T) {
	sonar, err := loadBuiltin(dataFile(t, ""), setSonar)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []lapCase{newLapCase(t, "sonar", sonar, 10, 2), newLapCase(t, "blobs", threeBlobs(t, 120, 2), 10, 2)} {
		for seed := range uint64(2) {
			labels := drawLabelled(tc.d, 50, seed)
			lab, y, err := pfskl.Targets(labels)
			if err != nil {
				t.Fatal(err)
			}
			var unl []int
			for i, l := range labels {
				if l == learners.Unlabeled {
					unl = append(unl, i)
				}
			}
			pred, pair, err := tc.lap.cvFit(ctx, lab, y, unl, tc.d.labels, seed)
			if err != nil {
				t.Fatal(err)
			}
			wantPair, err := gridCV(ctx, lab, y, tc.d.labels, seed, lapGrid, lapGrid, func(train []int, ty *mat.Dense, gA, gI float64) (func(int) int, error) {
				all := pfskl.Classify(tc.lu(train, ty, gA, gI))
				return func(i int) int { return all[i] }, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			all := pfskl.Classify(tc.lu(lab, y, wantPair[0], wantPair[1]))
			want := make([]int, len(unl))
			for r, u := range unl {
				want[r] = all[u]
			}
			if pair != wantPair || !slices.Equal(pred, want) {
				t.Errorf("%s seed %d: chose %v, predictions %v; the LU form chooses %v, predicts %v", tc.name, seed, pair, pred, wantPair, want)
			}
		}
	}
}
