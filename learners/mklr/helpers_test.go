package mklr

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// community is a planted social network: users in groups, features = the
// group's centre plus noise (explicitly, so that tests can compute pair
// kernels from the feature map), friends mostly within a group.
type community struct {
	phi *mat.Dense // n x d features
	k   kernelmath.KernelMatrix
	// base, for Options.Base, are the linear kernels of the first d/2
	// features and of extra, random features unrelated to the groups (so
	// that they do not separate the pairs: unpenalised terms would diverge).
	base     []kernelmath.KernelMatrix
	extra    *mat.Dense
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
	c.k = kernelmath.DenseKernel{K: kernelmath.Linear(c.phi)}
	c.extra = mat.NewDense(n, 3, nil)
	rx := rand.New(rand.NewPCG(seed, 100)) // its own stream: the planted data stay as they were
	for i := range c.extra.RawMatrix().Data {
		c.extra.RawMatrix().Data[i] = rx.NormFloat64()
	}
	c.base = []kernelmath.KernelMatrix{
		kernelmath.DenseKernel{K: kernelmath.Linear(mat.DenseCopyOf(c.phi.Slice(0, n, 0, d/2)))},
		kernelmath.DenseKernel{K: kernelmath.Linear(c.extra)},
	}
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

// dot is phi(i) . phi(j) over the features [lo, hi).
func (c *community) dot(i, j, lo, hi int) float64 {
	s := 0.0
	for f := lo; f < hi; f++ {
		s += c.phi.At(i, f) * c.phi.At(j, f)
	}
	return s
}

// baseAt is base kernel b at (i, j), from the feature map.
func (c *community) baseAt(b, i, j int) float64 {
	if b == 0 {
		return c.dot(i, j, 0, c.phi.RawMatrix().Cols/2)
	}
	return mat.Dot(c.extra.RowView(i), c.extra.RowView(j))
}

// featurePair returns the explicit pair kernel from the feature map:
// (phi(p1) - phi(p2)) . (phi(q1) - phi(q2)), squared for PairSquared, or
// for PairTensor (phi(p1) . phi(q1)) (phi(p2) . phi(q2)) +
// (phi(p1) . phi(q2)) (phi(p2) . phi(q1)).
func (c *community) featurePair(kind PairKernel, p, q learners.Pair) float64 {
	if kind == PairTensor {
		d := c.phi.RawMatrix().Cols
		return c.dot(p.I, q.I, 0, d)*c.dot(p.J, q.J, 0, d) + c.dot(p.I, q.J, 0, d)*c.dot(p.J, q.I, 0, d)
	}
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
