// Package rerank re-orders the candidates of the text stage by VisualRank
// (Jing & Baluja 2008) over a similarity matrix that comes from a named
// strategy: the text kernel, a parametric visual kernel, or a kernel learned
// by a registered learner (hsicnpk for "npk"). A Plan resolves the strategy
// once (learners.Resolve) and gives a search its stages, each taking the
// previous one's output: Split, Kernel, Rank (a kernel and a prior in, a
// ranking and its voters out).
package rerank

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Stochastic returns the column-stochastic normalisation of a non-negative
// affinity matrix, with the diagonal dropped so that no image votes for
// itself. A column with no affinity (an isolated image) spreads its vote
// uniformly over the others, as PageRank does for dangling nodes.
func Stochastic(a *mat.SymDense) *mat.Dense {
	n := a.SymmetricDim()
	return stochastic(mat.NewDense(n, n, nil), a, false)
}

// stochastic writes Stochastic(a) into s (n x n, every entry overwritten)
// and returns it; with clip, Stochastic(kernelmath.Clip(a)), reading each
// max(a_ij, 0) where it is used rather than from a clipped copy.
func stochastic(s *mat.Dense, a *mat.SymDense, clip bool) *mat.Dense {
	n := a.SymmetricDim()
	raw := s.RawMatrix()
	ar := a.RawSymmetric()
	at := func(x float64) float64 {
		if clip && x <= 0 {
			return 0 // math.Max(x, 0), -0 included, without its call
		}
		return x
	}
	// Column sums from the upper triangle (a is symmetric), row by row,
	// adding in the order i = 0..n-1 as a column walk would.
	sum := make([]float64, n)
	for i := 0; i < n; i++ {
		row := ar.Data[i*ar.Stride : i*ar.Stride+n]
		for j := i + 1; j < n; j++ {
			x := at(row[j])
			sum[i] += x
			sum[j] += x
		}
	}
	uniform := 0.0
	if n > 1 {
		uniform = 1 / float64(n-1)
	}
	// S_ij = a_ij / sum_j, row by row of S: a_ij is a_ji of the upper
	// triangle for j < i and row i of it for j > i.
	for i := 0; i < n; i++ {
		dst := raw.Data[i*raw.Stride : i*raw.Stride+n]
		row := ar.Data[i*ar.Stride : i*ar.Stride+n]
		for j := range dst {
			aij := row[j]
			if j < i {
				aij = ar.Data[j*ar.Stride+i]
			}
			switch {
			case i == j:
				dst[j] = 0
			case sum[j] > 0:
				dst[j] = at(aij) / sum[j]
			default:
				dst[j] = uniform
			}
		}
	}
	return s
}

// VisualRank solves VR = d S VR + (1 - d) p by power iteration over a
// column-stochastic S (see Stochastic) and a prior p summing to 1. It stops
// when ||VR_t+1 - VR_t||_1 < 1e-9 or after 100 iterations (spec A.2) and
// returns the scores (summing to 1) and the number of iterations.
func VisualRank(s *mat.Dense, prior []float64, d float64) ([]float64, int) {
	n := len(prior)
	vr := mat.NewVecDense(n, append([]float64(nil), prior...))
	next := mat.NewVecDense(n, nil)
	p := mat.NewVecDense(n, prior)
	iter := 0
	for iter < 100 {
		iter++
		next.MulVec(s, vr)
		next.ScaleVec(d, next)
		next.AddScaledVec(next, 1-d, p)
		delta := 0.0
		nv, v := next.RawVector().Data, vr.RawVector().Data
		for i, x := range nv {
			delta += math.Abs(x - v[i])
		}
		vr, next = next, vr
		if delta < 1e-9 {
			break
		}
	}
	return vr.RawVector().Data, iter
}
