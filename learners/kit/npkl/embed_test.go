package npkl

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"gonum.org/v1/gonum/mat"
)

func TestNeighborhood(t *testing.T) {
	x := randomPoints(25, 3, 21)
	nb, err := NewNeighborhood(kernelmath.Linear(x), 3)
	if err != nil {
		t.Fatal(err)
	}
	// The union 3-NN graph by sorting, and the mean squared distance over it.
	l := learnertest.RefLaplacian(x, 3, false)
	count, mean := 0, 0.0
	for i := 0; i < 25; i++ {
		for j := i + 1; j < 25; j++ {
			if l.At(i, j) != 0 {
				count++
				d := 0.0
				for f := 0; f < 3; f++ {
					d += (x.At(i, f) - x.At(j, f)) * (x.At(i, f) - x.At(j, f))
				}
				mean += d
			}
		}
	}
	mean /= float64(count)
	if len(nb.Pairs) != count || learnertest.RelDiff(nb.Scale, mean) > 1e-12 {
		t.Fatalf("%d pairs with mean distance %g, want %d and %g", len(nb.Pairs), nb.Scale, count, mean)
	}
	s := 0.0
	for e, p := range nb.Pairs {
		if l.At(p.I, p.J) == 0 {
			t.Fatalf("pair %v is not a kNN pair", p)
		}
		s += nb.D[e]
	}
	if math.Abs(s/float64(count)-1) > 1e-12 {
		t.Fatal("D does not have mean 1")
	}
	same := mat.NewDense(4, 2, []float64{1, 1, 1, 1, 1, 1, 1, 1})
	if _, err := NewNeighborhood(kernelmath.Linear(same), 2); !errors.Is(err, learners.ErrInput) {
		t.Fatalf("coincident points: err = %v, want ErrInput", err)
	}
}

// Embed of the linear kernel of 2-D points is the centred points up to a
// rotation: the coordinates reproduce the centred Gram matrix exactly, in
// decreasing order of variance, each column's largest entry positive.
func TestEmbed(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	x := mat.NewDense(12, 2, nil)
	for i := 0; i < 12; i++ {
		x.Set(i, 0, 3*r.NormFloat64())
		x.Set(i, 1, r.NormFloat64())
	}
	k := kernelmath.Linear(x)
	emb, err := Embed(k, 2)
	if err != nil {
		t.Fatal(err)
	}
	var gram mat.Dense
	gram.Mul(emb, emb.T())
	if !mat.EqualApprox(&gram, kernelmath.Center(k), 1e-10) {
		t.Fatal("the embedding does not reproduce the centred kernel")
	}
	v0, v1 := mat.Norm(emb.ColView(0), 2), mat.Norm(emb.ColView(1), 2)
	if v0 < v1 {
		t.Fatalf("column norms %g < %g: not in decreasing order", v0, v1)
	}
	for c := 0; c < 2; c++ {
		big := 0.0
		for i := 0; i < 12; i++ {
			if v := emb.At(i, c); math.Abs(v) > math.Abs(big) {
				big = v
			}
		}
		if big < 0 {
			t.Fatalf("column %d: largest entry %g is negative", c, big)
		}
	}
}

// The square-loss distance dual of CMVU and MVE, certified independently:
// the primal value of the returned kernel and the dual value of the
// returned multipliers are recomputed densely (gonum's EigenSym for
// ||A_+||_F), and the gap between them closes.
func TestDistanceDualCertificate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 30
	x := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < 3; j++ {
			x.Set(i, j, r.NormFloat64()*float64(3-j))
		}
	}
	nb, err := NewNeighborhood(kernelmath.Linear(x), 4)
	if err != nil {
		t.Fatal(err)
	}
	// A0 = f f^T for a fixed centred direction f (a rank-one "label kernel").
	fv := mat.NewDense(n, 1, nil)
	mean := 0.0
	for i := 0; i < n; i++ {
		mean += math.Sin(float64(i)) / float64(n)
	}
	for i := 0; i < n; i++ {
		fv.Set(i, 0, math.Sin(float64(i))-mean)
	}
	for _, solver := range []Eigensolver{Dense, Lanczos} {
		pr := &Problem{Base: LowRank(fv, 1), Pairs: nb.Pairs, Kind: Distance, B: nb.Budget(1), P: 2, Solver: solver, Seed: 3}
		d := &DistanceDual{D: nb.D, C: 2}
		res, err := Solve(context.Background(), pr, d, make([]float64, len(nb.D)), Options{MaxIter: 1000, Tol: 1e-8, QuasiNewton: true})
		if err != nil {
			t.Fatal(err)
		}
		k := res.K.Kernel(n)
		a0 := mat.NewSymDense(n, nil)
		a0.SymOuterK(1, fv)
		pRef := -kernelmath.Frobenius(a0, k)
		for e, p := range nb.Pairs {
			v := nb.D[e] - (k.At(p.I, p.I) + k.At(p.J, p.J) - 2*k.At(p.I, p.J))
			pRef += d.C / 2 * v * v
		}
		a := mat.NewSymDense(n, nil)
		a.CopySym(a0)
		jRef := 0.0
		for e, p := range nb.Pairs {
			al := res.Alpha[e]
			a.SetSym(p.I, p.I, a.At(p.I, p.I)+al)
			a.SetSym(p.J, p.J, a.At(p.J, p.J)+al)
			a.SetSym(p.I, p.J, a.At(p.I, p.J)-al)
			jRef += al*nb.D[e] - al*al/(2*d.C)
		}
		var es mat.EigenSym
		es.Factorize(a, false)
		s := 0.0
		for _, v := range es.Values(nil) {
			s += math.Pow(math.Max(v, 0), 2)
		}
		jRef -= math.Sqrt(pr.B * s)
		t.Logf("%v: %d iterations, primal %.10g (reported %.10g), dual %.10g, gap %.2e", solver, res.Stats.Iterations, pRef, res.Stats.Objective, jRef, (pRef-jRef)/math.Abs(pRef))
		if !res.Stats.Converged || learnertest.RelDiff(pRef, res.Stats.Objective) > 1e-9 || pRef < jRef-1e-9*math.Abs(pRef) || (pRef-jRef)/math.Abs(pRef) > 1e-7 {
			t.Fatalf("%v: certificate fails: primal %.12g, dual %.12g, stats %+v", solver, pRef, jRef, res.Stats)
		}
		if tr := kernelmath.Frobenius(k, k); tr > pr.B*(1+1e-9) {
			t.Fatalf("tr KK = %g > B = %g", tr, pr.B)
		}
		// K is centred: A0 and every T_e annihilate the vector of ones.
		rows := make([]float64, n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				rows[i] += k.At(i, j)
			}
		}
		sort.Float64s(rows)
		if math.Max(-rows[0], rows[n-1]) > 1e-8*mat.Norm(k, 2) {
			t.Fatal("K is not centred")
		}
	}
}

// randomPoints returns n standard normal points in d dimensions.
func randomPoints(n, d int, seed uint64) *mat.Dense {
	r := rand.New(rand.NewPCG(seed, 99))
	x := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			x.Set(i, j, r.NormFloat64())
		}
	}
	return x
}
