// Package learnertest is the contract test suite every registered learner
// passes: outputs of the promised shape (symmetric PSD kernels, non-negative
// weights, finite embeddings), determinism, cancellation, and clear errors on
// bad input and bad parameters.
package learnertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// Problem builds an input with everything any learner may need: n points in
// three well separated clusters (features), three base kernels (linear, RBF,
// and a noise kernel), a target kernel from the cluster labels, labels with a
// third unlabeled, and must-link / cannot-link pairs.
func Problem(n int, seed uint64) *learners.Input {
	r := rand.New(rand.NewPCG(seed, 17))
	const d = 4
	x := mat.NewDense(n, d, nil)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		c := i % 3
		labels[i] = c
		for f := 0; f < d; f++ {
			center := 0.0
			if f == c {
				center = 3
			}
			x.Set(i, f, center+0.5*r.NormFloat64())
		}
	}
	noise := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		noise.Set(i, 0, r.NormFloat64())
		noise.Set(i, 1, r.NormFloat64())
	}
	target := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if labels[i] == labels[j] {
				target.SetSym(i, j, 1)
			}
		}
	}
	var must, cannot []learners.Pair
	for i := 0; i+3 < n; i += 3 {
		must = append(must, learners.Pair{I: i, J: i + 3})
		cannot = append(cannot, learners.Pair{I: i, J: i + 1})
	}
	observed := append([]int(nil), labels...)
	for i := 2; i < n; i += 3 {
		observed[i] = learners.Unlabeled
	}
	sq := kernelmath.SqDistances(x)
	return &learners.Input{
		Kernels:    []*mat.SymDense{kernelmath.Linear(x), kernelmath.RBF(x, kernelmath.MeanOffDiagonal(sq)), kernelmath.Linear(noise)},
		Features:   x,
		Target:     target,
		Labels:     observed,
		MustLink:   must,
		CannotLink: cannot,
	}
}

