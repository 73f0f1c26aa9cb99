// Package mvspectral is multi-view spectral clustering (Kumar's thesis,
// "Learning with Multiple Similarities", ch. 3-4; shared/specs/kumar-thesis.md
// sections 1-4): several similarity matrices (views) over the same n points
// give one spectral embedding, on whose rows k-means then finds k clusters.
// Three learners are registered, all of kind embedding:
//
//   - "spectral": single-view spectral clustering (Ng, Jordan & Weiss 2002,
//     spec 1.2) on the sum of the given kernels: with one kernel it is the
//     single-view baseline, with several the kernel-addition baseline, and
//     on a kernel of concatenated features the concatenation baseline;
//   - "cotrain-spectral": co-trained spectral clustering (Kumar & Daume,
//     ICML 2011; spec 2): each view's similarity is projected on the
//     eigen-subspace of the other views, S_v = sym((sum_{w!=v} U_w U_w^T) K_v),
//     and its top-k eigenvectors recomputed, for a fixed number of rounds;
//   - "coreg-spectral": co-regularised spectral clustering (Kumar, Rai &
//     Daume, NIPS 2011; spec 3), pairwise (U_v <- top-k of
//     L_v + lambda sum_{w!=v} U_w U_w^T, Gauss-Seidel) or centroid (a
//     consensus U* <- top-k of sum_v lambda U_v U_v^T, then
//     U_v <- top-k of L_v + lambda U* U*^T), until the objective changes by
//     less than tol.
//
// L = D^{-1/2} K D^{-1/2} is the Ng-Jordan-Weiss affinity, "top-k" the
// eigenvectors of the k largest algebraic eigenvalues. The Output's
// Embedding holds the rows k-means runs on, each scaled to unit norm (a
// zero row is left at 0): for co-training and pairwise co-regularisation
// the row-normalised U of every view side by side (n x mk, spec 2 step 5
// without a prior) or of one chosen view (final_view), for the centroid
// variant U* (n x k). The k-means itself is the caller's (kernelmath.KMeans),
// so that the evaluation can draw the 20 restarts of the protocol.
//
// Negative similarities: the symmetrised projection of co-training can
// have negative entries, and so can a base kernel (a linear one). The
// thesis (section 3.2.1, with the sign fix of spec 12.3) shifts the matrix
// by its most negative entry, S <- S - min(S) 11^T (negative = "shift", the
// default); the authors' code keeps S and takes |d| in D^{-1/2}
// (negative = "abs-degree"). A zero degree is read as 1 (the code's
// convention for a zero row norm). The same rule is applied to a base
// kernel with a negative entry; Gaussian kernels have none.
//
// Eigensolver: kernelmath.PartialEigen (dense, exact, also on the repeated
// eigenvalues of the block-structured toy graphs) up to DenseMax points,
// kernelmath.TopK (Lanczos on the dense matrix, O(n^2) a step) above, since
// a fit needs up to m solves per round.
package mvspectral

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// DenseMax is the largest n solved by the dense partial eigensolver; above
// it the top-k eigenvectors come from Lanczos.
const DenseMax = 600

// Registry names of the learners.
const (
	NameSpectral = "spectral"
	NameCotrain  = "cotrain-spectral"
	NameCoreg    = "coreg-spectral"
)

func commonParams() []learners.Param {
	return []learners.Param{
		learners.Int("clusters", 2, 1, 1<<20, "number of clusters k: the embedding keeps k eigenvectors per view"),
		learners.Enum("negative", "shift", []string{"shift", "abs-degree"},
			"negative similarities: shift the matrix by its most negative entry (the thesis) or use |degree| (the authors' code)"),
		learners.Int("seed", 0, 0, math.MaxInt32, "seed of the Lanczos start vector (n > 600)"),
	}
}

func viewParams(doc string) []learners.Param {
	return []learners.Param{
		learners.Int("final_view", -1, -1, 1<<20, doc),
	}
}

