package simplenpkl

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/npkl"
	"gonum.org/v1/gonum/mat"
)

// selectPairs returns the indices (ascending) of the pairs kept by active
// or random constraint selection (algorithm A5, spec 3.7 item 3).
func selectPairs(f *fit, base *mat.SymDense, cfg Config) ([]int, error) {
	m := len(f.pairs)
	if cfg.Select == "random" {
		rng := rand.New(rand.NewPCG(cfg.Seed, 0x5e1ec7))
		keep := rng.Perm(m)[:int(math.Ceil(cfg.Fraction*float64(m)))]
		slices.Sort(keep)
		return keep, nil
	}
	// K_ij on the constrained pairs from the chosen kernel.
	kij := make([]float64, m)
	if cfg.SelectKernel == "base" {
		for e, p := range f.pairs {
			kij[e] = base.At(p.I, p.J)
		}
	} else {
		f.pr.Pairs = f.pairs
		ll, _, err := npkl.Evaluate(f.pr, scaledSigns(f.t, f.c))
		if err != nil {
			return nil, err
		}
		ll.PairValues(kij, f.pairs, npkl.Entry)
		for e := range kij {
			kij[e] /= 2
		}
	}
	points := activePoints(f.pairs, f.t, kij, cfg.Fraction)
	var keep []int
	for e, p := range f.pairs {
		if points[p.I] || points[p.J] {
			keep = append(keep, e)
		}
	}
	return keep, nil
}

// activePoints returns the most uncertain constrained points: the fraction
// frac (rounded up) of them with the smallest normalised margin
// u_i = |sum_{j: T_ij != 0} T_ij k(x_i, x_j)| / l_i, l_i the number of pairs
// at i (thesis section 3.3.3); ties go to the lower index.
func activePoints(pairs []learners.Pair, t, kij []float64, frac float64) map[int]bool {
	sum := map[int]float64{}
	count := map[int]int{}
	for e, p := range pairs {
		for _, i := range []int{p.I, p.J} {
			sum[i] += t[e] * kij[e]
			count[i]++
		}
	}
	type point struct {
		i int
		u float64
	}
	pts := make([]point, 0, len(sum))
	for i, s := range sum {
		pts = append(pts, point{i, math.Abs(s) / float64(count[i])})
	}
	slices.SortFunc(pts, func(a, b point) int { return cmp.Or(cmp.Compare(a.u, b.u), cmp.Compare(a.i, b.i)) })
	chosen := map[int]bool{}
	for _, p := range pts[:int(math.Ceil(frac*float64(len(pts))))] {
		chosen[p.i] = true
	}
	return chosen
}

// SmoothBasis returns the r eigenvectors (as columns) of the normalised
// Laplacian L = I - S~ of g (S~ its weighted adjacency, as built by
// NormalizedAdjacency) with the smallest eigenvalues: the fixed basis V of
// the low-rank variant K = V E V^T (spec 3.7 item 4). Up to AutoDenseMax
// points a dense partial eigensolver computes them; above, Lanczos on S~
// with the eigenvalue-1 eigenvectors D^{1/2} 1_c of the connected components
// written down exactly and deflated (a single Krylov sequence finds one copy
// of a repeated eigenvalue), and the dense solver as the fallback.
func SmoothBasis(g *kernelmath.Graph, r int, seed uint64) (*mat.Dense, error) {
	n := g.N()
	if n > npkl.AutoDenseMax {
		v, err := smoothBasisLanczos(g, r, seed)
		if !errors.Is(err, learners.ErrNotConverged) {
			return v, err
		}
	}
	s := make([]float64, n*n)
	npkl.Adjacency(g, 1).AddTo(s)
	var pe kernelmath.PartialEigen
	if err := pe.FactorizeDense(n, s); err != nil {
		return nil, err
	}
	var v mat.Dense
	if err := pe.VectorsTo(&v, n-r, n); err != nil {
		return nil, err
	}
	return &v, nil
}

func smoothBasisLanczos(g *kernelmath.Graph, r int, seed uint64) (*mat.Dense, error) {
	n := g.N()
	deg := make([]float64, n)
	for i, es := range g.Adj {
		deg[i] = float64(len(es))
	}
	var known [][]float64
	for _, comp := range g.Components() {
		if len(comp) < 2 {
			continue // an isolated point: eigenvalue 0 of S~, not 1
		}
		v := make([]float64, n)
		s := 0.0
		for _, i := range comp {
			v[i] = math.Sqrt(deg[i])
			s += deg[i]
		}
		for _, i := range comp {
			v[i] /= math.Sqrt(s)
		}
		known = append(known, v)
	}
	out := mat.NewDense(n, r, nil)
	c := 0
	for ; c < min(r, len(known)); c++ {
		out.SetCol(c, known[c])
	}
	if c == r {
		return out, nil
	}
	_, vecs, err := kernelmath.TopK(npkl.Adjacency(g, 1), r-c, kernelmath.Largest, kernelmath.LanczosOptions{Deflate: known, Seed: seed})
	if err != nil {
		return nil, err
	}
	for j := 0; c < r; c, j = c+1, j+1 {
		out.SetCol(c, mat.Col(nil, j, vecs))
	}
	return out, nil
}

func sortPairs(ps []learners.Pair) {
	slices.SortFunc(ps, func(a, b learners.Pair) int { return cmp.Or(cmp.Compare(a.I, b.I), cmp.Compare(a.J, b.J)) })
}
