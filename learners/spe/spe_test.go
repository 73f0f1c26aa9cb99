package spe

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/npkl"
	"gonum.org/v1/gonum/mat"
)

func newLearner(t *testing.T, params string) *Learner {
	t.Helper()
	l, _, err := learners.New(Name, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	return l.(*learners.Resolved).Plugin().(*Learner)
}

func TestRegistered(t *testing.T) {
	s, ok := learners.Lookup(Name)
	if !ok || s.Kind != learners.KindEmbedding || s.Needs != learners.NeedKernels {
		t.Fatalf("spec %+v", s)
	}
	want := config{c: 1, k: 5, dim: 2, maxIter: 100, rounds: 20, tol: 1e-4, solver: npkl.Auto, seed: 1}
	if got := newLearner(t, "").cfg; got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
}

// The capped simplex {alpha >= 0, sum alpha <= C} by hand.
func TestProjectCappedSimplex(t *testing.T) {
	d := &tripletDual{c: 1}
	for _, c := range []struct{ in, want []float64 }{
		{[]float64{0.2, -0.5, 0.3}, []float64{0.2, 0, 0.3}}, // clipped sum 0.5 <= 1: clip
		{[]float64{1, 0.5, -1}, []float64{0.75, 0.25, 0}},   // onto the face sum = 1: shift by 0.25
		{[]float64{2, 2, 2, 2}, []float64{0.25, 0.25, 0.25, 0.25}},
	} {
		got := append([]float64(nil), c.in...)
		d.Project(got)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-15 {
				t.Fatalf("Project(%v) = %v, want %v", c.in, got, c.want)
			}
		}
	}
}

// graphOf returns the union kNN graph of the rows of x as neighbour sets,
// by sorting every row of distances.
func graphOf(k *mat.SymDense, knn int) []map[int]bool {
	n := k.SymmetricDim()
	nb := make([]map[int]bool, n)
	for i := range nb {
		nb[i] = map[int]bool{}
	}
	for _, p := range kernelmath.KNNPairs(kernelmath.KernelDistances(k), knn, false) {
		nb[p.I][p.J], nb[p.J][p.I] = true, true
	}
	return nb
}

// preserved is the fraction of the graph neighbours N_i of every point
// that are among its |N_i| nearest points under the kernel k.
func preserved(k *mat.SymDense, graph []map[int]bool) float64 {
	d := kernelmath.KernelDistances(k)
	hit, total := 0, 0
	for i, nbr := range graph {
		for _, j := range kernelmath.NearestNeighbors(d, len(nbr))[i] {
			if nbr[j] {
				hit++
			}
		}
		total += len(nbr)
	}
	return float64(hit) / float64(total)
}

// slack is xi = max over all triplets (i, k in N_i, j not in N_i) of
// d_ik - d_ij, by brute force.
func slack(k *mat.SymDense, graph []map[int]bool) float64 {
	d := kernelmath.KernelDistances(k)
	xi := 0.0
	for i, nbr := range graph {
		for kk := range nbr {
			for j := range graph {
				if j != i && !nbr[j] {
					xi = math.Max(xi, d.At(i, kk)-d.At(i, j))
				}
			}
		}
	}
	return xi
}

// SPE keeps the kNN graph: with growing C the learned kernel preserves
// more of it (and the largest violation shrinks); the reported objective
// -tr(K W) + C xi is recomputed by brute force over all triplets, and the
// working set stays a small part of them.
func TestPreservesNeighbours(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 60
	x := mat.NewDense(n, 5, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < 5; j++ {
			x.Set(i, j, r.NormFloat64())
		}
	}
	kin := kernelmath.Linear(x)
	graph := graphOf(kin, 4)
	triplets := 0
	scale := 0.0
	for i, nbr := range graph {
		triplets += len(nbr) * (n - 1 - len(nbr))
		for j := range nbr {
			if j > i {
				scale += kernelmath.KernelDistances(kin).At(i, j)
			}
		}
	}
	edges := 0
	for _, nbr := range graph {
		edges += len(nbr)
	}
	scale /= float64(edges / 2)
	t.Logf("input kernel: %.3f of the neighbours preserved", preserved(kin, graph))
	prevP, prevXi := 0.0, math.Inf(1)
	for _, c := range []float64{0.01, 1, 10, 100} {
		l := newLearner(t, `{"k": 4, "C": `+jsonFloat(c)+`}`)
		working := 0
		l.trace = func(_ int, _ *npkl.Result, w int) { working = w }
		out, err := l.Fit(context.Background(), &learners.Input{Kernels: []*mat.SymDense{kin}})
		if err != nil {
			t.Fatal(err)
		}
		k := mat.NewSymDense(n, nil)
		k.ScaleSym(1/scale, out.Kernel) // the units of the solver
		xi := slack(k, graph)
		obj := c * xi
		for i, nbr := range graph {
			for j := range nbr {
				obj -= k.At(i, j)
			}
		}
		p := preserved(out.Kernel, graph)
		t.Logf("C = %g: %.3f preserved, largest violation %.4g, working set %d of %d triplets (%+v)", c, p, xi, working, triplets, out.Stats)
		if math.Abs(obj-out.Stats.Objective) > 1e-9*math.Abs(obj) {
			t.Fatalf("C = %g: objective %.12g, recomputed over all triplets %.12g", c, out.Stats.Objective, obj)
		}
		if p < prevP-0.01 || xi > prevXi*(1+1e-9) || working > triplets/10 {
			t.Fatalf("C = %g: preserved %.3f (was %.3f), violation %g (was %g), working set %d", c, p, prevP, xi, prevXi, working)
		}
		prevP, prevXi = p, xi
	}
	if prevP < 0.97 {
		t.Fatalf("C = 100 preserves only %.3f of the neighbours", prevP)
	}
}

func jsonFloat(v float64) string { b, _ := json.Marshal(v); return string(b) }
