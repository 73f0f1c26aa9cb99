package decision

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/features"
	"github.com/kernelrank/kernelrank/rerank"
)

// planted is a table of q queries where choice 1 (visual) is right exactly
// where the alignment signal is above 0.5 and the served choice 0 (raw)
// elsewhere; window and the other signals carry nothing.
func planted(q int) Table {
	tab := Table{Choices: []Choice{{Strategy: "raw"}, {Strategy: "poly", Params: []byte(`{"degree":2}`)}, {Strategy: "text"}},
		Precision: [][]float64{make([]float64, q), make([]float64, q), make([]float64, q)}}
	for i := range q {
		align := float64(i%10) / 10 // 0 ... 0.9
		tab.Signals = append(tab.Signals, []float64{200, 0.1 + 0.01*float64(i%7), align, 1 + float64(i%3)})
		tab.Precision[0][i] = 0.6
		tab.Precision[2][i] = 0.55
		if align > 0.5 {
			tab.Precision[1][i] = 0.9
		} else {
			tab.Precision[1][i] = 0.3
		}
	}
	return tab
}

func TestFitFindsThePlantedSplit(t *testing.T) {
	r := Fit(planted(40))
	if !r.Adopted || r.Signal != "alignment" || !r.Above || r.Alternative == nil || r.Alternative.Strategy != "poly" {
		t.Fatalf("rule %+v, want poly above an alignment threshold, adopted", r)
	}
	if r.Threshold <= 0.5 || r.Threshold >= 0.6 {
		t.Errorf("threshold %g, want between 0.5 and 0.6 (half-way: 0.55)", r.Threshold)
	}
	// 16 of 40 queries (alignment 0.6-0.9) switch, each gaining 0.3.
	if r.Switched != 16 || math.Abs(r.Gain-16*0.3/40) > 1e-12 {
		t.Errorf("switched %d, gain %g; want 16, %g", r.Switched, r.Gain, 16*0.3/40)
	}
	if math.Abs(r.CVGain-r.Gain) > 1e-12 {
		t.Errorf("leave-one-out gain %g, want the in-sample %g: every held-out query is on the same side", r.CVGain, r.Gain)
	}
	if r.CVP != math.Exp2(-16) { // 16 gains, all positive: one sign assignment in 2^16
		t.Errorf("signed-rank p %g, want 2^-16", r.CVP)
	}
	d := r.Decide([]float64{200, 0.1, 0.7, 1})
	if d.Strategy != "poly" || string(d.Params) != `{"degree":2}` || d.Signals["alignment"] != 0.7 || !strings.Contains(d.Reason, "alignment 0.7 > 0.55") {
		t.Errorf("decision above the threshold %+v", d)
	}
	if d := r.Decide([]float64{200, 0.1, 0.2, 1}); d.Strategy != "raw" || !strings.Contains(d.Reason, "not >") {
		t.Errorf("decision below the threshold %+v", d)
	}
	if d := r.Decide(nil); d.Strategy != "raw" || d.Signals != nil || !strings.Contains(d.Reason, "too few") {
		t.Errorf("decision without signals %+v", d)
	}
}

// TestFitKeepsTheServedChoiceOnNoise: where the alternative's gains do not
// follow any signal, a split fitted on all the queries finds some gain in
// sample, and cross-validation must refuse it.
func TestFitKeepsTheServedChoiceOnNoise(t *testing.T) {
	tab := planted(40)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range tab.Precision[1] {
		// Gains of -0.1, 0 or +0.1 drawn at random, unrelated to the signals.
		tab.Precision[1][i] = 0.6 + 0.1*float64(rng.IntN(3)-1)
	}
	r := Fit(tab)
	if r.Adopted {
		t.Fatalf("rule %+v adopted on noise", r)
	}
	if d := r.Decide([]float64{200, 0.1, 0.7, 1}); d.Strategy != "raw" {
		t.Errorf("a rule not adopted decided %+v", d)
	}
}

func TestFitWithoutGainHasNoRule(t *testing.T) {
	tab := planted(20)
	copy(tab.Precision[1], tab.Precision[0])
	copy(tab.Precision[2], tab.Precision[0])
	r := Fit(tab)
	if r.Adopted || r.Alternative != nil || r.Gain != 0 || r.CVP != 1 || !strings.Contains(r.Reason, "no split") {
		t.Errorf("rule %+v, want none", r)
	}
}

// TestFitNeedsMinLeaf: a split that switches fewer than minLeaf queries is
// not considered, however much they gain.
func TestFitNeedsMinLeaf(t *testing.T) {
	tab := planted(40)
	for i := range tab.Precision[1] {
		tab.Precision[1][i] = 0.6
		if i < 3 { // the 3 highest tag_cohesion values are 0.16 at i = 6, 13, 20, ...: not these
			tab.Signals[i][1] = 1
			tab.Precision[1][i] = 1
		}
	}
	if minLeaf(40) != 4 {
		t.Fatalf("minLeaf(40) = %d, want 4", minLeaf(40))
	}
	if r := Fit(tab); r.Alternative != nil && r.Switched < 4 {
		t.Errorf("rule %+v switches fewer than 4 queries", r)
	}
}

func TestMeasure(t *testing.T) {
	tags := func(ts ...string) features.TagVector {
		v := features.TagVector{}
		for _, s := range ts {
			v[s] = 1 / math.Sqrt(float64(len(ts)))
		}
		return v
	}
	// Two visual groups that match two tag groups; the image without
	// features is left out.
	cands := []rerank.Candidate{
		{ID: "a1", Visual: []float64{1, 0}, Tags: tags("q", "x")},
		{ID: "a2", Visual: []float64{2, 0}, Tags: tags("q", "x")},
		{ID: "b1", Visual: []float64{0, 1}, Tags: tags("q", "y")},
		{ID: "b2", Visual: []float64{0, 3}, Tags: tags("q", "y")},
		{ID: "none", Tags: tags("q")},
	}
	sig := Measure(cands)
	if len(sig) != len(Names) {
		t.Fatalf("signals %v", sig)
	}
	// Pairs: a1a2 and b1b2 cosine 1, the four across 1/2: mean (2 + 4/2)/6 = 2/3.
	want := []float64{4, 2.0 / 3, 1, 0}
	for s := range 3 {
		if math.Abs(sig[s]-want[s]) > 1e-12 {
			t.Errorf("%s = %g, want %g", Names[s], sig[s], want[s])
		}
	}
	// Four images: the top 10 are all of them, holding exactly their share.
	if math.Abs(sig[3]-1) > 1e-9 {
		t.Errorf("concentration = %g, want 1", sig[3])
	}
	if Measure(cands[:2]) != nil || Measure(append(cands[:2:2], cands[4])) != nil {
		t.Error("signals of fewer than three candidates with features")
	}
}

// TestFitSwitchesAtMostHalf: an alternative better on every query is a new
// single choice, SelectDefault's to make; a rule gives it half at most.
func TestFitSwitchesAtMostHalf(t *testing.T) {
	tab := planted(40)
	for i := range tab.Precision[1] {
		tab.Precision[1][i] = 1
	}
	r := Fit(tab)
	if r.Alternative == nil || r.Switched != maxLeaf(40) || maxLeaf(40) != 20 {
		t.Errorf("rule %+v switches %d queries, want the most allowed, 20", r, r.Switched)
	}
}
