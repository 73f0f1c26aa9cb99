package learnertest

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// RefLaplacian builds L = I - D^{-1/2} S D^{-1/2} densely for the kNN graph
// of the rows of x (squared Euclidean distances, neighbours by sorting).
func RefLaplacian(x *mat.Dense, k int, mutual bool) *mat.SymDense {
	n, d := x.Dims()
	nn := make([][]bool, n)
	for i := 0; i < n; i++ {
		type cand struct {
			j    int
			dist float64
		}
		var cs []cand
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			s := 0.0
			for f := 0; f < d; f++ {
				v := x.At(i, f) - x.At(j, f)
				s += v * v
			}
			cs = append(cs, cand{j, s})
		}
		sort.Slice(cs, func(a, b int) bool { return cs[a].dist < cs[b].dist })
		nn[i] = make([]bool, n)
		for _, c := range cs[:min(k, n-1)] {
			nn[i][c.j] = true
		}
	}
	s := mat.NewDense(n, n, nil)
	deg := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j && (mutual && nn[i][j] && nn[j][i] || !mutual && (nn[i][j] || nn[j][i])) {
				s.Set(i, j, 1)
				deg[i]++
			}
		}
	}
	l := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := 0.0
			if i == j {
				v = 1
			}
			if s.At(i, j) != 0 {
				v -= 1 / math.Sqrt(deg[i]*deg[j])
			}
			l.SetSym(i, j, v)
		}
	}
	return l
}

// RelDiff is |a - b| / max(|a|, |b|).
func RelDiff(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b))
}
