package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMinCostAssignmentByHand(t *testing.T) {
	// Rows to columns 1, 0, 2: 1 + 2 + 2 = 5; every other permutation
	// costs more (4+0+2=6, 4+5+2=11, 1+5+3=9, 3+2+2=7, 3+0+3=6).
	got := MinCostAssignment([][]float64{{4, 1, 3}, {2, 0, 5}, {3, 2, 2}})
	if got[0] != 1 || got[1] != 0 || got[2] != 2 {
		t.Errorf("assignment %v, want [1 0 2]", got)
	}
	// Rectangular: two rows, three columns; the cheap columns collide on
	// column 0, so row 1 (whose second choice is cheaper) yields: 1 + 3.
	got = MinCostAssignment([][]float64{{1, 9, 9}, {1, 3, 8}})
	if got[0] != 0 || got[1] != 1 {
		t.Errorf("rectangular assignment %v, want [0 1]", got)
	}
	if MinCostAssignment(nil) != nil {
		t.Error("empty cost matrix should give nil")
	}
}

// permutationMin enumerates all injective maps of rows to columns.
func permutationMin(cost [][]float64) float64 {
	n, m := len(cost), len(cost[0])
	best := math.Inf(1)
	used := make([]bool, m)
	var rec func(row int, sum float64)
	rec = func(row int, sum float64) {
		if row == n {
			best = min(best, sum)
			return
		}
		for j := range m {
			if !used[j] {
				used[j] = true
				rec(row+1, sum+cost[row][j])
				used[j] = false
			}
		}
	}
	rec(0, 0)
	return best
}

func TestMinCostAssignmentMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 60 {
		n := 1 + trial%6
		m := n + trial%3
		cost := make([][]float64, n)
		for i := range cost {
			cost[i] = make([]float64, m)
			for j := range cost[i] {
				cost[i][j] = float64(r.IntN(7)) - 3 // many ties
			}
		}
		got := MinCostAssignment(cost)
		seen := map[int]bool{}
		sum := 0.0
		for i, j := range got {
			if seen[j] || j < 0 || j >= m {
				t.Fatalf("trial %d: not an injective assignment: %v", trial, got)
			}
			seen[j] = true
			sum += cost[i][j]
		}
		if want := permutationMin(cost); sum != want {
			t.Errorf("trial %d (%dx%d): cost %g, enumeration %g", trial, n, m, sum, want)
		}
	}
}

func TestClusteringAccuracyByHand(t *testing.T) {
	// Confusion (cluster x class): cluster 1 holds two of class 0, cluster 0
	// one of class 0 and two of class 1, cluster 2 the one of class 2. The
	// best map 1->0, 0->1, 2->2 matches 2 + 2 + 1 of 6.
	near(t, "mixed", ClusteringAccuracy([]int{0, 0, 0, 1, 1, 2}, []int{1, 1, 0, 0, 0, 2}), 5.0/6)
	near(t, "renamed clusters", ClusteringAccuracy([]int{0, 0, 1, 1, 2}, []int{2, 2, 0, 0, 1}), 1)
	// Four singleton clusters for two classes: only two can be matched.
	near(t, "more clusters", ClusteringAccuracy([]int{0, 0, 1, 1}, []int{0, 1, 2, 3}), 0.5)
	// One cluster for two classes: the larger class.
	near(t, "one cluster", ClusteringAccuracy([]int{0, 0, 0, 1}, []int{0, 0, 0, 0}), 0.75)
	if !math.IsNaN(ClusteringAccuracy(nil, nil)) {
		t.Error("no points should give NaN")
	}
}

func TestPairwiseAccuracyByHand(t *testing.T) {
	// Pairs (0,1): same class, different clusters (wrong); (0,2): different
	// and different (right); (1,2): different classes, same cluster (wrong).
	near(t, "three points", PairwiseAccuracy([]int{0, 0, 1}, []int{0, 1, 1}), 1.0/3)
	near(t, "renamed", PairwiseAccuracy([]int{0, 0, 1, 1}, []int{1, 1, 0, 0}), 1)
	// One cluster over classes {0,0,1,1}: only the 2 same-class pairs of 6.
	near(t, "one cluster", PairwiseAccuracy([]int{0, 0, 1, 1}, []int{0, 0, 0, 0}), 2.0/6)
	near(t, "one point", PairwiseAccuracy([]int{3}, []int{0}), 1)
}

func TestClusteringMetricsPanicOnBadLabels(t *testing.T) {
	for name, f := range map[string]func(){
		"length":   func() { ClusteringAccuracy([]int{0}, []int{0, 1}) },
		"negative": func() { PairwiseAccuracy([]int{0, -1}, []int{0, 1}) },
		"rows > columns": func() {
			MinCostAssignment([][]float64{{1}, {2}})
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
