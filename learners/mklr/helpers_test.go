package mklr

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// community is a planted social network: users in groups, features = the
// group's centre plus noise (explicitly, so that tests can compute pair
// kernels from the feature map), friends mostly within a group.
type community struct {
	phi      *mat.Dense // n x d features
	k        learners.KernelMatrix
	group    []int
	pos, neg []learners.Pair
}

func newCommunity(t testing.TB, n, groups, d int, seed uint64) *community {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 99))
	centres := mat.NewDense(groups, d, nil)
	for i := range centres.RawMatrix().Data {
		centres.RawMatrix().Data[i] = r.NormFloat64()
	}
	c := &community{phi: mat.NewDense(n, d, nil), group: make([]int, n)}
	for u := 0; u < n; u++ {
		g := u % groups
		c.group[u] = g
		for f := 0; f < d; f++ {
			c.phi.Set(u, f, centres.At(g, f)+0.4*r.NormFloat64())
		}
	}
	c.k = learners.DenseKernel{K: learners.Linear(c.phi)}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			same := c.group[i] == c.group[j]
			switch x := r.Float64(); {
			case same && x < 0.5:
				c.pos = append(c.pos, learners.Pair{I: i, J: j})
			case !same && x < 0.15:
				c.neg = append(c.neg, learners.Pair{I: i, J: j})
			}
		}
	}
	return c
}

// featurePair returns the explicit pair kernel from the feature map:
// (phi(p1) - phi(p2)) . (phi(q1) - phi(q2)), squared for PairSquared.
func (c *community) featurePair(kind PairKernel, p, q learners.Pair) float64 {
	d := 0.0
	for f := 0; f < c.phi.RawMatrix().Cols; f++ {
		d += (c.phi.At(p.I, f) - c.phi.At(p.J, f)) * (c.phi.At(q.I, f) - c.phi.At(q.J, f))
	}
	if kind == PairSquared {
		return d * d
	}
	return d
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.15g, want %.15g (tol %g)", what, got, want, tol)
	}
}
