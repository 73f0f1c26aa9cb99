package metrics

import (
	"math"
	"testing"
)

// The partition of Manning, Raghavan & Schutze (2008), section 16.3: 17
// points in three clusters of sizes 6, 6, 5 over classes x (8), o (5),
// d (4). Cluster 1 = 5x 1o, cluster 2 = 1x 4o 1d, cluster 3 = 2x 3d.
// The book gives purity 0.71, NMI 0.36, RI 0.68, P 0.50, R 0.455, F1 0.48.
func manning() (truth, pred []int) {
	add := func(cluster, class, count int) {
		for range count {
			truth = append(truth, class)
			pred = append(pred, cluster)
		}
	}
	add(0, 0, 5)
	add(0, 1, 1)
	add(1, 0, 1)
	add(1, 1, 4)
	add(1, 2, 1)
	add(2, 0, 2)
	add(2, 2, 3)
	return truth, pred
}

func TestPartitionMetricsManningExample(t *testing.T) {
	truth, pred := manning()
	// Pairs: same cluster 15+15+10 = 40, of which same class
	// C(5,2)+C(4,2)+C(2,2)+C(3,2) = 10+6+1+3 = 20; same class 28+10+6 = 44.
	s := PairCounting(truth, pred)
	near(t, "precision", s.Precision, 20.0/40)
	near(t, "recall", s.Recall, 20.0/44)
	near(t, "F", s.F, 2*0.5*(20.0/44)/(0.5+20.0/44))
	// ARI by hand: index 20, expected 40*44/136, max (40+44)/2.
	e := 40.0 * 44 / 136
	near(t, "ARI", AdjustedRand(truth, pred), (20-e)/(42-e))
	// NMI: the book's 0.36 is I/((H(C)+H(Y))/2) too.
	if got := NMI(truth, pred); math.Abs(got-0.36) > 0.005 {
		t.Errorf("NMI = %v, want 0.36 (Manning et al.)", got)
	}
	near(t, "accuracy", ClusteringAccuracy(truth, pred), 12.0/17)
}

func TestNMIByHand(t *testing.T) {
	// Two classes of 2, clusters split each class: I = 0, NMI 0.
	near(t, "independent", NMI([]int{0, 0, 1, 1}, []int{0, 1, 0, 1}), 0)
	// Relabelled identical partition: 1.
	near(t, "identical", NMI([]int{0, 0, 1, 1, 2}, []int{2, 2, 0, 0, 1}), 1)
	// Classes {0,0,1,1}, one cluster {a,a,a,b}: n11=2, n12=1, n22=1 (clusters
	// rows). I = 1/2 log2(4*2/(3*2)) + 1/4 log2(4/(3*2)) + 1/4 log2(4/(1*2)).
	i := 0.5*math.Log2(8.0/6) + 0.25*math.Log2(4.0/6) + 0.25*math.Log2(2)
	hc := 0.75*math.Log2(4.0/3) + 0.25*math.Log2(4)
	near(t, "by hand", NMI([]int{0, 0, 1, 1}, []int{0, 0, 0, 1}), 2*i/(hc+1))
	near(t, "one group", NMI([]int{0, 0}, []int{1, 1}), 1)
	if !math.IsNaN(NMI(nil, nil)) {
		t.Error("NMI of no points is not NaN")
	}
}

func TestAverageEntropyByHand(t *testing.T) {
	truth, pred := manning()
	h := func(ps ...float64) float64 {
		s := 0.0
		for _, p := range ps {
			s -= p * math.Log2(p)
		}
		return s
	}
	want := 6.0/17*h(5.0/6, 1.0/6) + 6.0/17*h(1.0/6, 4.0/6, 1.0/6) + 5.0/17*h(2.0/5, 3.0/5)
	near(t, "entropy", AverageEntropy(truth, pred), want)
	near(t, "pure", AverageEntropy([]int{0, 1, 1}, []int{1, 0, 0}), 0)
}

func TestPairCountingEdges(t *testing.T) {
	// Every point alone: no same-cluster pairs, precision 1 by convention,
	// recall 0.
	s := PairCounting([]int{0, 0, 1}, []int{0, 1, 2})
	near(t, "precision", s.Precision, 1)
	near(t, "recall", s.Recall, 0)
	near(t, "F", s.F, 0)
	near(t, "ARI identical", AdjustedRand([]int{0, 0, 1}, []int{1, 1, 0}), 1)
	near(t, "ARI degenerate", AdjustedRand([]int{0, 0}, []int{0, 0}), 0)
	defer func() {
		if recover() == nil {
			t.Error("no panic on mismatched lengths")
		}
	}()
	NMI([]int{0}, []int{0, 1})
}
