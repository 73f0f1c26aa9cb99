// Package metrics holds the ranking metrics of the evaluations: precision,
// recall and NDCG at a cut-off, average precision, and the mean over
// queries.
//
// A ranking is given as ranked []bool: ranked[i] tells whether the result
// at rank i+1 is relevant. totalRelevant is the number of relevant items for
// the query in the whole collection (not only in the ranking); it should be
// at least the number of true entries of ranked, otherwise recall, NDCG and
// AP can exceed 1.
//
// Conventions for the degenerate cases, shared by every function: a cut-off
// n <= 0 gives 0; totalRelevant <= 0 (a query with nothing to find, where
// recall, NDCG and AP are undefined) gives 0 rather than NaN, so one such
// query cannot poison a mean; callers should still leave such queries out
// of their means rather than count the 0.
package metrics

import (
	"math"
	"sort"
)

// hitsAt counts the relevant results among the first n (or all, if fewer).
func hitsAt(ranked []bool, n int) int {
	h := 0
	for _, r := range ranked[:min(n, len(ranked))] {
		if r {
			h++
		}
	}
	return h
}

// PrecisionAt is the fraction of the first n positions holding a relevant
// result. The denominator is always n, even when the ranking has fewer than
// n results (missing results count as non-relevant), so a short list is not
// rewarded. n <= 0 gives 0.
func PrecisionAt(ranked []bool, n int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(hitsAt(ranked, n)) / float64(n)
}

// RecallAt is the fraction of the totalRelevant relevant items found in the
// first n results. n <= 0 or totalRelevant <= 0 gives 0.
func RecallAt(ranked []bool, n, totalRelevant int) float64 {
	if n <= 0 || totalRelevant <= 0 {
		return 0
	}
	return float64(hitsAt(ranked, n)) / float64(totalRelevant)
}

// NDCGAt is the normalised discounted cumulative gain at n with binary gains:
// DCG = sum over the first n ranks i = 0, 1, ... of rel_i / log2(i+2), divided
// by the ideal DCG, that of min(n, totalRelevant) relevant results at the top.
// n <= 0 or totalRelevant <= 0 gives 0.
func NDCGAt(ranked []bool, n, totalRelevant int) float64 {
	if n <= 0 || totalRelevant <= 0 {
		return 0
	}
	dcg := 0.0
	for i, r := range ranked[:min(n, len(ranked))] {
		if r {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	ideal := 0.0
	for i := range min(n, totalRelevant) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	return dcg / ideal
}

// AveragePrecision is the mean, over the totalRelevant relevant items, of
// the precision at the rank of each one in the full ranked list; relevant
// items absent from the list contribute 0. totalRelevant <= 0 gives 0.
func AveragePrecision(ranked []bool, totalRelevant int) float64 {
	if totalRelevant <= 0 {
		return 0
	}
	sum, hits := 0.0, 0
	for i, r := range ranked {
		if r {
			hits++
			sum += float64(hits) / float64(i+1)
		}
	}
	return sum / float64(totalRelevant)
}

// Mean is the arithmetic mean of xs; it is NaN for an empty slice (a mean
// over no queries is undefined and should show as such in a table).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Rank orders the items 0..n-1 that are not excluded by descending score,
// ties by ascending tie (a seeded permutation, say), and returns their
// relevance in rank order: the ranked slice the metrics take.
func Rank(n int, score []float64, tie []int, excluded, relevant func(int) bool) []bool {
	cands := make([]int, 0, n)
	for v := 0; v < n; v++ {
		if !excluded(v) {
			cands = append(cands, v)
		}
	}
	sort.Slice(cands, func(a, b int) bool {
		x, y := cands[a], cands[b]
		if score[x] != score[y] {
			return score[x] > score[y]
		}
		return tie[x] < tie[y]
	})
	ranked := make([]bool, len(cands))
	for i, v := range cands {
		ranked[i] = relevant(v)
	}
	return ranked
}
