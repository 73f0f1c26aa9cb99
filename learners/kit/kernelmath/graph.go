package kernelmath

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Pair is an unordered pair of point indices.
type Pair struct{ I, J int }

// Edge is a weighted edge of a Graph.
type Edge struct {
	To int
	W  float64
}

// Graph is a sparse undirected weighted graph on points 0..N-1, stored as
// adjacency lists (both directions).
type Graph struct {
	Adj [][]Edge
}

// N returns the number of vertices.
func (g *Graph) N() int { return len(g.Adj) }

// KNNPairs returns the pairs (i < j) where j is among the k nearest
// neighbours of i or i among those of j; with mutual, both must hold. d holds
// squared distances; ties are broken by index, so the result is deterministic.
func KNNPairs(d *mat.SymDense, k int, mutual bool) []Pair {
	return NeighborPairs(NearestNeighbors(d, k), mutual)
}

// NewGraph builds an undirected graph on n points from pairs, weighting each
// edge with weight(pair).
func NewGraph(n int, pairs []Pair, weight func(Pair) float64) *Graph {
	g := &Graph{Adj: make([][]Edge, n)}
	for _, p := range pairs {
		w := weight(p)
		g.Adj[p.I] = append(g.Adj[p.I], Edge{p.J, w})
		g.Adj[p.J] = append(g.Adj[p.J], Edge{p.I, w})
	}
	return g
}

// Degrees returns the weighted degree of every vertex.
func (g *Graph) Degrees() []float64 {
	deg := make([]float64, g.N())
	for i, es := range g.Adj {
		for _, e := range es {
			deg[i] += e.W
		}
	}
	return deg
}

// Components returns the connected components, each sorted, in order of their smallest vertex.
func (g *Graph) Components() [][]int {
	seen := make([]bool, g.N())
	var comps [][]int
	for s := range g.Adj {
		if seen[s] {
			continue
		}
		comp := []int{s}
		seen[s] = true
		for head := 0; head < len(comp); head++ {
			for _, e := range g.Adj[comp[head]] {
				if !seen[e.To] {
					seen[e.To] = true
					comp = append(comp, e.To)
				}
			}
		}
		sort.Ints(comp)
		comps = append(comps, comp)
	}
	return comps
}

// Laplacian returns the combinatorial Laplacian D - W as a sparse Operator.
func (g *Graph) Laplacian() Operator { return laplacian{g, g.Degrees()} }

type laplacian struct {
	g   *Graph
	deg []float64
}

var _ Operator = laplacian{}

func (l laplacian) Dim() int { return l.g.N() }

func (l laplacian) Apply(dst, x []float64) {
	for i, es := range l.g.Adj {
		v := l.deg[i] * x[i]
		for _, e := range es {
			v -= e.W * x[e.To]
		}
		dst[i] = v
	}
}

// LaplacianDense returns D - W as a dense matrix.
func (g *Graph) LaplacianDense() *mat.SymDense {
	n := g.N()
	l := mat.NewSymDense(n, nil)
	for i, es := range g.Adj {
		for _, e := range es {
			l.SetSym(i, i, l.At(i, i)+e.W)
			if i < e.To {
				l.SetSym(i, e.To, l.At(i, e.To)-e.W)
			}
		}
	}
	return l
}

// SmallestLaplacianEigen returns the m eigenpairs of the graph Laplacian with
// the smallest eigenvalues (ascending, eigenvectors as columns). The null
// space, one indicator vector per connected component, is written down
// exactly rather than searched for, since Lanczos finds only one copy of a
// repeated eigenvalue; Lanczos finds the rest in its orthogonal complement.
func (g *Graph) SmallestLaplacianEigen(m int, seed uint64) ([]float64, *mat.Dense, error) {
	n := g.N()
	m = min(m, n)
	comps := g.Components()
	var null [][]float64
	for _, c := range comps {
		v := make([]float64, n)
		for _, i := range c {
			v[i] = 1 / math.Sqrt(float64(len(c)))
		}
		null = append(null, v)
	}
	vals := make([]float64, 0, m)
	vecs := mat.NewDense(n, m, nil)
	for c := 0; c < min(m, len(null)); c++ {
		vals = append(vals, 0)
		vecs.SetCol(c, null[c])
	}
	if rest := m - len(vals); rest > 0 {
		lv, lvec, err := TopK(g.Laplacian(), rest, Smallest, LanczosOptions{Deflate: null, Seed: seed})
		if err != nil {
			return nil, nil, err
		}
		for c := 0; c < rest; c++ {
			vals = append(vals, lv[c])
			vecs.SetCol(len(null)+c, mat.Col(nil, c, lvec))
		}
	}
	return vals, vecs, nil
}
