package metrics

import (
	"math"
	"slices"
	"testing"
)

// b turns a 0/1 pattern into a ranking.
func b(bits ...int) []bool {
	out := make([]bool, len(bits))
	for i, x := range bits {
		out[i] = x == 1
	}
	return out
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("%s = %.15g, want %.15g", what, got, want)
	}
}

func TestPrecisionAt(t *testing.T) {
	r := b(1, 0, 1, 0, 0)
	near(t, "P@1", PrecisionAt(r, 1), 1)
	near(t, "P@2", PrecisionAt(r, 2), 0.5)
	near(t, "P@3", PrecisionAt(r, 3), 2.0/3)
	near(t, "P@5", PrecisionAt(r, 5), 0.4)
	// Denominator n even past the end of the list: 2 hits / 10.
	near(t, "P@10", PrecisionAt(r, 10), 0.2)
	near(t, "P@0", PrecisionAt(r, 0), 0)
	near(t, "P@-3", PrecisionAt(r, -3), 0)
	near(t, "P@3 empty", PrecisionAt(nil, 3), 0)
	near(t, "P@4 of 0111", PrecisionAt(b(0, 1, 1, 1), 4), 0.75)
}

func TestRecallAt(t *testing.T) {
	r := b(1, 0, 1, 0, 0)
	near(t, "R@1", RecallAt(r, 1, 2), 0.5)
	near(t, "R@2", RecallAt(r, 2, 2), 0.5)
	near(t, "R@3", RecallAt(r, 3, 2), 1)
	near(t, "R@3 of 4", RecallAt(r, 3, 4), 0.5)
	near(t, "R@100 of 8", RecallAt(r, 100, 8), 0.25)
	near(t, "R@0", RecallAt(r, 0, 2), 0)
	near(t, "R@3 total 0", RecallAt(r, 3, 0), 0)
	near(t, "R@3 total -1", RecallAt(r, 3, -1), 0)
}

func TestNDCGAt(t *testing.T) {
	r := b(1, 0, 1, 0, 0)
	inv3 := 1 / math.Log2(3) // 0.6309297535714575
	// DCG@3 = 1/log2(2) + 1/log2(4) = 1.5; ideal (2 relevant) = 1 + 1/log2(3).
	near(t, "NDCG@3 tot2", NDCGAt(r, 3, 2), 1.5/(1+inv3))
	near(t, "NDCG@3 tot2 literal", NDCGAt(r, 3, 2), 0.9197207891481876)
	// Ideal with 3 relevant: 1 + 1/log2(3) + 1/2.
	near(t, "NDCG@5 tot3", NDCGAt(r, 5, 3), 0.7039180890341347)
	near(t, "NDCG@1", NDCGAt(r, 1, 2), 1)
	near(t, "NDCG@2 of 01", NDCGAt(b(0, 1), 2, 1), 0.6309297535714575)
	// DCG = 1 + 1/log2(5); ideal with 4 relevant: 1 + 1/log2(3) + 1/2 + 1/log2(5).
	near(t, "NDCG@5 of 10010 tot4", NDCGAt(b(1, 0, 0, 1, 0), 5, 4), 0.5585075862632192)
	// Ideal uses min(n, totalRelevant): two hits at the top of n=2 is perfect.
	near(t, "NDCG@2 of 11 tot5", NDCGAt(b(1, 1, 0), 2, 5), 1)
	near(t, "NDCG@4 perfect", NDCGAt(b(1, 1, 1, 0, 1), 4, 3), 1)
	near(t, "NDCG none", NDCGAt(b(0, 0, 0), 3, 2), 0)
	near(t, "NDCG@0", NDCGAt(r, 0, 2), 0)
	near(t, "NDCG tot0", NDCGAt(r, 3, 0), 0)
}

func TestAveragePrecision(t *testing.T) {
	r := b(1, 0, 1, 0, 0)
	near(t, "AP tot2", AveragePrecision(r, 2), (1.0/1+2.0/3)/2)
	near(t, "AP tot2 literal", AveragePrecision(r, 2), 0.8333333333333334)
	// Two of four relevant found: the missing two add 0.
	near(t, "AP tot4", AveragePrecision(r, 4), 5.0/12)
	// 0,1,0,1,1: (1/2 + 2/4 + 3/5)/3.
	near(t, "AP 01011", AveragePrecision(b(0, 1, 0, 1, 1), 3), (0.5+0.5+0.6)/3)
	near(t, "AP perfect", AveragePrecision(b(1, 1, 1), 3), 1)
	near(t, "AP empty list", AveragePrecision(nil, 3), 0)
	near(t, "AP tot0", AveragePrecision(r, 0), 0)
}

func TestMean(t *testing.T) {
	near(t, "Mean", Mean([]float64{1, 2, 3, 4}), 2.5)
	near(t, "Mean one", Mean([]float64{0.25}), 0.25)
	if m := Mean(nil); !math.IsNaN(m) {
		t.Errorf("Mean(nil) = %v, want NaN", m)
	}
}

func TestRankBreaksTiesBySeededOrder(t *testing.T) {
	score := []float64{1, 5, 5, 5, 0}
	tie := []int{4, 2, 0, 1, 3} // item 2 first among the tied, then 3, then 1
	ranked := Rank(5, score, tie, func(v int) bool { return v == 0 }, func(v int) bool { return v == 1 })
	if want := []bool{false, false, true, false}; !slices.Equal(ranked, want) {
		t.Fatalf("ranked = %v, want %v (2, 3, 1, 4)", ranked, want)
	}
}
