package npkl

import (
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Term is the fixed part A0 of A(alpha) = A0 + sum_p w_p M_p: a symmetric
// n x n matrix given as an operator (for Lanczos) that can also add itself
// to a dense matrix (for the dense eigensolver). Every problem of the
// thesis has a cheap A0: minus a sparse normalised graph Laplacian
// (SimpleNPKL), a low-rank matrix (CMVU's HYH), identity plus low rank
// (MVE's K0) or a sparse adjacency (SPE's W).
type Term interface {
	kernelmath.Operator
	// AddTo adds the matrix to dst, n x n row-major; both triangles are written.
	AddTo(dst []float64)
}

// Identity returns c I (n x n).
func Identity(n int, c float64) Term { return identity{n, c} }

type identity struct {
	n int
	c float64
}

var _ Term = (*identity)(nil)

func (t identity) Dim() int { return t.n }

func (t identity) Apply(dst, x []float64) {
	for i, v := range x {
		dst[i] = t.c * v
	}
}

func (t identity) AddTo(dst []float64) {
	for i := 0; i < t.n; i++ {
		dst[i*t.n+i] += t.c
	}
}

// Adjacency returns c W for the weighted adjacency matrix W of g.
func Adjacency(g *kernelmath.Graph, c float64) Term { return adjacency{g, c} }

type adjacency struct {
	g *kernelmath.Graph
	c float64
}

var _ Term = (*adjacency)(nil)

func (t adjacency) Dim() int { return t.g.N() }

func (t adjacency) Apply(dst, x []float64) {
	for i, es := range t.g.Adj {
		s := 0.0
		for _, e := range es {
			s += e.W * x[e.To]
		}
		dst[i] = t.c * s
	}
}

func (t adjacency) AddTo(dst []float64) {
	n := t.g.N()
	for i, es := range t.g.Adj {
		for _, e := range es {
			dst[i*n+e.To] += t.c * e.W
		}
	}
}

// LowRank returns c F F^T for an n x r matrix F.
func LowRank(f *mat.Dense, c float64) Term {
	n, r := f.Dims()
	return &lowRank{f: f, c: c, n: n, tmp: make([]float64, r)}
}

type lowRank struct {
	f   *mat.Dense
	c   float64
	n   int
	tmp []float64
}

var _ Term = (*lowRank)(nil)

func (t *lowRank) Dim() int { return t.n }

func (t *lowRank) Apply(dst, x []float64) {
	raw := t.f.RawMatrix()
	r := raw.Cols
	for c := range t.tmp {
		t.tmp[c] = 0
	}
	for i := 0; i < t.n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+r]
		for c, v := range row {
			t.tmp[c] += v * x[i]
		}
	}
	for i := 0; i < t.n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+r]
		s := 0.0
		for c, v := range row {
			s += v * t.tmp[c]
		}
		dst[i] = t.c * s
	}
}

func (t *lowRank) AddTo(dst []float64) {
	blas64.Gemm(blas.NoTrans, blas.Trans, t.c, t.f.RawMatrix(), t.f.RawMatrix(), 1,
		blas64.General{Rows: t.n, Cols: t.n, Stride: t.n, Data: dst})
}

// Sum returns the sum of terms of the same dimension.
func Sum(terms ...Term) Term {
	return &sum{terms: terms, tmp: make([]float64, terms[0].Dim())}
}

type sum struct {
	terms []Term
	tmp   []float64
}

var _ Term = (*sum)(nil)

func (t *sum) Dim() int { return t.terms[0].Dim() }

func (t *sum) Apply(dst, x []float64) {
	t.terms[0].Apply(dst, x)
	for _, s := range t.terms[1:] {
		s.Apply(t.tmp, x)
		for i, v := range t.tmp {
			dst[i] += v
		}
	}
}

func (t *sum) AddTo(dst []float64) {
	for _, s := range t.terms {
		s.AddTo(dst)
	}
}

// NormalizedAdjacency returns the graph on n points with an edge of weight
// 1/sqrt(D_i D_j) for every pair, D_i the number of pairs at i: the matrix
// D^{-1/2} S D^{-1/2} of eq. 3.3 for the 0/1 similarity S of the pairs. An
// isolated point has no edges, so its row of the Laplacian I - D^{-1/2} S
// D^{-1/2} is e_i (spec 3.7 item 1).
func NormalizedAdjacency(n int, pairs []learners.Pair) *kernelmath.Graph {
	deg := make([]float64, n)
	for _, p := range pairs {
		deg[p.I]++
		deg[p.J]++
	}
	return kernelmath.NewGraph(n, pairs, func(p learners.Pair) float64 {
		return 1 / math.Sqrt(deg[p.I]*deg[p.J])
	})
}

// NegLaplacian returns -L = -(I - D^{-1/2} S D^{-1/2}) for the graph of
// NormalizedAdjacency: the A0 of SimpleNPKL (A = C T - L, Protocol 1 step 4).
func NegLaplacian(g *kernelmath.Graph) Term {
	return Sum(Identity(g.N(), -1), Adjacency(g, 1))
}
