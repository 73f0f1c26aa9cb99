package twolayer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// problem is one fit: the SVM tasks, the antecedent-layer kernels (given,
// then generated) and two buffers for K2 over the labelled points, the
// current point's and a trial's.
type problem struct {
	cfg   config
	tasks *kernelmath.SVMTasks
	ks    *kernelmath.KernelSet  // over all points, for the output
	lab   *kernelmath.Restricted // the same over the labelled points
	bufs  [2]*mat.SymDense
	rng   *rand.Rand
	trace func(step)
}

func newProblem(cfg config, tasks *kernelmath.SVMTasks, ks *kernelmath.KernelSet) *problem {
	nl := len(tasks.Points)
	return &problem{cfg: cfg, tasks: tasks, ks: ks, lab: ks.Restrict(tasks.Points),
		bufs: [2]*mat.SymDense{mat.NewSymDense(nl, nil), mat.NewSymDense(nl, nil)},
		rng:  rand.New(rand.NewPCG(cfg.seed, 0x2a3b))}
}

// point is mu with F(mu), the SVM duals at mu and K2(mu) over the
// labelled points.
type point struct {
	mu    []float64
	f     float64
	duals *kernelmath.SVMDuals
	k2    *mat.SymDense
}

// errOverflow reports an exponent too large for float64.
var errOverflow = errors.New("the two-layer kernel overflows float64")

// maxExponent is the largest x with exp(x) finite.
const maxExponent = 709

