package mvspectral

import (
	"context"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// Cotrain is the co-trained spectral clustering learner (spec 2, Algorithm 1
// with the m-view update). There is no objective (the thesis: "in general
// the algorithm does not converge"), so it runs a fixed number of rounds;
// Stats.Objective is the sum over the views of the top-k eigenvalues of the
// last round's affinities.
type Cotrain struct {
	cfg        config
	iterations int
	projev     float64
	finalView  int
}

var _ learners.Learner = (*Cotrain)(nil)

// Fit runs the co-training rounds on in.Kernels (the views).
func (c *Cotrain) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	views, err := c.cfg.setup(in)
	if err != nil {
		return nil, err
	}
	n := in.N()
	if c.finalView >= len(views) {
		return nil, fmt.Errorf("%w: final_view %d but only %d views", learners.ErrInput, c.finalView, len(views))
	}
	// The projection may use more eigenvectors than the embedding (projev).
	proj := c.cfg
	proj.k = min(n, int(math.Ceil(c.projev*float64(c.cfg.k)-1e-9)))
	_, us, objs, err := proj.initial(ctx, views)
	if err != nil {
		return nil, err
	}
	for range c.iterations {
		next := make([]*mat.Dense, len(views))
		for v, k := range views {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			// Jacobi order, as the authors' code: every view is updated
			// from the previous round's eigenvectors. With one view there is
			// nothing to project on and U stays.
			if len(views) == 1 {
				next[v] = us[v]
				continue
			}
			s := Project(others(us, v), k)
			if next[v], objs[v], err = proj.topK(Affinity(s, c.cfg.absDegree), proj.k); err != nil {
				return nil, err
			}
		}
		us = next
	}
	// The embedding keeps k eigenvectors per view.
	for v := range us {
		us[v] = us[v].Slice(0, n, 0, c.cfg.k).(*mat.Dense)
	}
	emb, err := finalEmbedding(us, c.finalView)
	if err != nil {
		return nil, err
	}
	obj := 0.0
	for _, o := range objs {
		obj += o
	}
	return &learners.Output{Embedding: emb, Stats: learners.Stats{Iterations: c.iterations, Objective: obj, Converged: true}}, nil
}

// others returns the eigenvectors of every view but v side by side.
func others(us []*mat.Dense, v int) *mat.Dense {
	var blocks []*mat.Dense
	for w, u := range us {
		if w != v {
			blocks = append(blocks, u)
		}
	}
	return SideBySide(blocks...)
}

// SideBySide returns the columns of the blocks (same row count) side by side.
func SideBySide(blocks ...*mat.Dense) *mat.Dense {
	n, _ := blocks[0].Dims()
	width := 0
	for _, b := range blocks {
		_, c := b.Dims()
		width += c
	}
	out := mat.NewDense(n, width, nil)
	off := 0
	for _, b := range blocks {
		_, c := b.Dims()
		out.Slice(0, n, off, off+c).(*mat.Dense).Copy(b)
		off += c
	}
	return out
}

// Project returns sym(Q Q^T K) = (Q B + B^T Q^T)/2 with B = Q^T K, the
// similarity K projected on the span of the other views' eigenvectors Q
// (spec 2 steps 1-2; for m > 2 views Q Q^T is the sum of their
// projections). Cost O(n^2 r), r the columns of Q.
func Project(q *mat.Dense, k *mat.SymDense) *mat.SymDense {
	n, _ := q.Dims()
	var b, qb mat.Dense
	b.Mul(q.T(), k)
	qb.Mul(q, &b)
	s := mat.NewSymDense(n, nil)
	raw, p := s.RawSymmetric(), qb.RawMatrix()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			raw.Data[i*raw.Stride+j] = (p.Data[i*p.Stride+j] + p.Data[j*p.Stride+i]) / 2
		}
	}
	return s
}
