package twolayer

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
)

// innerProblem is the problem of one fit on an ionosphere split (175
// labelled points of 351, C = 100) with the given number of antecedent
// kernels, and the seeded mu^0.
func innerProblem(b *testing.B, name string, kernels int) (*problem, []float64, *learnertest.MKLSplit) {
	x, y := learnertest.LIBSVMSet(b, "ionosphere_scale")
	s := learnertest.NewMKLSplit(x, y, 0)
	l, _, err := learners.New(name, json.RawMessage(`{"c": 100}`))
	if err != nil {
		b.Fatal(err)
	}
	cfg := l.(*learners.Resolved).Plugin().(*Learner).cfg
	in := &learners.Input{Kernels: s.Kernels[:kernels], Labels: s.Labels, Features: s.Features}
	tasks, ks, err := cfg.svm.Setup(in)
	if err != nil {
		b.Fatal(err)
	}
	p := newProblem(cfg, tasks, ks)
	return p, p.initial(kernels), s
}

// BenchmarkEvalAscent times one trial point of 2LMKL (Protocol 2) on the
// 455 base kernels: K2 = exp(sum_t mu_t K_t) over the labelled points, the
// SVM solve and the gradient (eq. 4.5) over the support vectors.
func BenchmarkEvalAscent(b *testing.B) {
	p, mu, _ := innerProblem(b, Name, 455)
	b.ReportAllocs()
	for b.Loop() {
		pt, err := p.eval(context.Background(), mu, p.bufs[0])
		if err != nil {
			b.Fatal(err)
		}
		p.ascent(pt)
	}
}

// BenchmarkPricing times 2LMKL^Inf's new-kernel subproblem (eq. 4.6, 4.7)
// at the SVM duals of mu^0 on the 13 all-feature kernels.
func BenchmarkPricing(b *testing.B) {
	p, mu, s := innerProblem(b, NameInf, kernelmath.MKLGroupSize)
	pt, err := p.eval(context.Background(), mu, p.bufs[0])
	if err != nil {
		b.Fatal(err)
	}
	pr := newPricing(p, kernelmath.SqDistances(s.Features))
	b.ReportAllocs()
	for b.Loop() {
		pr.solve(pt)
	}
}