func init() {
	learners.Register(learners.Spec{
		Name: NameSpectral,
		Kind: learners.KindEmbedding,
		Doc: "Spectral clustering embedding (Ng, Jordan & Weiss 2002) of the sum of the base kernels: the top-k " +
			"eigenvectors of D^-1/2 K D^-1/2, rows scaled to unit norm; run k-means on its rows. One kernel is the " +
			"single-view baseline of Kumar's thesis, several the kernel-addition baseline.",
		Needs:  learners.NeedKernels,
		Params: commonParams(),
		New: func(v learners.Values) (learners.Learner, error) {
			return &Spectral{cfg: newConfig(v)}, nil
		},
	})
	learners.Register(learners.Spec{
		Name: NameCotrain,
		Kind: learners.KindEmbedding,
		Doc: "Co-trained multi-view spectral clustering (Kumar & Daume, ICML 2011): each view's similarity is " +
			"projected on the other views' top-k eigenvectors, S_v = sym(sum_{w!=v} U_w U_w' K_v), and its " +
			"eigenvectors recomputed, for a fixed number of rounds; the embedding is the row-normalised U_v side " +
			"by side (or one view's). Needs two or more base kernels (one is plain spectral clustering).",
		Needs: learners.NeedKernels,
		Params: append(append(commonParams(),
			learners.Int("iterations", 5, 0, 1000, "rounds of co-training (no objective: the thesis stops after a fixed number; the code's demo uses 5)"),
			learners.Float("projev", 1, 1, 10, "project on ceil(projev k) eigenvectors of the other views (the code's option; the thesis uses 1)"),
		), viewParams("view whose U is the embedding; -1 puts every view's side by side (no prior on the best view)")...),
		New: func(v learners.Values) (learners.Learner, error) {
			return &Cotrain{cfg: newConfig(v), iterations: v.Int("iterations"), projev: v.Float("projev"), finalView: v.Int("final_view")}, nil
		},
	})
	learners.Register(learners.Spec{
		Name: NameCoreg,
		Kind: learners.KindEmbedding,
		Doc: "Co-regularised multi-view spectral clustering (Kumar, Rai & Daume, NIPS 2011): maximises " +
			"sum_v tr(U_v' L_v U_v) plus lambda times the agreement of the views' eigenvector subspaces, pairwise " +
			"(sum_{v<w} ||U_v'U_w||^2) or with a centroid U* (sum_v ||U_v'U*||^2), by alternating top-k " +
			"eigenproblems. The centroid embedding is U*; the pairwise one the row-normalised U_v side by side (or one view's).",
		Needs: learners.NeedKernels,
		Params: append(append(commonParams(),
			learners.Enum("mode", "pairwise", []string{"pairwise", "centroid"}, "co-regularisation scheme"),
			learners.Float("lambda", 0.01, 0, math.Inf(1), "weight of the disagreement term, shared by the views (the thesis' best on Reuters, Fig 4.2)"),
			learners.Int("max_iter", 20, 1, 1000, "cap on the rounds (the thesis: all experiments converged in fewer than 10)"),
			learners.Float("tol", 1e-4, 0, 1, "stop when the objective changes by less than tol (the thesis' epsilon)"),
		), viewParams("pairwise: view whose U is the embedding; -1 puts every view's side by side (the centroid mode always uses U*)")...),
		New: func(v learners.Values) (learners.Learner, error) {
			return &Coreg{cfg: newConfig(v), centroid: v.String("mode") == "centroid", lambda: v.Float("lambda"),
				maxIter: v.Int("max_iter"), tol: v.Float("tol"), finalView: v.Int("final_view")}, nil
		},
	})
}

type config struct {
	k         int
	absDegree bool
	seed      uint64
}

func newConfig(v learners.Values) config {
	return config{k: v.Int("clusters"), absDegree: v.String("negative") == "abs-degree", seed: uint64(v.Int("seed"))}
}

// setup validates the input and returns the views and k.
func (c config) setup(in *learners.Input) ([]*mat.SymDense, error) {
	if n := in.N(); c.k > n {
		return nil, fmt.Errorf("%w: %d clusters for %d points", learners.ErrInput, c.k, n)
	}
	return in.Kernels, nil
}

// Affinity returns the Ng-Jordan-Weiss affinity D^{-1/2} S D^{-1/2} of a
// similarity S (spec 1.2 step 2), with the package's rule for negative
// entries (absDegree false: shift by the most negative entry first; true:
// |d|) and a zero degree read as 1.
func Affinity(s *mat.SymDense, absDegree bool) *mat.SymDense {
	n := s.SymmetricDim()
	l := mat.NewSymDense(n, nil)
	l.CopySym(s)
	raw := l.RawSymmetric()
	if !absDegree {
		lo := 0.0
		for i := 0; i < n; i++ {
			lo = math.Min(lo, floats.Min(raw.Data[i*raw.Stride+i:i*raw.Stride+n]))
		}
		if lo < 0 {
			for i := 0; i < n; i++ {
				floats.AddConst(-lo, raw.Data[i*raw.Stride+i:i*raw.Stride+n])
			}
		}
	}
	// Degrees from the upper triangle alone (the lower storage is unused).
	deg := make([]float64, n)
	for i := 0; i < n; i++ {
		r := raw.Data[i*raw.Stride+i : i*raw.Stride+n]
		deg[i] += r[0]
		for j, v := range r[1:] {
			deg[i] += v
			deg[i+1+j] += v
		}
	}
	scale := make([]float64, n)
	for i, d := range deg {
		if d = math.Abs(d); d == 0 {
			d = 1
		}
		scale[i] = 1 / math.Sqrt(d)
	}
	for i := 0; i < n; i++ {
		r := raw.Data[i*raw.Stride+i : i*raw.Stride+n]
		for j := range r {
			r[j] *= scale[i] * scale[i+j]
		}
	}
	return l
}