// Run runs the contract suite against one registered learner.
func Run(t *testing.T, spec learners.Spec) {
	ctx := context.Background()
	fit := func(t *testing.T, in *learners.Input) (*learners.Output, error) {
		t.Helper()
		l, _, err := learners.New(spec.Name, nil)
		if err != nil {
			t.Fatalf("New with defaults: %v", err)
		}
		return l.Fit(ctx, in)
	}

	// Two sizes: 47 points make clusters of unequal size.
	for _, n := range []int{24, 47} {
		t.Run(fmt.Sprintf("output n=%d", n), func(t *testing.T) {
			in := Problem(n, 1)
			var reports []float64
			pctx := learners.WithProgress(ctx, func(f float64) { reports = append(reports, f) })
			l, _, err := learners.New(spec.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			out, err := l.Fit(pctx, in)
			if err != nil {
				t.Fatalf("Fit: %v", err)
			}
			checkOutput(t, spec, in, out)
			checkProgress(t, reports)
		})
	}

	t.Run("deterministic", func(t *testing.T) {
		a, errA := fit(t, Problem(24, 2))
		b, errB := fit(t, Problem(24, 2))
		if errA != nil || errB != nil {
			t.Fatalf("Fit: %v / %v", errA, errB)
		}
		if !sameOutput(a, b) {
			t.Fatal("two fits on the same input differ")
		}
	})

	if spec.Needs&learners.AcceptImplicit != 0 {
		t.Run("implicit kernels", func(t *testing.T) {
			dense, err := fit(t, Problem(24, 7))
			if err != nil {
				t.Fatal(err)
			}
			in := Problem(24, 7)
			in.Matrices, in.Kernels = in.BaseKernels(), nil
			in.TargetMatrix, in.Target = in.TargetKernel(), nil
			implicit, err := fit(t, in)
			if err != nil {
				t.Fatal(err)
			}
			if !closeOutput(dense, implicit, 1e-9) {
				t.Fatal("the same kernels given as implicit matrices give another output")
			}
		})
	}

	if spec.Needs&learners.AcceptLinkTarget != 0 {
		t.Run("link target", func(t *testing.T) {
			in := Problem(47, 8)
			in.Labels = nil // the target (same cluster) stands for them
			out, err := fit(t, in)
			if err != nil {
				t.Fatal(err)
			}
			checkOutput(t, spec, in, out)
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		l, _, err := learners.New(spec.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := l.Fit(cctx, Problem(24, 3)); !errors.Is(err, context.Canceled) {
			t.Fatalf("Fit with a cancelled context returned %v, want context.Canceled", err)
		}
	})

	// A fit that iterates checks its context in every iteration, not only
	// at the start, and stops when a check finds it cancelled: the
	// context here is cancelled at the middle one of the checks a whole
	// fit makes (counted, so the test is deterministic).
	t.Run("cancelled mid-fit", func(t *testing.T) {
		l, _, err := learners.New(spec.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		count := newCountingContext(ctx, -1)
		out, err := l.Fit(count, Problem(47, 4))
		if err != nil && !errors.Is(err, learners.ErrNotConverged) {
			t.Fatal(err)
		}
		checks := count.checks.Load()
		if it := int64(out.Stats.Iterations); it > 1 && checks < it {
			t.Fatalf("%d iterations with %d context checks: want one an iteration at least", it, checks)
		}
		if checks < 2 {
			return // one pass of bounded work: the check at its start suffices
		}
		mid := newCountingContext(ctx, checks/2+1)
		if _, err := l.Fit(mid, Problem(47, 4)); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled at check %d of %d: Fit returned %v, want context.Canceled", checks/2+1, checks, err)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for name, in := range badInputs(spec.Needs) {
			_, err := fit(t, in)
			if !errors.Is(err, learners.ErrInput) {
				t.Errorf("%s: got %v, want an error wrapping learners.ErrInput", name, err)
			}
		}
	})

	t.Run("bad parameters", func(t *testing.T) {
		bad := map[string]string{"unknown": `{"no_such_parameter": 1}`, "not an object": `[1]`}
		for _, p := range spec.Params {
			if p.Min != nil {
				v := *p.Min - 1
				if p.MinExclusive {
					v = *p.Min
				}
				bad[p.Name+" below min"] = fmt.Sprintf(`{%q: %g}`, p.Name, v)
			}
			if p.Max != nil {
				bad[p.Name+" above max"] = fmt.Sprintf(`{%q: %g}`, p.Name, *p.Max+1)
			}
			switch p.Type {
			case learners.TypeString:
				if len(p.Enum) > 0 {
					bad[p.Name+" not in enum"] = fmt.Sprintf(`{%q: "no-such-value"}`, p.Name)
				}
				bad[p.Name+" of the wrong type"] = fmt.Sprintf(`{%q: 1}`, p.Name)
			case learners.TypeFloat, learners.TypeInt:
				bad[p.Name+" of the wrong type"] = fmt.Sprintf(`{%q: "1"}`, p.Name)
				bad[p.Name+" beyond float64"] = fmt.Sprintf(`{%q: 1e999}`, p.Name)
			}
		}
		for name, raw := range bad {
			_, _, err := learners.New(spec.Name, json.RawMessage(raw))
			var pe *learners.ParamError
			if !errors.As(err, &pe) {
				t.Errorf("%s (%s): got %v, want a ParamError", name, raw, err)
			}
		}
	})
}

func checkOutput(t *testing.T, spec learners.Spec, in *learners.Input, out *learners.Output) {
	n := in.N()
	switch spec.Kind {
	case learners.KindKernel, learners.KindWeights:
		if out.Kernel == nil {
			t.Fatal("no kernel in the output")
		}
		checkKernel(t, out.Kernel, n)
	}
	switch spec.Kind {
	case learners.KindWeights:
		if len(out.Weights) != len(in.Kernels) {
			t.Fatalf("%d weights for %d kernels", len(out.Weights), len(in.Kernels))
		}
		sum := 0.0
		for i, w := range out.Weights {
			if !(w >= 0) || math.IsInf(w, 0) {
				t.Errorf("weight %d = %v, want finite and >= 0", i, w)
			}
			sum += w
		}
		if spec.Simplex && math.Abs(sum-1) > 1e-9 {
			t.Errorf("weights %v sum to %v; the learner says they lie on the simplex", out.Weights, sum)
		}
	case learners.KindScorer:
		checkScorer(t, in, out.Scorer)
	case learners.KindOrder:
		if out.Kernel != nil || out.Weights != nil || out.Embedding != nil || out.Scorer != nil {
			t.Fatal("an order plug-in outputs nothing, got an output")
		}
	case learners.KindEmbedding:
		if out.Embedding == nil {
			t.Fatal("no embedding in the output")
		}
		r, _ := out.Embedding.Dims()
		if r != n {
			t.Fatalf("embedding has %d rows, want %d", r, n)
		}
		for _, v := range out.Embedding.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("embedding holds %v", v)
			}
		}
	}
}

// checkScorer checks a pair scorer: finite scores, and the must-link pairs
// (same cluster) scored above the cannot-link ones (different clusters) on
// average, as any scorer fitted on them must.
func checkScorer(t *testing.T, in *learners.Input, sc learners.PairScorer) {
	t.Helper()
	if sc == nil {
		t.Fatal("no scorer in the output")
	}
	n := in.N()
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if v := sc.Score(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("score(%d, %d) = %v", i, j, v)
			}
		}
	}
	mean := func(ps []learners.Pair) float64 {
		sum := 0.0
		for _, p := range ps {
			sum += sc.Score(p.I, p.J)
		}
		return sum / float64(len(ps))
	}
	if m, c := mean(in.MustLink), mean(in.CannotLink); !(m > c) {
		t.Fatalf("must-link pairs score %v on average, cannot-link pairs %v: want the first higher", m, c)
	}
}

// checkProgress checks what a fit reported through learners.WithProgress
// (nothing is allowed): fractions in [0, 1], never decreasing.
func checkProgress(t *testing.T, reports []float64) {
	t.Helper()
	for i, f := range reports {
		if !(f >= 0 && f <= 1) || i > 0 && f < reports[i-1] {
			t.Fatalf("progress reports %v: want fractions in [0, 1], never decreasing", reports)
		}
	}
}

