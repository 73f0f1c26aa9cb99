package learners

import (
	"context"
	"math"
)

type progressKey struct{}

// WithProgress returns a context under which a fit reports its progress to
// fn: the fraction of its work done, in [0, 1] and never decreasing
// (a retraining job shows it). fn is called from the fitting goroutine.
func WithProgress(ctx context.Context, fn func(fraction float64)) context.Context {
	return context.WithValue(ctx, progressKey{}, &progress{fn: fn})
}

type progress struct {
	fn   func(float64)
	last float64
}

// Progress reports that a fit under ctx has done fraction of its work; it
// does nothing without WithProgress. Out-of-range and backward fractions
// are clamped, so an estimate that wavers still shows as progress.
func Progress(ctx context.Context, fraction float64) {
	p, ok := ctx.Value(progressKey{}).(*progress)
	if !ok || math.IsNaN(fraction) {
		return
	}
	fraction = math.Min(math.Max(fraction, p.last), 1)
	p.last = fraction
	p.fn(fraction)
}

// GapProgress is the progress of an iteration stopped by a relative gap:
// the fraction of the way from the first gap to tol on a log scale.
func GapProgress(first, gap, tol float64) float64 {
	if gap <= tol {
		return 1
	}
	if first <= tol || gap >= first {
		return 0
	}
	return math.Log(first/gap) / math.Log(first/tol)
}