// FitResult is Fit with the generated Gaussians of twolayer-inf. As for
// Fit, a fit that stops at an iteration cap returns its result with an
// error wrapping learners.ErrNotConverged.
func (l *Learner) FitResult(ctx context.Context, in *learners.Input) (*Result, error) {
	tasks, ks, err := l.cfg.svm.Setup(in)
	if err != nil {
		return nil, err
	}
	p := newProblem(l.cfg, tasks, ks)
	p.trace = l.trace
	var (
		pt    *point
		iters int
		ok    bool
		gens  []Generated
		name  = Name
	)
	if l.cfg.inf {
		name = NameInf
		pt, gens, iters, ok, err = p.columnGeneration(ctx, in.Features)
	} else {
		pt, iters, ok, err = p.descend(ctx, p.initial(len(in.Kernels)), 0)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	k := mat.NewSymDense(in.N(), nil)
	ks.Combine(k, pt.mu)
	if err := expInPlace(k); err != nil {
		return nil, fmt.Errorf("%s: the learned kernel on all points: %w", name, err)
	}
	m := len(in.Kernels)
	for g := range gens {
		gens[g].Weight = pt.mu[m+g]
	}
	r := &Result{
		Output: &learners.Output{Kernel: k, Weights: slices.Clone(pt.mu[:m]),
			Stats: learners.Stats{Iterations: iters, Objective: pt.f, Converged: ok, Gap: p.stationarity(pt)}},
		Generated: gens,
	}
	if !ok {
		return r, fmt.Errorf("%s: %w after %d gradient steps (F = %.6g)", name, learners.ErrNotConverged, iters, pt.f)
	}
	return r, nil
}

// initial returns mu^0 ~ U(0,1)^m from the fit's seeded generator.
func (p *problem) initial(m int) []float64 {
	mu := make([]float64, m)
	for t := range mu {
		mu[t] = p.rng.Float64()
	}
	return mu
}

// expInPlace replaces every entry of k by its exponential.
func expInPlace(k *mat.SymDense) error {
	raw := k.RawSymmetric()
	for a := range raw.N {
		row := raw.Data[a*raw.Stride+a : a*raw.Stride+raw.N]
		for b, v := range row {
			if v > maxExponent {
				return fmt.Errorf("%w: an exponent is %.4g (the weights or the kernels are too large; normalise the kernels)", errOverflow, v)
			}
			row[b] = math.Exp(v)
		}
	}
	return nil
}

// eval computes K2(mu) into k2 and F(mu) with the SVM duals.
func (p *problem) eval(ctx context.Context, mu []float64, k2 *mat.SymDense) (*point, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.lab.Combine(k2, mu)
	if err := expInPlace(k2); err != nil {
		return nil, err
	}
	d, err := p.tasks.Train(ctx, k2, p.cfg.svm.SVM)
	if err != nil {
		return nil, err
	}
	return &point{mu: mu, f: d.Value + floats.Sum(mu), duals: d, k2: k2}, nil
}

// ascent returns g = -grad F(mu) (eq. 4.5): g_t = 1/2 sum_c b_c'(K2 o K_t) b_c - 1,
// over the support vectors only.
func (p *problem) ascent(pt *point) []float64 {
	g := p.lab.Contract(pt.duals.Outer(pt.k2), pt.duals.Support)
	for t := range g {
		g[t] = 0.5*g[t] - 1
	}
	return g
}

// stationarity returns |mu - max(mu + g, 0)|_inf at pt, the projected
// gradient step of unit length: 0 exactly at a first-order stationary
// point of F over mu >= 0.
func (p *problem) stationarity(pt *point) float64 {
	r := 0.0
	for t, g := range p.ascent(pt) {
		r = max(r, math.Abs(max(pt.mu[t]+g, 0)-pt.mu[t]))
	}
	return r
}

// descend is Protocol 2 from mu: projected gradient steps with Armijo
// backtracking on F until the stopping rule holds (converged) or max_iter
// steps. It returns the last point and the number of accepted steps.
func (p *problem) descend(ctx context.Context, mu []float64, round int) (*point, int, bool, error) {
	cur, err := p.eval(ctx, mu, p.bufs[0])
	if err != nil {
		return nil, 0, false, fmt.Errorf("at the initial weights: %w", err)
	}
	free := p.bufs[1]
	trial := make([]float64, len(mu))
	eta := p.cfg.step
	var prevMu, prevG []float64
	for it := 1; ; it++ {
		g := p.ascent(cur)
		// Deviation (the spec suggests a first trial of 1 every time): the
		// first trial step is the Barzilai-Borwein step s's / s'y.
		if prevMu != nil {
			ss, sy := 0.0, 0.0
			for t := range g {
				d := cur.mu[t] - prevMu[t]
				ss += d * d
				sy += d * (prevG[t] - g[t])
			}
			if sy > 0 {
				eta = ss / sy
			}
		}
		prevMu, prevG = cur.mu, g
		var next *point
		stepNorm := 0.0
		for s := 0; s <= p.cfg.backtracks; s, eta = s+1, eta/2 {
			dec := 0.0 // g'(mu+ - mu) >= 0
			stepNorm = 0
			for t, v := range cur.mu {
				trial[t] = max(v+eta*g[t], 0)
				d := trial[t] - v
				dec += g[t] * d
				stepNorm = max(stepNorm, math.Abs(d))
			}
			if stepNorm == 0 {
				break // the projected gradient is 0: stationary
			}
			cand, err := p.eval(ctx, trial, free)
			switch {
			case errors.Is(err, errOverflow):
				continue // too long a step
			case err != nil:
				return nil, 0, false, err
			}
			if cand.f <= cur.f-p.cfg.armijo*dec {
				next = cand
				break
			}
		}
		if next == nil {
			return cur, it - 1, stepNorm <= p.cfg.muTol, nil
		}
		next.mu = append([]float64(nil), trial...)
		prev := cur
		cur, free = next, prev.k2
		if p.trace != nil {
			p.trace(step{round: round, mu: append([]float64(nil), cur.mu...), objective: cur.f})
		}
		if math.Abs(prev.f-cur.f) <= p.cfg.tol*math.Abs(prev.f) || stepNorm <= p.cfg.muTol {
			return cur, it, true, nil
		}
		if it == p.cfg.maxIter {
			return cur, it, false, nil
		}
	}
}
