package kernelmath

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// knnPairsBySorting is an independent reference: sort every row, take the
// first k other points, then symmetrise.
func knnPairsBySorting(d *mat.SymDense, k int, mutual bool) []Pair {
	n := d.SymmetricDim()
	k = min(k, n-1)
	near := make([]map[int]bool, n)
	for i := 0; i < n; i++ {
		order := make([]int, 0, n-1)
		for j := 0; j < n; j++ {
			if j != i {
				order = append(order, j)
			}
		}
		sort.SliceStable(order, func(a, b int) bool { return d.At(i, order[a]) < d.At(i, order[b]) })
		near[i] = map[int]bool{}
		for _, j := range order[:k] {
			near[i][j] = true
		}
	}
	var pairs []Pair
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			a, b := near[i][j], near[j][i]
			if (mutual && a && b) || (!mutual && (a || b)) {
				pairs = append(pairs, Pair{i, j})
			}
		}
	}
	return pairs
}

func TestKNNPairsMatchesSorting(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for trial := 0; trial < 20; trial++ {
		n := 2 + r.IntN(40)
		x := mat.NewDense(n, 2, nil)
		for i := 0; i < n; i++ {
			// Integer coordinates: many tied distances.
			x.Set(i, 0, float64(r.IntN(4)))
			x.Set(i, 1, float64(r.IntN(4)))
		}
		d := SqDistances(x)
		for _, k := range []int{1, 3, 5, n + 3} {
			nn := NearestNeighbors(d, k)
			for _, mutual := range []bool{false, true} {
				got, want := NeighborPairs(nn, mutual), knnPairsBySorting(d, k, mutual)
				if !slices.Equal(got, want) {
					t.Fatalf("n=%d k=%d mutual=%v: %v, want %v", n, k, mutual, got, want)
				}
			}
		}
	}
}

func TestNearestNeighborsByHand(t *testing.T) {
	// Points at 0, 1, 3, 10 on a line: 2-NN of 3 is (1, 0) since 4 < 9 and 9 < 49.
	d := SqDistances(mat.NewDense(4, 1, []float64{0, 1, 3, 10}))
	nn := NearestNeighbors(d, 2)
	want := [][]int{{1, 2}, {0, 2}, {1, 0}, {2, 1}}
	for i := range want {
		if !slices.Equal(nn[i], want[i]) {
			t.Fatalf("neighbours of %d = %v, want %v", i, nn[i], want[i])
		}
	}
}

func BenchmarkKNNPairs200(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(200, 20, nil)
	for i := 0; i < 200; i++ {
		for j := 0; j < 20; j++ {
			x.Set(i, j, r.NormFloat64())
		}
	}
	d := SqDistances(x)
	b.ReportAllocs()
	for b.Loop() {
		KNNPairs(d, 5, false)
	}
}