// countingContext counts the checks of its cancellation (Err and Done)
// and is cancelled from check number at on (never when at < 1).
type countingContext struct {
	context.Context
	at     int64
	checks atomic.Int64
	once   sync.Once
	done   chan struct{}
}

func newCountingContext(parent context.Context, at int64) *countingContext {
	return &countingContext{Context: parent, at: at, done: make(chan struct{})}
}

func (c *countingContext) check() bool {
	if n := c.checks.Add(1); c.at >= 1 && n >= c.at {
		c.once.Do(func() { close(c.done) })
	}
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *countingContext) Done() <-chan struct{} {
	c.check()
	return c.done
}

func (c *countingContext) Err() error {
	if c.check() {
		return context.Canceled
	}
	return nil
}

func checkKernel(t *testing.T, k *mat.SymDense, n int) {
	t.Helper()
	if k.SymmetricDim() != n {
		t.Fatalf("kernel is %d x %d, want %d x %d", k.SymmetricDim(), k.SymmetricDim(), n, n)
	}
	for _, v := range k.RawSymmetric().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("kernel holds %v", v)
		}
	}
	psd, err := kernelmath.IsPSD(k, 1e-8)
	if err != nil {
		t.Fatal(err)
	}
	if !psd {
		lo, _ := kernelmath.MinEigenvalue(k)
		t.Fatalf("kernel is not PSD: smallest eigenvalue %g", lo)
	}
}

func sameOutput(a, b *learners.Output) bool { return closeOutput(a, b, 0) }

// closeOutput compares two outputs entry by entry, relative to tol.
func closeOutput(a, b *learners.Output, tol float64) bool {
	eq := func(x, y []float64) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Abs(x[i]-y[i]) > tol*math.Max(1, math.Abs(x[i])) {
				return false
			}
		}
		return true
	}
	var ka, kb, ea, eb, sa, sb []float64
	if a.Scorer != nil && b.Scorer != nil {
		// Scores of the pairs among the first points (every pair of a
		// problem of the suite's sizes).
		for i := 0; i < 24; i++ {
			for j := 0; j < 24; j++ {
				sa, sb = append(sa, a.Scorer.Score(i, j)), append(sb, b.Scorer.Score(i, j))
			}
		}
	}
	if a.Kernel != nil && b.Kernel != nil {
		ka, kb = a.Kernel.RawSymmetric().Data, b.Kernel.RawSymmetric().Data
	}
	if a.Embedding != nil && b.Embedding != nil {
		ea, eb = a.Embedding.RawMatrix().Data, b.Embedding.RawMatrix().Data
	}
	return (a.Kernel == nil) == (b.Kernel == nil) && (a.Embedding == nil) == (b.Embedding == nil) &&
		(a.Scorer == nil) == (b.Scorer == nil) && eq(ka, kb) && eq(ea, eb) && eq(sa, sb) && eq(a.Weights, b.Weights)
}

// badInputs returns inputs a learner with these needs must reject with ErrInput.
func badInputs(needs learners.Needs) map[string]*learners.Input {
	bad := map[string]*learners.Input{"empty": {}}
	nanAt := func(in *learners.Input) *learners.Input {
		switch {
		case needs&learners.NeedKernels != 0:
			in.Kernels[0].SetSym(0, 1, math.NaN())
		case needs&learners.NeedFeatures != 0:
			in.Features.Set(0, 0, math.NaN())
		case needs&learners.NeedTarget != 0:
			in.Target.SetSym(0, 1, math.Inf(1))
		}
		return in
	}
	if needs&(learners.NeedKernels|learners.NeedFeatures|learners.NeedTarget|learners.NeedLabels) == 0 {
		return bad // no input to get wrong but none at all (raw)
	}
	bad["NaN"] = nanAt(Problem(24, 4))
	mismatch := Problem(24, 5)
	small := Problem(12, 5)
	switch {
	case needs&learners.NeedKernels != 0:
		mismatch.Kernels = append(mismatch.Kernels, small.Kernels[0])
	case needs&learners.NeedTarget != 0:
		mismatch.Target = small.Target
	case needs&learners.NeedLabels != 0:
		mismatch.Labels = small.Labels
	case needs&learners.NeedFeatures != 0:
		mismatch.Features = small.Features
	}
	bad["mismatched sizes"] = mismatch
	for _, need := range []learners.Needs{learners.NeedKernels, learners.NeedFeatures, learners.NeedTarget, learners.NeedLabels, learners.NeedPairs} {
		if needs&need == 0 {
			continue
		}
		in := Problem(24, 6)
		switch need {
		case learners.NeedKernels:
			in.Kernels = nil
		case learners.NeedFeatures:
			in.Features = nil
		case learners.NeedTarget:
			in.Target = nil
		case learners.NeedLabels:
			in.Labels = nil
			if needs&learners.AcceptLinkTarget != 0 {
				in.Target = nil // it would stand for the labels
			}
		case learners.NeedPairs:
			in.MustLink, in.CannotLink = nil, nil
		}
		bad["missing "+need.Names()[0]] = in
	}
	return bad
}
