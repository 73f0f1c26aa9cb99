package hsicnpk

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// Theorem 6.34 by hand on 2 x 2: A = [[1, 2], [2, -2]] has eigenvalues 2 and
// -3, the first with eigenvector (2, 1)/sqrt(5), so A_+ = (2/5) [[4, 2], [2, 1]],
// ||A_+||_F = 2, and with B = 9 K* = (3/2) A_+ = [[2.4, 1.2], [1.2, 0.6]],
// tr(A K*) = 2.4 + 4 * 1.2 - 2 * 0.6 = 6 = sqrt(B) ||A_+||_F.
func TestTheorem634ByHand(t *testing.T) {
	a := mat.NewSymDense(2, []float64{1, 2, 2, -2})
	k := closedForm(a, 9)
	want := []float64{2.4, 1.2, 1.2, 0.6}
	for i, w := range want {
		if got := k.At(i/2, i%2); math.Abs(got-w) > 1e-12 {
			t.Fatalf("K*(%d,%d) = %g, want %g", i/2, i%2, got, w)
		}
	}
	if v := kernelmath.Frobenius(a, k); math.Abs(v-6) > 1e-12 {
		t.Fatalf("tr(A K*) = %g, want 6", v)
	}
	// The package's evaluation gives the same K* for this A: a 2-point
	// problem with M~ = A + alpha A^01 evaluated at alpha.
	alpha := 0.7
	pr := &problem{n: 2, q: 2, pairs: []learners.Pair{{I: 0, J: 1}}, dd: []float64{1}, c: 1, sqrtB: 3,
		m: []float64{1 + alpha, 2 - alpha, 2 - alpha, -2 + alpha}, vals: make([]float64, 2), zbuf: make([]float64, 4)}
	al := []float64{alpha}
	d, err := pr.value(al)
	if err != nil {
		t.Fatal(err)
	}
	// D = -sqrt(B) ||A_+|| - alpha d^2 - alpha^2 / (2C) = -6 - 0.7 - 0.245.
	if math.Abs(d-(-6-0.7-0.245)) > 1e-12 {
		t.Fatalf("D = %.15g, want %.15g", d, -6-0.7-0.245)
	}
	g, tt := make([]float64, 1), make([]float64, 1)
	if _, _, _, err := pr.gradient(al, g, tt); err != nil {
		t.Fatal(err)
	}
	// t = K*_00 + K*_11 - 2 K*_01 = 2.4 + 0.6 - 2.4 = 0.6; g = t - 1 - 0.7.
	if math.Abs(tt[0]-0.6) > 1e-12 || math.Abs(g[0]-(0.6-1-0.7)) > 1e-12 {
		t.Fatalf("t = %g, g = %g, want 0.6, %g", tt[0], g[0], 0.6-1-0.7)
	}
}

// randomFeasible draws a PSD matrix inside the ball tr(KK) <= b.
func randomFeasible(n int, b float64, r *rand.Rand) *mat.SymDense {
	g := mat.NewDense(n, 1+r.IntN(n), nil)
	rr, c := g.Dims()
	for i := 0; i < rr; i++ {
		for j := 0; j < c; j++ {
			g.Set(i, j, r.NormFloat64())
		}
	}
	k := mat.NewSymDense(n, nil)
	k.SymOuterK(1, g)
	s := math.Sqrt(b/kernelmath.Frobenius(k, k)) * math.Pow(r.Float64(), 0.25)
	k.ScaleSym(s, k)
	return k
}

func TestTheorem634Random(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 34))
	for trial := 0; trial < 20; trial++ {
		n := 2 + r.IntN(7)
		a := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				a.SetSym(i, j, r.NormFloat64())
			}
		}
		b := 0.5 + 3*r.Float64()
		k := closedForm(a, b)
		ap, _, _ := kernelmath.ProjectPSD(a)
		best := kernelmath.Frobenius(a, k)
		if want := math.Sqrt(b) * math.Sqrt(kernelmath.Frobenius(ap, ap)); math.Abs(best-want) > 1e-10*math.Max(1, want) {
			t.Fatalf("tr(A K*) = %g, want sqrt(B) ||A_+|| = %g", best, want)
		}
		if nk := kernelmath.Frobenius(k, k); nk > b*(1+1e-12) {
			t.Fatalf("tr(K*K*) = %g > B = %g", nk, b)
		}
		if ok, _ := kernelmath.IsPSD(k, 1e-10); !ok {
			t.Fatal("K* not PSD")
		}
		for s := 0; s < 200; s++ {
			f := randomFeasible(n, b, r)
			if v := kernelmath.Frobenius(a, f); v > best+1e-10 {
				t.Fatalf("feasible K with tr(A K) = %g beats K* (%g)", v, best)
			}
		}
		// Perturbations of K* projected back onto the feasible set do not beat it either.
		for s := 0; s < 50; s++ {
			p := mat.NewSymDense(n, nil)
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					p.SetSym(i, j, k.At(i, j)+0.05*r.NormFloat64())
				}
			}
			f := closedFormProject(p, b)
			if v := kernelmath.Frobenius(a, f); v > best+1e-10 {
				t.Fatalf("perturbed feasible K with tr(A K) = %g beats K* (%g)", v, best)
			}
		}
	}
}

