package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// source computes the candidates' similarity matrix for one strategy.
type source struct {
	visual  bool   // needs visual features
	learner string // the learner fitting the kernel; "" for a fixed kernel
	params  string // the parameters in canonical form (see Plan.Params)
	// compute is nil for raw, which does not re-rank.
	compute func(ctx context.Context, cands []Candidate) (*mat.SymDense, *learners.Stats, error)
}

// parametric are the fixed kernels of Table 6.3 (and histogram intersection),
// with their parameters declared like a learner's so they are validated alike.
var parametric = map[string]struct {
	params []learners.Param
	kernel func(x *mat.Dense, v learners.Values) (*mat.SymDense, error)
}{
	"linear": {nil, func(x *mat.Dense, _ learners.Values) (*mat.SymDense, error) { return learners.Linear(x), nil }},
	"poly": {
		[]learners.Param{
			learners.Int("degree", 2, 1, 10, "polynomial degree d in (c + x.y)^d"),
			learners.Float("c", 1, 0, 1e6, "offset c in (c + x.y)^d"),
		},
		func(x *mat.Dense, v learners.Values) (*mat.SymDense, error) {
			return learners.Polynomial(x, v.Int("degree"), v.Float("c")), nil
		},
	},
	"rbf": {
		[]learners.Param{learners.Positive("scale", 1, "sigma in exp(-||x-y||^2/sigma) as a multiple of the mean squared distance among the candidates")},
		func(x *mat.Dense, v learners.Values) (*mat.SymDense, error) {
			d := learners.SqDistances(x)
			sigma := v.Float("scale") * learners.MeanOffDiagonal(d)
			if sigma == 0 {
				sigma = 1 // all candidates identical: every affinity is 1
			}
			return learners.RBF(x, sigma), nil
		},
	},
	"intersection": {nil, func(x *mat.Dense, _ learners.Values) (*mat.SymDense, error) {
		return learners.HistogramIntersection(nonNegative(x))
	}},
}

