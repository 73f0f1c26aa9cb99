package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	// The fixed strategies (raw, text, linear, poly, rbf, intersection)
	// are plug-ins of the registry, as the learners are.
	_ "github.com/kernelrank/kernelrank/learners/fixed"
	"gonum.org/v1/gonum/mat"
)

// PanicError is a panic inside a kernel computation (a learner's bug on some
// input), returned as an error: it costs the one request, never the process.
// Under the cache a kernel is computed in singleflight's goroutine, where
// an unrecovered panic would kill the server.
type PanicError struct {
	Strategy string
	Value    any
	Stack    []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("rerank: %s panicked: %v", e.Strategy, e.Value)
}

// resolve resolves a strategy name (any registered plug-in that can
// re-rank a search, by name or alias) and its parameters, once.
func resolve(strategy string, params json.RawMessage) (*learners.Resolved, error) {
	r, err := learners.Resolve(strategy, params)
	if errors.Is(err, learners.ErrUnknownLearner) {
		return nil, optErr("unknown re-ranker %q: use a strategy (%s) or a learner that can re-rank a search (%s)",
			strategy, strings.Join(Strategies(), ", "), strings.Join(rerankers(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	if a := LearnerApplicability(r.Spec, true); !a.Rerank {
		return nil, optErr("learner %s cannot re-rank a search: %s", r.Spec.Name, a.Reason)
	}
	return r, nil
}

// Kernel computes the kernel of w's ranked candidates (Split's window),
// with the learner's statistics when a learner fitted it (nil for a fixed
// kernel). A panic in the learner is returned as a *PanicError.
func (p *Plan) Kernel(ctx context.Context, w Window) (*mat.SymDense, *learners.Stats, error) {
	return kernel(ctx, p.r, w, p.opt.FitEachCopy)
}

// kernel fits r's kernel of w's ranked candidates, from what a search has
// of them: their visual features, their tag kernel as the target, and (for
// the learners that combine kernels) the linear visual and tag kernels.
func kernel(ctx context.Context, r *learners.Resolved, w Window, eachCopy bool) (k *mat.SymDense, stats *learners.Stats, err error) {
	defer func() {
		if v := recover(); v != nil {
			k, stats, err = nil, nil, &PanicError{Strategy: r.Spec.Name, Value: v, Stack: debug.Stack()}
		}
	}()
	cands := w.Ranked
	needs := r.Needs
	in := &learners.Input{}
	// A learner fits one point a cluster of near-duplicates (duplicates.go).
	var cl clusters
	dup := false
	if r.Learned() && !eachCopy {
		d := w.clusters()
		cl, dup = d.cl, d.some && len(d.cl.members) >= minRerank
	}
	fitOn := cands
	if dup {
		fitOn = cl.firsts(cands)
	}
	var x *mat.Dense
	var text *mat.SymDense
	// The inputs live on kernelmath.Scratch storage, handed back when
	// the fit is done (a learner does not keep its input), unless the
	// kernel returned is one of them.
	defer func() {
		if x != nil {
			kernelmath.Release(x.RawMatrix().Data)
		}
		if text != nil && !sharesStorage(k, text) {
			kernelmath.ReleaseSym(text)
		}
	}()
	if needs&(learners.NeedFeatures|learners.NeedKernels) != 0 {
		if x, err = Visual(fitOn); err != nil {
			return nil, nil, err
		}
	}
	if needs&learners.NeedFeatures != 0 {
		in.Features = x
	}
	if needs&(learners.NeedTarget|learners.NeedKernels) != 0 {
		text = TextKernel(cands)
		if dup {
			all := text
			text = cl.meanKernel(all, kernelmath.ScratchSym(len(cl.members)))
			kernelmath.ReleaseSym(all)
		}
	}
	if needs&learners.NeedTarget != 0 {
		in.Target = text
	}
	if needs&learners.NeedKernels != 0 {
		// Base kernels only for the learners that combine them.
		in.Kernels = []*mat.SymDense{kernelmath.Linear(x), text}
	}
	out, err := r.Fit(ctx, in)
	if dup && out != nil && out.Kernel != nil {
		out.Kernel = cl.expand(out.Kernel)
	}
	if errors.Is(err, learners.ErrNotConverged) && out != nil && out.Kernel != nil {
		// The best kernel reached, served knowingly: Stats.Converged
		// is false and Plan.Warning says so.
		return out.Kernel, &out.Stats, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("learner %s: %w", r.Spec.Name, err)
	}
	if !r.Learned() {
		return out.Kernel, nil, nil // nothing learned: no statistics to report
	}
	return out.Kernel, &out.Stats, nil
}

// sharesStorage reports whether k (possibly nil or empty) starts on the
// storage of t.
func sharesStorage(k, t *mat.SymDense) bool {
	if k == nil || len(k.RawSymmetric().Data) == 0 {
		return false
	}
	return &k.RawSymmetric().Data[0] == &t.RawSymmetric().Data[0]
}

// TextKernel returns the linear kernel of the candidates' tf-idf tag vectors,
// on kernelmath.Scratch storage (kernelmath.ReleaseSym hands it back). The
// vectors are first re-coded as compressed rows over the window's own
// vocabulary, whose Gram matrix kernelmath.SparseGramInto forms from the
// products of the tags two candidates share.
func TextKernel(cands []Candidate) *mat.SymDense {
	n := len(cands)
	vocab := map[string]int{}
	ptr := make([]int, n+1)
	for i, c := range cands {
		ptr[i+1] = ptr[i] + len(c.Tags)
	}
	idx := make([]int, ptr[n])
	val := make([]float64, ptr[n])
	type entry struct {
		id int
		w  float64
	}
	var names []string // one candidate's tags, sorted
	var row []entry    // and as (tag number, weight), by number
	for i, c := range cands {
		// Numbered in sorted order, not the map's random one: the order of
		// each sum, and so the kernel's last bits, are the same every time.
		names = slices.AppendSeq(names[:0], maps.Keys(c.Tags))
		slices.Sort(names)
		row = row[:0]
		for _, tag := range names {
			id, ok := vocab[tag]
			if !ok {
				id = len(vocab)
				vocab[tag] = id
			}
			row = append(row, entry{id, c.Tags[tag]})
		}
		slices.SortFunc(row, func(a, b entry) int { return a.id - b.id })
		for p, e := range row {
			idx[ptr[i]+p], val[ptr[i]+p] = e.id, e.w
		}
	}
	k := kernelmath.ScratchSym(n)
	kernelmath.SparseGramInto(k, len(vocab), ptr, idx, val)
	return k
}

// Visual stacks the candidates' visual vectors, on kernelmath.Scratch storage
// (kernelmath.Release hands it back); they must all have one length.
func Visual(cands []Candidate) (*mat.Dense, error) {
	d := len(cands[0].Visual)
	x := mat.NewDense(len(cands), d, kernelmath.Scratch(len(cands)*d))
	for i, c := range cands {
		if len(c.Visual) != d {
			kernelmath.Release(x.RawMatrix().Data)
			return nil, fmt.Errorf("candidate %s has %d visual features, candidate %s has %d", c.ID, len(c.Visual), cands[0].ID, d)
		}
		x.SetRow(i, c.Visual)
	}
	return x, nil
}