// closedFormProject projects onto {PSD, tr KK <= b}.
func closedFormProject(p *mat.SymDense, b float64) *mat.SymDense {
	k, _, _ := kernelmath.ProjectPSD(p)
	if nrm := math.Sqrt(kernelmath.Frobenius(k, k)); nrm > math.Sqrt(b) {
		k.ScaleSym(math.Sqrt(b)/nrm, k)
	}
	return k
}

// The package's evaluation of D, of K(alpha) and of the dual gradient at
// random alpha agrees with the dense reference, for full and low rank, and the
// gradient agrees with finite differences of D.
func TestEvaluationMatchesDense(t *testing.T) {
	x, kt := randomProblem(30, 4, 6, 3)
	for _, rank := range []int{0, 8} {
		cfg := config{k: 4, c: 5, budget: 2, rank: rank, tol: 1e-4, maxIter: 10}
		pr, err := setup(&learners.Input{Features: x, Target: kt}, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ref := newReference(x, kt, 4, false, 5, 2)
		if len(ref.pairs) != len(pr.pairs) || math.Abs(ref.b-pr.sqrtB*pr.sqrtB) > 1e-9*ref.b {
			t.Fatalf("setup differs from the reference: %d vs %d pairs, B %g vs %g", len(pr.pairs), len(ref.pairs), pr.sqrtB*pr.sqrtB, ref.b)
		}
		r := rand.New(rand.NewPCG(1, uint64(rank)))
		ne := len(pr.pairs)
		for trial := 0; trial < 5; trial++ {
			alpha := make([]float64, ne)
			for e := range alpha {
				if r.Float64() < 0.5 {
					alpha[e] = 0.2 * r.Float64()
				}
			}
			d, err := pr.value(alpha)
			if err != nil {
				t.Fatal(err)
			}
			g, tt := make([]float64, ne), make([]float64, ne)
			if _, _, _, err := pr.gradient(alpha, g, tt); err != nil {
				t.Fatal(err)
			}
			var c candidate
			pr.saveCandidate(&c, 1)
			k := pr.kernel(&c)
			var want *mat.SymDense
			if rank == 0 {
				want = closedForm(ref.aMatrix(alpha), ref.b)
				if dd := ref.dual(alpha, nil); math.Abs(d-dd) > 1e-10*math.Max(1, math.Abs(dd)) {
					t.Fatalf("D = %.15g, reference %.15g", d, dd)
				}
			} else {
				// Low rank: K = V P V^T with P from Theorem 6.34 on V^T A V.
				var av, vav mat.Dense
				av.Mul(ref.aMatrix(alpha), pr.v)
				vav.Mul(pr.v.T(), &av)
				small := mat.NewSymDense(rank, nil)
				for i := 0; i < rank; i++ {
					for j := i; j < rank; j++ {
						small.SetSym(i, j, (vav.At(i, j)+vav.At(j, i))/2)
					}
				}
				p := closedForm(small, ref.b)
				var vp, full mat.Dense
				vp.Mul(pr.v, p)
				full.Mul(&vp, pr.v.T())
				want = mat.NewSymDense(ref.n, nil)
				for i := 0; i < ref.n; i++ {
					for j := i; j < ref.n; j++ {
						want.SetSym(i, j, full.At(i, j))
					}
				}
			}
			if diff := frobDiff(k, want); diff > 1e-9*math.Sqrt(ref.b) {
				t.Fatalf("rank %d: K(alpha) differs from Theorem 6.34 by %g", rank, diff)
			}
			for e := range alpha {
				if math.Abs(tt[e]-ref.dist(want, e)) > 1e-9 {
					t.Fatalf("pair distance %d: %g, reference %g", e, tt[e], ref.dist(want, e))
				}
			}
			// Finite differences on a few coordinates with alpha > 0.
			checked := 0
			for e := 0; e < ne && checked < 4; e++ {
				if alpha[e] == 0 {
					continue
				}
				checked++
				h := 1e-6
				alpha[e] += h
				dp, _ := pr.value(alpha)
				alpha[e] -= 2 * h
				dm, _ := pr.value(alpha)
				alpha[e] += h
				if fd := (dp - dm) / (2 * h); math.Abs(fd-g[e]) > 1e-5*math.Max(1, math.Abs(g[e])) {
					t.Fatalf("rank %d: gradient %d = %g, finite difference %g", rank, e, g[e], fd)
				}
			}
		}
	}
}