// kernelFor resolves a strategy name and its parameters.
func kernelFor(strategy string, params json.RawMessage) (*source, error) {
	switch strategy {
	case "raw", "text":
		v, err := parseParams(learners.Spec{Name: strategy}, params)
		if err != nil {
			return nil, err
		}
		src := &source{params: canonical(v)}
		if strategy == "text" {
			src.compute = func(_ context.Context, cands []Candidate) (*mat.SymDense, *learners.Stats, error) {
				return TextKernel(cands), nil, nil
			}
		}
		return src, nil
	}
	if p, ok := parametric[strategy]; ok {
		v, err := parseParams(learners.Spec{Name: strategy, Params: p.params}, params)
		if err != nil {
			return nil, err
		}
		return &source{visual: true, params: canonical(v), compute: func(_ context.Context, cands []Candidate) (*mat.SymDense, *learners.Stats, error) {
			x, err := Visual(cands)
			if err != nil {
				return nil, nil, err
			}
			k, err := p.kernel(x, v)
			return k, nil, err
		}}, nil
	}
	name := strategy
	if name == "npk" {
		name = "hsicnpk"
	}
	l, spec, err := learners.New(name, params)
	if errors.Is(err, learners.ErrUnknownLearner) {
		return nil, optErr("unknown re-ranker %q: use a strategy (%s) or a learner that can re-rank a search (%s)",
			strategy, strings.Join(Strategies(), ", "), strings.Join(rerankers(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	if a := LearnerApplicability(spec, true); !a.Rerank {
		return nil, optErr("learner %s cannot re-rank a search: %s", name, a.Reason)
	}
	v, err := parseParams(spec, params) // valid: New accepted them
	if err != nil {
		return nil, err
	}
	return &source{visual: true, learner: name, params: canonical(v), compute: func(ctx context.Context, cands []Candidate) (*mat.SymDense, *learners.Stats, error) {
		x, err := Visual(cands)
		if err != nil {
			return nil, nil, err
		}
		text := TextKernel(cands)
		in := &learners.Input{Features: x, Target: text}
		if spec.Needs&learners.NeedKernels != 0 {
			// Base kernels only for the learners that combine them.
			in.Kernels = []*mat.SymDense{learners.Linear(x), text}
		}
		out, err := l.Fit(ctx, in)
		if errors.Is(err, learners.ErrNotConverged) && out != nil && out.Kernel != nil {
			// The best kernel reached, served knowingly: Stats.Converged
			// is false and Info.Warning says so.
			return out.Kernel, &out.Stats, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("learner %s: %w", name, err)
		}
		return out.Kernel, &out.Stats, nil
	}}, nil
}

func parseParams(spec learners.Spec, params json.RawMessage) (learners.Values, error) {
	v, err := learners.ParseParams(spec, params)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	return v, nil
}

// canonical is the JSON of validated values: every parameter, defaults
// included, keys sorted, so equivalent parameters give one string.
func canonical(v learners.Values) string {
	b, _ := json.Marshal(v) // cannot fail: finite numbers, strings and booleans
	return string(b)
}

// TextKernel returns the linear kernel of the candidates' tf-idf tag vectors.
// The vectors are first re-coded as sorted (tag number, weight) lists over the
// window's own vocabulary, so each of the n^2/2 dot products is a merge of two
// short lists rather than map look-ups.
func TextKernel(cands []Candidate) *mat.SymDense {
	type entry struct {
		tag int
		w   float64
	}
	vocab := map[string]int{}
	rows := make([][]entry, len(cands))
	var names []string // one candidate's tags, sorted
	for i, c := range cands {
		// Numbered in sorted order, not the map's random one: the order of
		// each sum, and so the kernel's last bits, are the same every time.
		names = slices.AppendSeq(names[:0], maps.Keys(c.Tags))
		slices.Sort(names)
		for _, tag := range names {
			id, ok := vocab[tag]
			if !ok {
				id = len(vocab)
				vocab[tag] = id
			}
			rows[i] = append(rows[i], entry{id, c.Tags[tag]})
		}
		slices.SortFunc(rows[i], func(a, b entry) int { return a.tag - b.tag })
	}
	n := len(cands)
	k := mat.NewSymDense(n, nil)
	raw := k.RawSymmetric()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a, b := rows[i], rows[j]
			dot := 0.0
			for p, q := 0, 0; p < len(a) && q < len(b); {
				switch {
				case a[p].tag < b[q].tag:
					p++
				case a[p].tag > b[q].tag:
					q++
				default:
					dot += a[p].w * b[q].w
					p++
					q++
				}
			}
			raw.Data[i*raw.Stride+j] = dot
		}
	}
	return k
}

// nonNegative returns x with every column that has a negative entry shifted
// by its minimum over the window, so that histogram intersection applies to
// features of any sign (the demo's colour skewness and Gabor moments are
// negative somewhere); non-negative columns, and so non-negative corpora
// such as Corel5k, are unchanged.
func nonNegative(x *mat.Dense) *mat.Dense {
	r, c := x.Dims()
	var out *mat.Dense
	for j := 0; j < c; j++ {
		lo := 0.0
		for i := 0; i < r; i++ {
			lo = min(lo, x.At(i, j))
		}
		if lo == 0 {
			continue
		}
		if out == nil {
			out = mat.DenseCopyOf(x)
		}
		for i := 0; i < r; i++ {
			out.Set(i, j, x.At(i, j)-lo)
		}
	}
	if out == nil {
		return x
	}
	return out
}

// Visual stacks the candidates' visual vectors; they must all have one length.
func Visual(cands []Candidate) (*mat.Dense, error) {
	d := len(cands[0].Visual)
	x := mat.NewDense(len(cands), d, nil)
	for i, c := range cands {
		if len(c.Visual) != d {
			return nil, fmt.Errorf("candidate %s has %d visual features, candidate %s has %d", c.ID, len(c.Visual), cands[0].ID, d)
		}
		x.SetRow(i, c.Visual)
	}
	return x, nil
}
