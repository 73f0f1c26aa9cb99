package npkl

import (
	"math"
	"testing"

	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
)

// The closed form of Prop. 3.25 against Hoelder: sum lambda^p = B, h =
// lambda.sigma, and no random feasible spectrum does better.
func TestClosedForm(t *testing.T) {
	sig := []float64{3, 0.5, 2, 1e-3, 3}
	for _, p := range []float64{1, 1.2, 2, 3.5} {
		lam, h := ClosedForm(sig, 2.5, p)
		norm, dot := 0.0, 0.0
		for i, l := range lam {
			norm += math.Pow(l, p)
			dot += l * sig[i]
		}
		if learnertest.RelDiff(norm, 2.5) > 1e-12 || learnertest.RelDiff(dot, h) > 1e-12 {
			t.Fatalf("p %g: sum lambda^p = %g (want 2.5), lambda.sigma = %g, h = %g", p, norm, dot, h)
		}
		for trial := 0; trial < 2000; trial++ {
			x := make([]float64, len(sig))
			s := 0.0
			for i := range x {
				x[i] = math.Abs(math.Sin(float64(trial*7+i*3) + p))
				s += math.Pow(x[i], p)
			}
			v := 0.0
			for i := range x {
				v += x[i] * math.Pow(2.5/s, 1/p) * sig[i]
			}
			if v > h*(1+1e-12) {
				t.Fatalf("p %g: a feasible spectrum reaches %g > h = %g", p, v, h)
			}
		}
	}
	if lam, _ := ClosedForm([]float64{3, 1, 3}, 2, 1); lam[0] != 1 || lam[1] != 0 || lam[2] != 1 {
		t.Fatalf("p = 1 with a tie: %v, want B split over the two top eigenvalues", lam)
	}
	if lam, h := ClosedForm(nil, 2, 2); len(lam) != 0 || h != 0 {
		t.Fatal("no positive eigenvalue must give K = 0")
	}
}
