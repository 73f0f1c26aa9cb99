package npkl

import (
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// Neighborhood is the input side of the SimpleNPKL embeddings (thesis
// section 3.4, spec 3.8): the kNN pairs N of the points and their squared
// input distances D_ij, from a base kernel.
//
// Units [deviation: the thesis gives absolute C = 1 and B = m_B N for data
// of unstated scale]: the input kernel is divided by Scale, the mean of D
// over N, so that D has mean 1 and C weighs squared distances in units of
// the typical neighbour distance whatever the feature scale; budgets are
// relative to the centred input kernel (Budget).
type Neighborhood struct {
	Pairs  []learners.Pair // pairs (i < j) with j among the k nearest of i or i among those of j
	Adj    [][]int         // the neighbours of every point in that graph
	D      []float64       // squared input distances of the pairs / Scale (mean 1)
	Scale  float64         // the mean squared input distance over the pairs
	Kernel *mat.SymDense   // the centred input kernel H K H / Scale
}

// NewNeighborhood builds the union kNN graph of the distances K_ii + K_jj -
// 2 K_ij of the base kernel k (the Euclidean kNN graph of the thesis when k
// is the linear kernel of the features). Coincident points everywhere (all
// distances zero) are an input error.
func NewNeighborhood(k *mat.SymDense, knn int) (*Neighborhood, error) {
	n := k.SymmetricDim()
	if n < 3 {
		return nil, fmt.Errorf("%w: an embedding needs at least 3 points, got %d", learners.ErrInput, n)
	}
	dist := kernelmath.KernelDistances(k)
	nb := &Neighborhood{Pairs: kernelmath.KNNPairs(dist, knn, false), Adj: make([][]int, n)}
	nb.D = make([]float64, len(nb.Pairs))
	for e, p := range nb.Pairs {
		nb.D[e] = dist.At(p.I, p.J)
		nb.Scale += nb.D[e]
		nb.Adj[p.I] = append(nb.Adj[p.I], p.J)
		nb.Adj[p.J] = append(nb.Adj[p.J], p.I)
	}
	nb.Scale /= float64(len(nb.Pairs))
	if !(nb.Scale > 0) {
		return nil, fmt.Errorf("%w: every point coincides with its neighbours (all kernel distances are zero)", learners.ErrInput)
	}
	for e := range nb.D {
		nb.D[e] /= nb.Scale
	}
	nb.Kernel = kernelmath.Center(k)
	nb.Kernel.ScaleSym(1/nb.Scale, nb.Kernel)
	return nb, nil
}

// Budget returns B = budget x tr((H K H)^2) in the units of nb: with
// budget = 1 the centred input kernel, which meets every distance constraint
// exactly, lies on the boundary tr K^2 = B.
func (nb *Neighborhood) Budget(budget float64) float64 {
	return budget * kernelmath.Frobenius(nb.Kernel, nb.Kernel)
}

// DistanceDual is the dual of the square-loss distance constraints of
// colored MVU (eq. 3.25) and MVE+NPKL (section 3.4.2), p = 2:
//
//	P(K) = -<A0, K> + C/2 sum_e (D_e - tr(T_e K))^2,       T_e = (e_i - e_j)(e_i - e_j)^T
//	J(alpha) = -sqrt(B) ||A_+||_F + sum_e alpha_e D_e - sum_e alpha_e^2 / (2C),   A = A0 + sum_e alpha_e T_e
//	dJ/dalpha_e = D_e - tr(T_e K) - alpha_e / C,           alpha free (square loss)
//
// with A0 = HYH for CMVU and K0 for MVE (use Kind Distance in the Problem).
type DistanceDual struct {
	D []float64
	C float64
}

var _ Dual = (*DistanceDual)(nil)

// Len implements Dual.
func (d *DistanceDual) Len() int { return len(d.D) }

// Weights implements Dual: w = alpha.
func (d *DistanceDual) Weights(w, alpha []float64) { copy(w, alpha) }

// Lin implements Dual.
func (d *DistanceDual) Lin(alpha []float64) float64 {
	s := 0.0
	for e, a := range alpha {
		s += a*d.D[e] - a*a/(2*d.C)
	}
	return s
}

// Gradient implements Dual.
func (d *DistanceDual) Gradient(g, alpha, f []float64) {
	for e, a := range alpha {
		g[e] = d.D[e] - f[e] - a/d.C
	}
}

// Project implements Dual: the multipliers of equality constraints are free.
func (d *DistanceDual) Project([]float64) {}

// Loss implements Dual.
func (d *DistanceDual) Loss(f []float64, s float64) float64 {
	loss := 0.0
	for e, fe := range f {
		v := d.D[e] - s*fe
		loss += v * v
	}
	return d.C / 2 * loss
}

// Lipschitz implements Dual: Lemma 3.4's bound with ||T_e||_F^2 = 4.
func (d *DistanceDual) Lipschitz(g float64) float64 { return 4*float64(len(d.D))/g + 1/d.C }

// Embed reads an embedding off a kernel (spec 3.8): centre it, take the dim
// largest eigenpairs (lambda_l, u_l) and return the n x dim coordinates
// sqrt(max(lambda_l, 0)) u_l; each column's sign makes its largest entry in
// magnitude positive, so that the result is deterministic.
func Embed(k *mat.SymDense, dim int) (*mat.Dense, error) {
	n := k.SymmetricDim()
	dim = min(dim, n)
	c := kernelmath.Center(k)
	var pe kernelmath.PartialEigen
	if err := pe.Factorize(c); err != nil {
		return nil, err
	}
	vals := pe.Values(nil)
	var u mat.Dense
	if err := pe.VectorsTo(&u, n-dim, n); err != nil {
		return nil, err
	}
	out := mat.NewDense(n, dim, nil)
	for col := 0; col < dim; col++ {
		src := dim - 1 - col // descending eigenvalues
		s := math.Sqrt(math.Max(vals[n-1-col], 0))
		big := 0.0
		for i := 0; i < n; i++ {
			if v := u.At(i, src); math.Abs(v) > math.Abs(big) {
				big = v
			}
		}
		if big < 0 {
			s = -s
		}
		for i := 0; i < n; i++ {
			out.Set(i, col, s*u.At(i, src))
		}
	}
	return out, nil
}
