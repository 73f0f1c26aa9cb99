package decision

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// tie is how close two gains must be to count as equal: gains in
// precision at a cut-off are multiples of one over it, equal up to
// rounding.
const tie = 1e-9

// signedRankP is the one-sided p-value of the exact Wilcoxon signed-rank
// test that the gains are centred above zero: the chance, were each
// non-zero gain's sign a fair coin, of a sum of the positive gains' ranks
// (by absolute value, ties at their mean rank) at least the one observed.
// Zero gains, queries the rule leaves alone or decides alike, carry no
// evidence either way and are dropped. With no non-zero gain it is 1.
func signedRankP(gains []float64) float64 {
	var nz []float64
	for _, g := range gains {
		if math.Abs(g) > tie {
			nz = append(nz, g)
		}
	}
	n := len(nz)
	if n == 0 {
		return 1
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(math.Abs(nz[a]), math.Abs(nz[b])) })
	// rank2 are twice the mid-ranks: integers, so the null distribution of
	// their sum is a table over integers.
	rank2 := make([]int, n)
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && math.Abs(nz[order[hi]])-math.Abs(nz[order[lo]]) <= tie {
			hi++
		}
		for k := lo; k < hi; k++ {
			rank2[order[k]] = lo + hi + 1 // ranks lo+1 ... hi, their mean doubled
		}
		lo = hi
	}
	observed, total := 0, 0
	for i, g := range nz {
		if g > 0 {
			observed += rank2[i]
		}
		total += rank2[i]
	}
	// ways[s] counts the sign assignments whose positive ranks sum to s.
	ways := make([]float64, total+1)
	ways[0] = 1
	for _, r := range rank2 {
		for s := total; s >= r; s-- {
			ways[s] += ways[s-r]
		}
	}
	return floats.Sum(ways[observed:]) / math.Exp2(float64(n))
}
