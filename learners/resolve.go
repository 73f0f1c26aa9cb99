package learners

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
)

// Resolved is a plug-in with its parameters resolved once: the spec, the
// parameter values decoded and checked (defaults filled in), their
// canonical JSON, the inputs they need, and the learner built from them.
// Everything downstream of a request (a search's plan, its cost, its cache
// keys, its fit) reads this value; nothing decodes the parameters again.
//
// A Resolved is a Learner: its Fit checks the input against Needs, once,
// before the plug-in's own Fit, which may thus take its input as valid.
type Resolved struct {
	Spec   Spec
	Values Values
	// Params is the canonical JSON of Values: every parameter, defaults
	// included, keys sorted, so that equivalent parameters (reordered,
	// spelled 2.0 for 2, defaults given or left out) give one string.
	Params string
	// Needs are the inputs a fit with these parameters requires (with
	// the capabilities of Spec.Needs): Spec.NeedsOf's when the spec has
	// one, Spec.Needs otherwise.
	Needs   Needs
	learner Learner
	given   map[string]bool // the parameters the request gave
}

var _ Learner = (*Resolved)(nil)

// Resolve looks up the plug-in registered under name (or an alias) and
// resolves its JSON parameters (nil or empty for all defaults). Unknown
// names (wrapping ErrUnknownLearner), unknown parameters and invalid
// values are errors that name the culprit.
func Resolve(name string, params json.RawMessage) (*Resolved, error) {
	s, ok := Lookup(name)
	if !ok {
		names := make([]string, 0)
		for _, s := range Specs() {
			names = append(names, s.Name)
		}
		return nil, fmt.Errorf("%w %q (registered: %s)", ErrUnknownLearner, name, strings.Join(names, ", "))
	}
	v, given, err := parseParams(s, params)
	if err != nil {
		return nil, err
	}
	r, err := s.resolve(v)
	if err != nil {
		return nil, err
	}
	r.given = given
	return r, nil
}

// resolve builds the learner of s from validated values v.
func (s Spec) resolve(v Values) (*Resolved, error) {
	l, err := s.New(v)
	if err != nil {
		return nil, &ParamError{Learner: s.Name, Noun: s.noun(), Msg: err.Error()}
	}
	b, _ := json.Marshal(v) // cannot fail: finite numbers, strings and booleans
	needs := s.Needs
	if s.NeedsOf != nil {
		needs = s.NeedsOf(v)
	}
	return &Resolved{Spec: s, Values: v, Params: string(b), Needs: needs, learner: l}, nil
}

// With returns r with parameter name set to value (of the parameter's
// type: float64, int, string or bool), checked against its range.
func (r *Resolved) With(name string, value any) (*Resolved, error) {
	i := -1
	for j, p := range r.Spec.Params {
		if p.Name == name {
			i = j
		}
	}
	if i < 0 {
		return nil, &ParamError{Learner: r.Spec.Name, Noun: r.Spec.noun(), Param: name, Msg: "unknown parameter"}
	}
	if err := r.Spec.Params[i].check(value); err != nil {
		return nil, &ParamError{Learner: r.Spec.Name, Noun: r.Spec.noun(), Param: name, Msg: err.Error()}
	}
	v := maps.Clone(r.Values)
	v[name] = value
	w, err := r.Spec.resolve(v)
	if err != nil {
		return nil, err
	}
	w.given = maps.Clone(r.given)
	if w.given == nil {
		w.given = map[string]bool{}
	}
	w.given[name] = true
	return w, nil
}

// Given reports whether the parameters resolved gave parameter name (rather
// than taking its default), for a caller whose own setting is the default
// (a recommender's seed).
func (r *Resolved) Given(name string) bool { return r.given[name] }

// Fit checks in against r.Needs and fits r's learner.
func (r *Resolved) Fit(ctx context.Context, in *Input) (*Output, error) {
	if err := in.Validate(r.Needs); err != nil {
		return nil, err
	}
	return r.learner.Fit(ctx, in)
}

// Plugin returns the plug-in's own learner, which takes its input as
// valid: for the plug-in's tests, which reach into it.
func (r *Resolved) Plugin() Learner { return r.learner }

// Learned reports whether a fit learns something (false for the fixed
// strategies, whose output is a fixed function of the input).
func (r *Resolved) Learned() bool { return !r.Spec.Fixed }

// RankParam is the parameter of a learner's low-rank form: 0 fits the full
// rank, m > 0 a kernel of rank m.
const RankParam = "rank"

// Rank returns the rank a fit with r's parameters learns (0: full rank),
// and whether the learner has a low-rank form at all (a RankParam).
func (r *Resolved) Rank() (rank int, lowRankForm bool) {
	m, ok := r.Values[RankParam].(int)
	return m, ok
}

// RankAbove reports whether r fits a kernel of rank above m (full rank, or
// a larger rank) with a learner that has a low-rank form.
func (r *Resolved) RankAbove(m int) bool {
	rank, ok := r.Rank()
	return ok && (rank == 0 || rank > m)
}

// LowRank returns r in its low-rank form of rank m when it fits a kernel
// of rank above m (see RankAbove), and r itself otherwise.
func (r *Resolved) LowRank(m int) (*Resolved, error) {
	if !r.RankAbove(m) {
		return r, nil
	}
	return r.With(RankParam, m)
}

// The cost model: the work of a kernel in floating-point operations, to tell
// the fits that hold a core for long (a learner's eigendecompositions) from
// those that do not. Rough by design: typical values, not bounds
// (docs/evaluation.md has the timings they come from).
const (
	// fullRankSolves is a typical number of n x n eigendecompositions of a
	// full-rank fit (HSIC-NPK's iterations on a search's window).
	fullRankSolves = 30
	// eigenFlops is the cost of one symmetric eigendecomposition in units of n^3.
	eigenFlops = 2
	// lowRankSteps is a typical number of O(n^2 m) steps of a low-rank fit
	// over a Laplacian basis of m vectors.
	lowRankSteps = 20
)

// Cost estimates the work of r's output over n points with d features: 0
// for a plug-in that outputs no kernel (raw), n^2 d for a fixed kernel,
// the full-rank or low-rank cost of a fit otherwise.
func (r *Resolved) Cost(n, d int) float64 {
	fn, fd := float64(n), float64(max(d, 1))
	rank, _ := r.Rank()
	switch {
	case r.Spec.Kind == KindOrder:
		return 0
	case r.Spec.Fixed:
		return fn * fn * fd
	case rank > 0:
		return fn * fn * float64(min(rank, n)) * lowRankSteps
	}
	return fn * fn * fn * eigenFlops * fullRankSolves
}
