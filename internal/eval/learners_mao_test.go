package eval

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
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
