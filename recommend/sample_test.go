package recommend

import (
	"math"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
)

func TestSamplePairs(t *testing.T) {
	var pos, neg []learners.Pair
	for i := range 300 {
		pos = append(pos, learners.Pair{I: i, J: i + 1})
	}
	for i := range 900 {
		neg = append(neg, learners.Pair{I: i, J: i + 2})
	}
	p, n := samplePairs(pos, neg, 2000, 1)
	if len(p) != 300 || len(n) != 900 {
		t.Errorf("under the limit: %d and %d pairs, want all", len(p), len(n))
	}
	p, n = samplePairs(pos, neg, 400, 1)
	if len(p) != 100 || len(n) != 300 {
		t.Fatalf("sampled %d and %d pairs, want 100 and 300 (in proportion)", len(p), len(n))
	}
	for _, q := range p {
		if !slices.Contains(pos, q) {
			t.Fatalf("sampled positive %v is not a positive", q)
		}
	}
	if slices.ContainsFunc(n, func(q learners.Pair) bool { return !slices.Contains(neg, q) }) {
		t.Fatal("a sampled negative is not a negative")
	}
	seen := map[learners.Pair]bool{}
	for _, q := range n {
		if seen[q] {
			t.Fatalf("%v sampled twice", q)
		}
		seen[q] = true
	}
	p2, n2 := samplePairs(pos, neg, 400, 1)
	if !slices.Equal(p, p2) || !slices.Equal(n, n2) {
		t.Error("the sample depends on more than the seed")
	}
}

// With 100 users (4950 pairs), 50 friendships of which 10 were fitted on
// with 30 negatives: ln(10/30) + ln(4900/50).
func TestPriorOffsetCountsEveryFriendship(t *testing.T) {
	if got, want := priorOffset(100, 50, 10, 30), math.Log(10.0/30)+math.Log(4900.0/50); math.Abs(got-want) > 1e-15 {
		t.Errorf("offset %v, want %v", got, want)
	}
}
