package metrics

import "math"

// Partition agreement measures of Kumar's clustering tables, with the
// formulas of the authors' code (shared/specs/kumar-thesis.md 1.5):
// logarithms base 2, pairs over i < j. Like the other clustering metrics
// they take true classes and predicted clusters, one non-negative label per
// point, panic on slices of different length or a negative label, and
// return NaN for no points.

// empty checks the labels and reports whether there are no points.
func empty(truth, pred []int) bool {
	checkLabels(truth, pred)
	return len(truth) == 0
}

// contingency returns the counts n_ij of points in cluster i and class j
// with the cluster sizes b_i and class sizes d_j.
func contingency(truth, pred []int) (nij [][]float64, b, d []float64) {
	checkLabels(truth, pred)
	rows, cols := 0, 0
	for i := range truth {
		rows, cols = max(rows, pred[i]+1), max(cols, truth[i]+1)
	}
	nij = make([][]float64, rows)
	for i := range nij {
		nij[i] = make([]float64, cols)
	}
	b, d = make([]float64, rows), make([]float64, cols)
	for i := range truth {
		nij[pred[i]][truth[i]]++
		b[pred[i]]++
		d[truth[i]]++
	}
	return nij, b, d
}

// NMI is the normalised mutual information 2 I(C;Y) / (H(C) + H(Y)) of the
// clusters C and classes Y (arithmetic normalisation, as compute_nmi.m);
// 1 when both are a single group (nothing to disagree on).
func NMI(truth, pred []int) float64 {
	if empty(truth, pred) {
		return math.NaN()
	}
	nij, b, d := contingency(truth, pred)
	n := float64(len(truth))
	mi := 0.0
	for i, row := range nij {
		for j, c := range row {
			if c > 0 {
				mi += c / n * math.Log2(n*c/(b[i]*d[j]))
			}
		}
	}
	h := entropy(b, n) + entropy(d, n)
	if h == 0 {
		return 1
	}
	return 2 * mi / h
}

// entropy is sum_i (c_i/n) log2(n/c_i) over the non-empty groups.
func entropy(counts []float64, n float64) float64 {
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			h += c / n * math.Log2(n/c)
		}
	}
	return h
}

// AverageEntropy is the class entropy inside each cluster weighted by the
// cluster's size (lower is better; 0 when every cluster is pure).
func AverageEntropy(truth, pred []int) float64 {
	if empty(truth, pred) {
		return math.NaN()
	}
	nij, b, _ := contingency(truth, pred)
	n := float64(len(truth))
	h := 0.0
	for i, row := range nij {
		if b[i] > 0 {
			h += b[i] / n * entropy(row, b[i])
		}
	}
	return h
}

// PairScores are the pair-counting precision, recall and F-score of a
// clustering (Manning et al. 2008, compute_f.m): over the pairs i < j,
// precision is the fraction of same-cluster pairs that share a class,
// recall the fraction of same-class pairs that share a cluster.
type PairScores struct{ Precision, Recall, F float64 }

// PairCounting returns the pair precision, recall and F-score. A zero
// denominator makes its score 1 (compute_f.m), F is 0 when P + R = 0.
func PairCounting(truth, pred []int) PairScores {
	if empty(truth, pred) {
		return PairScores{math.NaN(), math.NaN(), math.NaN()}
	}
	both, same, class := pairSums(truth, pred)
	s := PairScores{Precision: 1, Recall: 1}
	if same > 0 {
		s.Precision = both / same
	}
	if class > 0 {
		s.Recall = both / class
	}
	if s.Precision+s.Recall > 0 {
		s.F = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
	return s
}

func pairs(c float64) float64 { return c * (c - 1) / 2 }

// pairSums returns the numbers of pairs in the same cluster and class, in
// the same cluster, and in the same class.
func pairSums(truth, pred []int) (both, cluster, class float64) {
	nij, b, d := contingency(truth, pred)
	for _, row := range nij {
		for _, c := range row {
			both += pairs(c)
		}
	}
	for _, c := range b {
		cluster += pairs(c)
	}
	for _, c := range d {
		class += pairs(c)
	}
	return both, cluster, class
}

// AdjustedRand is the adjusted Rand index of Hubert & Arabie (1985): the
// Rand index corrected for chance, 1 for identical partitions and about 0
// for independent ones; 0 when its denominator is 0.
func AdjustedRand(truth, pred []int) float64 {
	if empty(truth, pred) {
		return math.NaN()
	}
	index, sa, sc := pairSums(truth, pred)
	expected := sa * sc / pairs(float64(len(truth)))
	den := (sa+sc)/2 - expected
	if den == 0 {
		return 0
	}
	return (index - expected) / den
}
