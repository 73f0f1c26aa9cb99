package kernelmath

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"
)

// RegLaplacian is the regularised Laplacian kernel K = (I + gamma L)^-1 of a
// graph with adjacency A, L = I - D^-1/2 A D^-1/2 the normalised Laplacian
// (Smola and Kondor 2003; L is 0 on isolated vertices). It is never formed:
// K is dense (every entry is positive between connected vertices), but every
// access is a linear solve with the sparse M = I + gamma L by conjugate
// gradients.
//
// Since the eigenvalues of L lie in [0, 2], those of K lie in
// [1/(1+2 gamma), 1]: K is positive definite by construction and its diagonal
// already lies in that range. Expanding, K = (1/(1+gamma)) sum_k beta^k N^k
// with N = D^-1/2 A D^-1/2 and beta = gamma/(1+gamma): a Katz index on the
// degree-normalised adjacency with decay beta a hop.
//
// Costs: Row, At and Apply are one solve each; M has condition number at most
// 1 + 2 gamma, so conjugate gradients needs at most about
// sqrt(1+2 gamma)/2 ln(2 sqrt(1+2 gamma)/tol) iterations (gamma = 1,
// tol = 1e-8: 18), each one product with A, O(nnz(A)). RowSums is one solve;
// Diag is n solves (O(n iterations nnz(A)): avoid it on large graphs).
// Push and PushRow approximate K x and a row by local push instead, at a
// cost set by their eps, not by n. A RegLaplacian is safe for concurrent
// use.
type RegLaplacian struct {
	adj     *SparseSym
	invSqrt []float64 // D^-1/2, 0 on isolated vertices
	gamma   float64
	tol     float64
	maxIter int
	pool    sync.Pool // Push's scratch
}

// NewRegLaplacian returns (I + gamma L)^-1 for the graph with adjacency adj
// (symmetric, non-negative weights, no self-loops), solved to a relative
// residual tol in (0, 1).
func NewRegLaplacian(adj *SparseSym, gamma, tol float64) (*RegLaplacian, error) {
	if !(gamma > 0) || math.IsInf(gamma, 0) {
		return nil, fmt.Errorf("reglaplacian: gamma must be positive and finite, got %v", gamma)
	}
	if !(tol > 0 && tol < 1) {
		return nil, fmt.Errorf("reglaplacian: tol must be in (0, 1), got %v", tol)
	}
	n := adj.Dim()
	inv := make([]float64, n)
	for i := 0; i < n; i++ {
		cols, vals := adj.RowNonzeros(i)
		d := 0.0
		for p, c := range cols {
			if int(c) == i {
				return nil, fmt.Errorf("reglaplacian: self-loop at vertex %d", i)
			}
			if vals[p] < 0 {
				return nil, fmt.Errorf("reglaplacian: negative weight %v at (%d, %d)", vals[p], i, c)
			}
			d += vals[p]
		}
		if d > 0 {
			inv[i] = 1 / math.Sqrt(d)
		}
	}
	kappa := math.Sqrt(1 + 2*gamma)
	iters := math.Log(2*kappa/tol) / math.Log((kappa+1)/(kappa-1))
	return &RegLaplacian{adj: adj, invSqrt: inv, gamma: gamma, tol: tol, maxIter: int(math.Ceil(iters)) + 10}, nil
}

var _ KernelMatrix = (*RegLaplacian)(nil)

// Dim returns n.
func (r *RegLaplacian) Dim() int { return r.adj.Dim() }

// mulM sets dst = (I + gamma L) x, using t as scratch.
func (r *RegLaplacian) mulM(dst, x, t []float64) {
	floats.MulTo(t, r.invSqrt, x)
	r.adj.Apply(dst, t)
	for i, s := range r.invSqrt {
		if s == 0 {
			dst[i] = x[i]
			continue
		}
		dst[i] = (1+r.gamma)*x[i] - r.gamma*s*dst[i]
	}
}

// solve sets x = (I + gamma L)^-1 b by conjugate gradients from x = 0.
func (r *RegLaplacian) solve(x, b []float64) {
	n := len(b)
	res := append([]float64(nil), b...)
	dir := append([]float64(nil), b...)
	q := make([]float64, n)
	t := make([]float64, n)
	clear(x)
	rr := floats.Dot(res, res)
	stop := r.tol * r.tol * rr
	for it := 0; it < r.maxIter && rr > stop; it++ {
		r.mulM(q, dir, t)
		alpha := rr / floats.Dot(dir, q)
		floats.AddScaled(x, alpha, dir)
		floats.AddScaled(res, -alpha, q)
		next := floats.Dot(res, res)
		floats.AddScaledTo(dir, res, next/rr, dir)
		rr = next
	}
}

// Row sets dst to row i: the solution of (I + gamma L) dst = e_i.
func (r *RegLaplacian) Row(i int, dst []float64) {
	e := make([]float64, r.Dim())
	e[i] = 1
	r.solve(dst, e)
}

// At returns K_ij (one solve: use Row for several entries of a row).
func (r *RegLaplacian) At(i, j int) float64 {
	row := make([]float64, r.Dim())
	r.Row(i, row)
	return row[j]
}

// Apply sets dst = K x (one solve).
func (r *RegLaplacian) Apply(dst, x []float64) { r.solve(dst, x) }

// Diag returns K_ii, at the cost of n solves.
func (r *RegLaplacian) Diag() []float64 {
	out := make([]float64, r.Dim())
	row := make([]float64, r.Dim())
	for i := range out {
		r.Row(i, row)
		out[i] = row[i]
	}
	return out
}

// RowSums returns K 1 (one solve).
func (r *RegLaplacian) RowSums() []float64 { return RowSumsByApply(r) }
