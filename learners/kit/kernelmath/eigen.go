package kernelmath

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Operator is a symmetric linear map y = A x on R^n, so that Lanczos can work
// on matrices that are never formed (sparse graphs, low-rank plus sparse).
type Operator interface {
	Dim() int
	Apply(dst, x []float64)
}

type symOperator struct{ k *mat.SymDense }

var _ Operator = symOperator{}

func (o symOperator) Dim() int { return o.k.SymmetricDim() }

func (o symOperator) Apply(dst, x []float64) {
	mat.NewVecDense(len(dst), dst).MulVec(o.k, mat.NewVecDense(len(x), x))
}

// SymOperator wraps a dense symmetric matrix as an Operator.
func SymOperator(k *mat.SymDense) Operator { return symOperator{k} }

// Which selects the end of the spectrum TopK returns.
type Which int

// Ends of the spectrum.
const (
	Largest  Which = iota // algebraically largest, returned in descending order
	Smallest              // algebraically smallest, returned in ascending order
)

// LanczosOptions tunes TopK. The zero value is a good default.
type LanczosOptions struct {
	// Tol is the residual ||A v - theta v|| accepted, relative to the largest
	// Ritz value in magnitude (default 1e-10).
	Tol float64
	// MaxIter caps the Krylov dimension (default n).
	MaxIter int
	// Start is the start vector (a warm start); a seeded random vector otherwise.
	Start []float64
	// Deflate holds orthonormal vectors the search stays orthogonal to, e.g. a
	// known null space. A single Krylov sequence finds one copy of a repeated
	// eigenvalue; deflating known eigenvectors (such as the indicator vectors
	// of a graph's connected components) is how callers get the others.
	Deflate [][]float64
	// Seed seeds the random start vector.
	Seed uint64
}

// ErrNotConverged is wrapped by the error of an iterative solver that
// stopped at its iteration cap before its convergence criterion held.
var ErrNotConverged = errors.New("did not converge")

// errLanczos is wrapped with ErrNotConverged when Lanczos stops at MaxIter
// without the requested eigenpairs reaching the tolerance.
var errLanczos = fmt.Errorf("lanczos: %w", ErrNotConverged)

// TopK returns the k eigenvalues of op at the chosen end of the spectrum and
// their eigenvectors (n x k, as columns), by Lanczos with full
// reorthogonalisation. Cost: O(j) operator applications and O(n j^2) for the
// reorthogonalisation, j the Krylov dimension reached (typically 2k to 4k),
// against O(n^3) for a dense solve.
func TopK(op Operator, k int, which Which, opt LanczosOptions) ([]float64, *mat.Dense, error) {
	n := op.Dim()
	avail := n - len(opt.Deflate)
	if k < 1 || k > avail {
		return nil, nil, fmt.Errorf("lanczos: want 1 <= k <= %d eigenpairs, got %d", avail, k)
	}
	tol := opt.Tol
	if tol == 0 {
		tol = 1e-10
	}
	maxIter := avail
	if opt.MaxIter > 0 && opt.MaxIter < maxIter {
		maxIter = max(opt.MaxIter, k)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))

	q := make([][]float64, 0, min(maxIter, 2*k+32))
	var alpha, beta []float64
	w := make([]float64, n)
	next := make([]float64, n)
	if opt.Start != nil && len(opt.Start) == n {
		copy(next, opt.Start)
	} else {
		randomFill(next, rng)
	}
	if !orthonormalize(next, opt.Deflate, q) {
		randomFill(next, rng)
		orthonormalize(next, opt.Deflate, q)
	}

	checkAt := min(maxIter, k+8)
	for j := 0; j < maxIter; j++ {
		qj := append([]float64(nil), next...)
		q = append(q, qj)
		op.Apply(w, qj)
		a := floats.Dot(qj, w)
		alpha = append(alpha, a)
		floats.AddScaled(w, -a, qj)
		if j > 0 {
			floats.AddScaled(w, -beta[j-1], q[j-1])
		}
		// Full reorthogonalisation, twice ("twice is enough", Parlett).
		for pass := 0; pass < 2; pass++ {
			for _, d := range opt.Deflate {
				floats.AddScaled(w, -floats.Dot(d, w), d)
			}
			for _, qi := range q {
				floats.AddScaled(w, -floats.Dot(qi, w), qi)
			}
		}
		b := floats.Norm(w, 2)
		last := j+1 == maxIter
		breakdown := b <= 1e-12*math.Max(1, math.Abs(a))
		if j+1 >= k && (j+1 >= checkAt || breakdown || last) {
			vals, s, err := tridiagEigen(alpha, beta)
			if err != nil {
				return nil, nil, err
			}
			idx := wanted(vals, k, which)
			scale := math.Max(math.Abs(vals[0]), math.Abs(vals[len(vals)-1]))
			ok := true
			for _, i := range idx {
				if math.Abs(b*s.At(j, i)) > tol*math.Max(scale, 1e-300) {
					ok = false
					break
				}
			}
			if ok || last {
				outVals := make([]float64, k)
				vecs := mat.NewDense(n, k, nil)
				for c, i := range idx {
					outVals[c] = vals[i]
					for r := 0; r < n; r++ {
						v := 0.0
						for t := range q {
							v += q[t][r] * s.At(t, i)
						}
						vecs.Set(r, c, v)
					}
				}
				if !ok {
					return outVals, vecs, errLanczos
				}
				return outVals, vecs, nil
			}
			checkAt = j + 1 + max(4, (j+1)/4)
		}
		if breakdown {
			// Invariant subspace found: continue from a fresh direction.
			randomFill(next, rng)
			if !orthonormalize(next, opt.Deflate, q) {
				break
			}
			b = 0
		} else {
			for r := range next {
				next[r] = w[r] / b
			}
		}
		beta = append(beta, b)
	}
	return nil, nil, errLanczos
}

// tridiagEigen solves the Lanczos tridiagonal matrix densely (it is small).
func tridiagEigen(alpha, beta []float64) ([]float64, *mat.Dense, error) {
	m := len(alpha)
	t := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		t.SetSym(i, i, alpha[i])
		if i+1 < m {
			t.SetSym(i, i+1, beta[i])
		}
	}
	return Eigen(t)
}

// wanted returns the indices (into ascending vals) of the k wanted Ritz values in output order.
func wanted(vals []float64, k int, which Which) []int {
	idx := make([]int, k)
	for c := range idx {
		if which == Largest {
			idx[c] = len(vals) - 1 - c
		} else {
			idx[c] = c
		}
	}
	return idx
}

func randomFill(v []float64, rng *rand.Rand) {
	for i := range v {
		v[i] = rng.NormFloat64()
	}
}

// orthonormalize makes v orthogonal to the deflation set and the basis, then
// unit length; false when nothing is left of it.
func orthonormalize(v []float64, deflate, basis [][]float64) bool {
	n0 := floats.Norm(v, 2)
	for pass := 0; pass < 2; pass++ {
		for _, d := range deflate {
			floats.AddScaled(v, -floats.Dot(d, v), d)
		}
		for _, d := range basis {
			floats.AddScaled(v, -floats.Dot(d, v), d)
		}
	}
	nv := floats.Norm(v, 2)
	if nv <= 1e-10*n0 || nv == 0 {
		return false
	}
	floats.Scale(1/nv, v)
	return true
}
