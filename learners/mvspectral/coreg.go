package mvspectral

import (
	"context"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// Coreg is the co-regularised spectral clustering learner (spec 3). The
// pairwise objective is sum_v tr(U_v' L_v U_v) + lambda sum_{v<w}
// ||U_v'U_w||_F^2 (eq. 4.5 read over unordered pairs, as the update 4.6
// implies: spec 12.6); the centroid one sum_v tr(U_v' L_v U_v) +
// lambda sum_v ||U_v'U*||_F^2 (eq. 4.7 with one lambda for all views, as
// in the experiments). Both are non-decreasing under the alternating
// top-k updates; the fit stops when the objective changes by less than
// tol, or after max_iter rounds (Stats.Converged false, and the error
// wraps learners.ErrNotConverged).
type Coreg struct {
	cfg       config
	centroid  bool
	lambda    float64
	maxIter   int
	tol       float64
	finalView int
}

var _ learners.Learner = (*Coreg)(nil)

// Fit runs the alternating maximisation on in.Kernels (the views).
func (c *Coreg) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	views, err := c.cfg.setup(in)
	if err != nil {
		return nil, err
	}
	if !c.centroid && c.finalView >= len(views) {
		return nil, fmt.Errorf("%w: final_view %d but only %d views", learners.ErrInput, c.finalView, len(views))
	}
	ls, us, _, err := c.cfg.initial(ctx, views)
	if err != nil {
		return nil, err
	}
	n := in.N()
	m := mat.NewSymDense(n, nil)
	var star *mat.Dense
	prev := math.Inf(-1)
	for it := 1; it <= c.maxIter; it++ {
		if c.centroid {
			// [C] order: the consensus first, from the views' current U.
			if star, err = centroid(us, c.cfg.k); err != nil {
				return nil, err
			}
		}
		// Gauss-Seidel over the views; [C] updates views 2..m and then 1.
		for _, v := range updateOrder(len(views)) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			m.CopySym(ls[v])
			if c.centroid {
				addOuter(m, c.lambda, star)
			} else {
				for w, u := range us {
					if w != v {
						addOuter(m, c.lambda, u)
					}
				}
			}
			if us[v], _, err = c.cfg.topK(m, c.cfg.k); err != nil {
				return nil, err
			}
		}
		obj := c.objective(ls, us, star)
		if math.Abs(obj-prev) < c.tol {
			return c.output(us, star, it, obj, true)
		}
		prev = obj
	}
	out, err := c.output(us, star, c.maxIter, prev, false)
	if err != nil {
		return nil, err
	}
	return out, fmt.Errorf("coreg-spectral: objective still changing after %d rounds: %w", c.maxIter, learners.ErrNotConverged)
}

// updateOrder is 1..m-1 then 0, the authors' order (view 0 last, so that
// the embedding of view 0 saw every other view's latest U).
func updateOrder(m int) []int {
	order := make([]int, 0, m)
	for v := 1; v < m; v++ {
		order = append(order, v)
	}
	return append(order, 0)
}

func (c *Coreg) objective(ls []*mat.SymDense, us []*mat.Dense, star *mat.Dense) float64 {
	obj := 0.0
	for v, u := range us {
		var lu mat.Dense
		lu.Mul(ls[v], u)
		obj += mat.Trace(mulT(u, &lu))
		if c.centroid {
			obj += c.lambda * subspaceAgreement(u, star)
			continue
		}
		for w := v + 1; w < len(us); w++ {
			obj += c.lambda * subspaceAgreement(u, us[w])
		}
	}
	return obj
}

func mulT(a, b *mat.Dense) *mat.Dense {
	var p mat.Dense
	p.Mul(a.T(), b)
	return &p
}

func (c *Coreg) output(us []*mat.Dense, star *mat.Dense, iters int, obj float64, converged bool) (*learners.Output, error) {
	var emb *mat.Dense
	if c.centroid {
		emb = RowNormalize(star)
	} else {
		var err error
		if emb, err = finalEmbedding(us, c.finalView); err != nil {
			return nil, err
		}
	}
	return &learners.Output{Embedding: emb, Stats: learners.Stats{Iterations: iters, Objective: obj, Converged: converged}}, nil
}

// centroid returns U*, the top-k eigenvectors of sum_v U_v U_v^T (eq. 4.10;
// the shared lambda scales the matrix, not its eigenvectors): the top-k
// left singular vectors of G = [U_1 .. U_m], from the eigenpairs of the
// small G^T G, at cost O(n (mk)^2) (spec 3.2).
func centroid(us []*mat.Dense, k int) (*mat.Dense, error) {
	g := others(us, -1)
	_, w := g.Dims()
	gram := mat.NewSymDense(w, nil)
	gram.SymOuterK(1, g.T())
	vals, vecs, err := kernelmath.Eigen(gram)
	if err != nil {
		return nil, err
	}
	n, _ := g.Dims()
	star := mat.NewDense(n, k, nil)
	col := mat.NewVecDense(n, nil)
	for j := 0; j < k; j++ {
		i := w - 1 - j
		if vals[i] <= 0 {
			return nil, fmt.Errorf("%w: the views' eigenvectors span fewer than %d dimensions", learners.ErrInput, k)
		}
		col.MulVec(g, vecs.ColView(i))
		col.ScaleVec(1/math.Sqrt(vals[i]), col)
		star.SetCol(j, col.RawVector().Data)
	}
	return star, nil
}
