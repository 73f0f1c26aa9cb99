package metrics

import (
	"fmt"
	"math"
)

// Clustering metrics: a clustering is compared with the true classes
// through labels, one per point (non-negative integers; cluster and class
// numbers need not correspond). Both functions panic when the slices differ
// in length or hold a negative label (a programming error) and return NaN
// for no points.

// ClusteringAccuracy is the fraction of points whose cluster is mapped to
// their class by the best one-to-one mapping of clusters to classes (found
// by MinCostAssignment on the confusion matrix). With more clusters than
// classes (or the reverse) the unmatched ones count as wrong.
func ClusteringAccuracy(truth, pred []int) float64 {
	checkLabels(truth, pred)
	if len(truth) == 0 {
		return math.NaN()
	}
	size := 0
	for i := range truth {
		size = max(size, truth[i]+1, pred[i]+1)
	}
	// cost[cluster][class] = -count: minimising it maximises the matches.
	cost := make([][]float64, size)
	for c := range cost {
		cost[c] = make([]float64, size)
	}
	for i := range truth {
		cost[pred[i]][truth[i]]--
	}
	matched := 0.0
	for c, class := range MinCostAssignment(cost) {
		matched -= cost[c][class]
	}
	return matched / float64(len(truth))
}

// PairwiseAccuracy is the Rand-type index of the thesis' clustering tables
// (Zhuang, section 3.5.2): the fraction of the n(n-1)/2 pairs of points on
// which the clustering agrees with the classes about "same group or not".
// It is 1 for a single point.
func PairwiseAccuracy(truth, pred []int) float64 {
	checkLabels(truth, pred)
	n := len(truth)
	if n == 0 {
		return math.NaN()
	}
	if n == 1 {
		return 1
	}
	agree := 0
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			if (truth[i] == truth[j]) == (pred[i] == pred[j]) {
				agree++
			}
		}
	}
	return float64(agree) / float64(n*(n-1)/2)
}

func checkLabels(truth, pred []int) {
	if len(truth) != len(pred) {
		panic(fmt.Sprintf("metrics: %d true labels, %d predicted", len(truth), len(pred)))
	}
	for i := range truth {
		if truth[i] < 0 || pred[i] < 0 {
			panic(fmt.Sprintf("metrics: negative label at point %d (%d, %d)", i, truth[i], pred[i]))
		}
	}
}

// MinCostAssignment solves the assignment problem for an n x m matrix of
// finite costs with n <= m: it returns, for each row, a distinct column such that the
// total cost is least. It is the Hungarian algorithm (Kuhn 1955, Munkres
// 1957) in its O(n^2 m) shortest-augmenting-path form with potentials:
// rows are added one at a time, each by a Dijkstra-like search over
// reduced costs a_ij - u_i - v_j >= 0. It panics if n > m or rows differ
// in length.
func MinCostAssignment(cost [][]float64) []int {
	n := len(cost)
	if n == 0 {
		return nil
	}
	m := len(cost[0])
	for _, row := range cost {
		if len(row) != m {
			panic("metrics: ragged cost matrix")
		}
	}
	if n > m {
		panic(fmt.Sprintf("metrics: %d rows for %d columns", n, m))
	}
	// 1-based: column 0 is a virtual column holding the row being added.
	u := make([]float64, n+1)
	v := make([]float64, m+1)
	rowOf := make([]int, m+1) // row matched to each column, 0 if none
	way := make([]int, m+1)   // previous column on the augmenting path
	minv := make([]float64, m+1)
	used := make([]bool, m+1)
	for i := 1; i <= n; i++ {
		rowOf[0] = i
		j0 := 0
		for j := range minv {
			minv[j] = math.Inf(1)
			used[j] = false
		}
		for {
			used[j0] = true
			i0, delta, j1 := rowOf[j0], math.Inf(1), 0
			for j := 1; j <= m; j++ {
				if used[j] {
					continue
				}
				if cur := cost[i0-1][j-1] - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= m; j++ {
				if used[j] {
					u[rowOf[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if rowOf[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			rowOf[j0] = rowOf[j1]
			j0 = j1
		}
	}
	out := make([]int, n)
	for j := 1; j <= m; j++ {
		if rowOf[j] > 0 {
			out[rowOf[j]-1] = j - 1
		}
	}
	return out
}