// topK returns the orthonormal eigenvectors (n x k, columns by descending
// eigenvalue) of the k largest eigenvalues of a, and their sum.
func (c config) topK(a *mat.SymDense, k int) (*mat.Dense, float64, error) {
	n := a.SymmetricDim()
	if n <= DenseMax {
		var pe kernelmath.PartialEigen
		if err := pe.Factorize(a); err != nil {
			return nil, 0, err
		}
		vals := pe.Values(nil)
		asc := mat.NewDense(n, k, nil)
		if err := pe.VectorsTo(asc, n-k, n); err != nil {
			return nil, 0, err
		}
		u := mat.NewDense(n, k, nil)
		for j := 0; j < k; j++ {
			u.ColView(j).(*mat.VecDense).CopyVec(asc.ColView(k - 1 - j))
		}
		return u, floats.Sum(vals[n-k:]), nil
	}
	vals, u, err := kernelmath.TopK(kernelmath.SymOperator(a), k, kernelmath.Largest, kernelmath.LanczosOptions{Seed: c.seed, Tol: 1e-8})
	if err != nil {
		return nil, 0, err
	}
	return u, floats.Sum(vals), nil
}

// RowNormalize returns the rows of the blocks side by side, each block's
// rows scaled to unit norm (a zero row stays 0), spec 1.2 step 4.
func RowNormalize(blocks ...*mat.Dense) *mat.Dense {
	out := SideBySide(blocks...)
	n, _ := out.Dims()
	off := 0
	for _, b := range blocks {
		_, c := b.Dims()
		for i := 0; i < n; i++ {
			seg := out.RawRowView(i)[off : off+c]
			if nrm := floats.Norm(seg, 2); nrm > 0 {
				floats.Scale(1/nrm, seg)
			}
		}
		off += c
	}
	return out
}

// subspaceAgreement is tr(U U^T V V^T) = ||U^T V||_F^2.
func subspaceAgreement(u, v *mat.Dense) float64 {
	var p mat.Dense
	p.Mul(u.T(), v)
	return math.Pow(mat.Norm(&p, 2), 2)
}

// addOuter adds alpha U U^T to the symmetric a.
func addOuter(a *mat.SymDense, alpha float64, u *mat.Dense) {
	a.SymRankK(a, alpha, u)
}

// Spectral is the single-view (kernel-sum) learner.
type Spectral struct{ cfg config }

var _ learners.Learner = (*Spectral)(nil)

// Fit embeds the points by spectral clustering of the sum of in.Kernels.
func (s *Spectral) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	views, err := s.cfg.setup(in)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := in.N()
	sum := mat.NewSymDense(n, nil)
	for _, k := range views {
		sum.AddSym(sum, k)
	}
	u, obj, err := s.cfg.topK(Affinity(sum, s.cfg.absDegree), s.cfg.k)
	if err != nil {
		return nil, err
	}
	return &learners.Output{Embedding: RowNormalize(u), Stats: learners.Stats{Objective: obj, Converged: true}}, nil
}

// initial returns the affinities of the views and their top-k eigenvectors.
func (c config) initial(ctx context.Context, views []*mat.SymDense) ([]*mat.SymDense, []*mat.Dense, []float64, error) {
	ls := make([]*mat.SymDense, len(views))
	us := make([]*mat.Dense, len(views))
	objs := make([]float64, len(views))
	for v, k := range views {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		ls[v] = Affinity(k, c.absDegree)
		u, obj, err := c.topK(ls[v], c.k)
		if err != nil {
			return nil, nil, nil, err
		}
		us[v], objs[v] = u, obj
	}
	return ls, us, objs, nil
}

// finalEmbedding is the row-normalised U of one view, or of all side by side (view -1).
func finalEmbedding(us []*mat.Dense, view int) (*mat.Dense, error) {
	if view >= len(us) {
		return nil, fmt.Errorf("%w: final_view %d but only %d views", learners.ErrInput, view, len(us))
	}
	if view >= 0 {
		return RowNormalize(us[view]), nil
	}
	return RowNormalize(us...), nil
}

// GaussianMedian returns the Gaussian kernel exp(-|x_i - x_j|^2 / (2
// sigma^2)) of the rows of x with sigma the median of all n^2 pairwise
// distances, the zero diagonal included (the authors' optSigma, spec 1.1),
// and sigma. The diagonal is 1.
func GaussianMedian(x *mat.Dense) (*mat.SymDense, float64) {
	d := kernelmath.SqDistances(x)
	n := d.SymmetricDim()
	all := make([]float64, 0, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			all = append(all, math.Sqrt(d.At(i, j)))
		}
	}
	sort.Float64s(all)
	// MATLAB's median: the mean of the two middle values for an even count.
	med := all[len(all)/2]
	if len(all)%2 == 0 {
		med = (all[len(all)/2-1] + med) / 2
	}
	sigma := med
	if sigma == 0 {
		sigma = 1 // all points equal: any width gives the all-ones kernel
	}
	return kernelmath.RBF(x, 2*sigma*sigma), sigma
}
