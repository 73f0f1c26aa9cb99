package decision

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteSignedRankP is signedRankP by enumeration: every assignment of signs
// to the non-zero gains' sizes, the statistic recomputed with mid-ranks
// found by counting (the ranks below a size plus half of its ties, plus
// one half).
func bruteSignedRankP(gains []float64) float64 {
	var abs []float64
	var pos []bool
	for _, g := range gains {
		if g != 0 {
			abs, pos = append(abs, math.Abs(g)), append(pos, g > 0)
		}
	}
	rank := make([]float64, len(abs))
	for i, a := range abs {
		below, ties := 0, 0
		for _, b := range abs {
			switch {
			case math.Abs(a-b) < 1e-9:
				ties++
			case b < a:
				below++
			}
		}
		rank[i] = float64(below) + float64(ties+1)/2
	}
	stat := func(sign func(int) bool) float64 {
		w := 0.0
		for i := range abs {
			if sign(i) {
				w += rank[i]
			}
		}
		return w
	}
	observed := stat(func(i int) bool { return pos[i] })
	n, hits := len(abs), 0
	for mask := 0; mask < 1<<n; mask++ {
		if stat(func(i int) bool { return mask>>i&1 == 1 }) >= observed-1e-9 {
			hits++
		}
	}
	return float64(hits) / float64(int(1)<<n)
}

func TestSignedRankP(t *testing.T) {
	for _, c := range []struct {
		gains []float64
		want  float64
	}{
		// Five gains, all positive: only the assignment of all plus signs
		// reaches the observed sum, 1 in 32.
		{[]float64{0.1, 0.2, 0.3, 0.4, 0.5}, 1.0 / 32},
		// Ranks 1-5 with rank 1 negative: sums 14 and 15 of 32.
		{[]float64{-0.1, 0.2, 0.3, 0.4, 0.5}, 2.0 / 32},
		// Three ties (all rank 2): two or three plus signs, 4 of 8; zeros carry nothing.
		{[]float64{0.1, 0, 0.1, -0.1, 0}, 4.0 / 8},
		{[]float64{-0.3, -0.1}, 1},
		{[]float64{0, 0}, 1},
		{nil, 1},
	} {
		if got := signedRankP(c.gains); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("signedRankP(%v) = %g, want %g", c.gains, got, c.want)
		}
	}
	// Gains as P@10 differences give (multiples of 0.1, rounded as
	// computed): many ties, zeros and both signs.
	rng := rand.New(rand.NewPCG(3, 4))
	for range 30 {
		gains := make([]float64, 4+rng.IntN(14))
		for i := range gains {
			gains[i] = float64(rng.IntN(7))/10 - float64(rng.IntN(5))/10
		}
		if got, want := signedRankP(gains), bruteSignedRankP(gains); math.Abs(got-want) > 1e-12 {
			t.Errorf("signedRankP(%v) = %g, enumerated %g", gains, got, want)
		}
		rev := slices.Clone(gains)
		slices.Reverse(rev)
		if signedRankP(rev) != signedRankP(gains) {
			t.Errorf("signedRankP depends on the order of %v", gains)
		}
	}
}

// TestFitAdoptsManySmallGains: the alternative gains one image on 14 of
// the 16 queries above an alignment of 0.55 and loses four on 2 of them
// (one on every other query), so
// switching them gains in expectation. The leave-one-out gains are the
// in-sample ones (every held-out query is decided by the same split); their
// mean is under one standard error, and the signed-rank test adopts the
// rule all the same.
func TestFitAdoptsManySmallGains(t *testing.T) {
	tab := planted(40)
	for i := range tab.Signals {
		tab.Signals[i][1], tab.Signals[i][3] = 0.1, 1 // only alignment varies
		tab.Precision[1][i] = 0.5                     // below the threshold the alternative loses
		if tab.Signals[i][2] > 0.5 {
			tab.Precision[1][i] = 0.7
		}
	}
	tab.Precision[1][9], tab.Precision[1][19] = 0.2, 0.2 // alignment 0.9: no threshold leaves them out
	r := Fit(tab)
	gains := make([]float64, 40)
	for i := range gains {
		if tab.Signals[i][2] > 0.5 {
			gains[i] = tab.Precision[1][i] - 0.6
		}
	}
	if r.Signal != "alignment" || r.Switched != 16 || math.Abs(r.CVGain-0.6/40) > 1e-12 {
		t.Fatalf("rule %+v, want poly above 0.55, 16 switched, cross-validated gain 0.015", r)
	}
	if r.CVGain > 1*r.CVGainSE {
		t.Errorf("cross-validated gain %g ± %g: want under one standard error", r.CVGain, r.CVGainSE)
	}
	if want := bruteSignedRankP(gains); math.Abs(r.CVP-want) > 1e-12 || want >= CVLevel || !r.Adopted {
		t.Errorf("rule p = %g (enumerated %g), adopted %v; want adopted below %g", r.CVP, want, r.Adopted, CVLevel)
	}
}
