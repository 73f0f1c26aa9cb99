package search

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/kernelrank/kernelrank/internal/admission"
	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/fixed"
	"github.com/kernelrank/kernelrank/learners/hsicnpk"
	"github.com/kernelrank/kernelrank/rerank"
	"github.com/kernelrank/kernelrank/search/decision"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// SelectCandidates are the re-rankers SelectDefault compares, the
// built-in default first: it wins every tie. The last, SelectBaseline, is
// the text order itself, which every re-ranker must beat to be served.
var SelectCandidates = []string{rerank.DefaultStrategy, hsicnpk.Alias, fixed.Poly, fixed.Intersection, fixed.RBF, fixed.Linear, fixed.Text, SelectBaseline}

// SelectBaseline is the ranking that does nothing: the text stage's order
// (raw). SelectDefault serves it unless the re-ranker it chose beats it
// beyond noise, as a re-ranker must beat the built-in default, so a
// deployment is served a re-ranking only where its own queries show that
// re-ranking helps.
const SelectBaseline = fixed.Raw

// SelectSettings are the parameter settings SelectDefault tries for a
// candidate, as JSON objects, its defaults first; a candidate not listed
// runs with its defaults alone. They are the degree of poly and of the
// default's (npk-fused's) polynomial visual kernel, and rbf's scale: the
// grids `kernelrank eval images` chooses its poly and rbf rows from, so the
// served re-ranker can reach the choice validation makes for them: where the
// tags carry nothing (one tag an image) npk-fused is its visual kernel, so
// it needs the degree poly's validation picks (docs/evaluation.md).
var SelectSettings = map[string][]string{
	rerank.DefaultStrategy: {`{"degree":2}`, `{"degree":3}`},
	fixed.Poly:             {`{"degree":2}`, `{"degree":3}`},
	fixed.RBF:              {`{"scale":1}`, `{"scale":0.05}`, `{"scale":0.1}`, `{"scale":0.25}`, `{"scale":0.5}`, `{"scale":2}`},
}

// SelectAlone names, for a candidate whose settings are those of a kernel
// it is built on, that kernel's own candidate: the candidate leaves its
// first setting only for one that validation makes that kernel's choice too.
// npk-fused's degree is its polynomial visual kernel's: it goes to degree 3
// where both npk-fused and poly alone do best at degree 3 on validation.
// Where the tags carry nothing the two are the same kernel, and npk-fused
// follows poly's choice; elsewhere a degree that only the fused kernel
// favours is taken for noise: such validation gains came with test losses
// (docs/evaluation.md).
var SelectAlone = map[string]string{rerank.DefaultStrategy: fixed.Poly}

// settings are the parameter settings SelectDefault tries for strategy
// (nil: its defaults).
func settings(strategy string) []json.RawMessage {
	ps := SelectSettings[strategy]
	if len(ps) == 0 {
		return []json.RawMessage{nil}
	}
	out := make([]json.RawMessage, len(ps))
	for i, p := range ps {
		out[i] = json.RawMessage(p)
	}
	return out
}

// SelectCutoff is the rank at which SelectDefault measures precision.
const SelectCutoff = 10

// LabelledQuery is a validation query of a deployment: a text query and the
// ids of the images that answer it.
type LabelledQuery struct {
	Query    string
	Relevant map[string]bool
	Seed     int64 // the text stage's tie-break, as Request.Seed (0 when the server's requests give none)
}

// Selection is what SelectDefault measured and chose.
type Selection struct {
	Strategy string `json:"strategy"` // the engine's default from now on
	// Params are the default's parameters from now on (empty: its own defaults).
	Params  json.RawMessage `json:"params,omitempty"`
	Queries int             `json:"queries"`
	// Precision is each candidate's mean P@SelectCutoff over the queries
	// at its setting of highest mean, in SelectCandidates order; a
	// candidate that rejected a window (its learner cannot fit it, e.g.
	// intersection on negative features) is left out, with the reason in
	// Skipped.
	Precision []Scored `json:"precision"`
	// Settings are every setting measured (SelectSettings), in order.
	Settings []Scored          `json:"settings"`
	Skipped  map[string]string `json:"skipped,omitempty"`
	// Reason says in words why Strategy was chosen.
	Reason string `json:"reason"`
	// decision is the per-query decision fitted beside the choice
	// (Engine.Decision), decisionKey its fingerprint.
	decision    *decision.Rule
	decisionKey string
}

// Scored is one setting's validation precision.
type Scored struct {
	Strategy  string          `json:"strategy"`
	Params    json.RawMessage `json:"params,omitempty"`
	Precision float64         `json:"precision"`
	// Gain is its mean per-query gain in precision over the setting chosen
	// for the first candidate measured (the built-in default), and GainSE
	// the standard error of that mean (both 0 for that setting itself).
	Gain   float64 `json:"gain"`
	GainSE float64 `json:"gain_se"`
}

// SelectMargin is how many standard errors a candidate's mean gain over the
// built-in default must exceed for SelectDefault to choose it: a few dozen
// validation queries let noise pick a candidate that loses on the test
// queries (docs/evaluation.md).
const SelectMargin = 2

// SelectDefault makes the engine's default re-ranker, with its parameters,
// the candidate that its deployment's labelled validation queries show
// best, each query searched as the server searches it with every other
// default (window, prior, affinity, damping). Each candidate runs at each
// of its SelectSettings and keeps the one of highest mean P@SelectCutoff
// (the first on a tie), as the eval chooses a kernel's parameters, unless
// SelectAlone holds it to its first; then, of
// the candidates whose P@SelectCutoff beats the built-in default's by more
// than SelectMargin standard errors of the per-query differences (a paired
// test), the one with the highest mean; none such, the built-in default (the
// first candidate that runs on the corpus, in SelectCandidates order).
// Last, unless that choice's mean gain over the text order (SelectBaseline)
// exceeds SelectMargin standard errors too, the text order is served:
// re-ranking does not help on these queries, and Selection.Reason says so. So a deployment sets
// a parameter within a re-ranker by what its queries measure, leaves the
// default re-ranker only for one its queries show better beyond noise, and
// re-ranks only where its queries show that re-ranking helps. Requests that
// name a strategy or a learner are not affected.
func (e *Engine) SelectDefault(ctx context.Context, queries []LabelledQuery) (Selection, error) {
	sel := Selection{Strategy: rerank.DefaultStrategy, Queries: len(queries)}
	if len(queries) == 0 {
		return sel, fmt.Errorf("%w: no validation queries", ErrRequest)
	}
	ctx = admission.Patient(ctx) // the choice waits for the requests' slots, never fails for them
	var cands []candidate
	for _, strategy := range SelectCandidates {
		c := candidate{strategy: strategy}
		for _, params := range settings(strategy) {
			p, err := e.Precision(ctx, strategy, params, queries)
			if errors.Is(err, learners.ErrInput) || errors.Is(err, rerank.ErrOptions) {
				if sel.Skipped == nil {
					sel.Skipped = map[string]string{}
				}
				sel.Skipped[strategy] = err.Error()
				c.per = nil
				break
			}
			if err != nil {
				return sel, err
			}
			c.params, c.per = append(c.params, params), append(c.per, p)
		}
		if c.per != nil {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return sel, fmt.Errorf("%w: no candidate re-ranker runs on this corpus", ErrRequest)
	}
	chosen, best, all := pick(cands)
	sel.Strategy, sel.Params, sel.Precision, sel.Settings = chosen.Strategy, chosen.Params, best, all
	sel.Reason = reason(chosen, best)
	rule, err := e.fitDecision(ctx, queries, cands, chosen)
	if err != nil {
		return sel, err
	}
	sel.adopt(rule)
	e.selection.Store(&sel)
	return sel, nil
}

// candidate is a re-ranker's per-query precisions per[s] at each of its
// settings params[s], and the setting SelectDefault keeps.
type candidate struct {
	strategy string
	params   []json.RawMessage
	per      [][]float64
	chosen   int
}

// settle sets each candidate's chosen setting: the one of highest mean
// precision (the first on a tie); for a candidate with a SelectAlone
// kernel, a setting other than its first only where it is that kernel's
// chosen setting too.
func settle(cands []candidate) {
	at := map[string]int{}
	for i := range cands {
		c := &cands[i]
		c.chosen = 0
		for s := range c.per {
			if mean(c.per[s]) > mean(c.per[c.chosen]) {
				c.chosen = s
			}
		}
		at[c.strategy] = i
	}
	for i := range cands {
		c := &cands[i]
		alone, ok := SelectAlone[c.strategy]
		if !ok || c.chosen == 0 {
			continue
		}
		if j, ok := at[alone]; !ok || string(cands[j].params[cands[j].chosen]) != string(c.params[c.chosen]) {
			c.chosen = 0
		}
	}
}

// pick is SelectDefault's rule over the candidates, the first the default:
// each at its chosen setting (settle); the candidate of highest mean among
// those whose mean gain over the first exceeds SelectMargin standard
// errors, else the first; then SelectBaseline, if measured, unless the
// choice's mean gain over it exceeds SelectMargin standard errors too. It returns the choice, each candidate at
// its chosen setting, and every setting, gains over the first candidate's.
func pick(cands []candidate) (chosen Scored, best, all []Scored) {
	settle(cands)
	base := cands[0].per[cands[0].chosen]
	baseline, at := -1, 0
	for c, cand := range cands {
		s := scored(cand, cand.chosen, base)
		if c == 0 || s.Gain > 0 && s.Gain > SelectMargin*s.GainSE && s.Precision > chosen.Precision {
			chosen, at = s, c
		}
		best = append(best, s)
		if cand.strategy == SelectBaseline {
			baseline = c
		}
		for i := range cand.per {
			all = append(all, scored(cand, i, base))
		}
	}
	if baseline >= 0 && at != baseline {
		vs := scored(cands[at], cands[at].chosen, cands[baseline].per[0])
		if !(vs.Gain > 0 && vs.Gain > SelectMargin*vs.GainSE) {
			chosen = best[baseline]
		}
	}
	return chosen, best, all
}

// reason says why pick chose chosen among best (its candidates at their
// chosen settings, the built-in default first).
func reason(chosen Scored, best []Scored) string {
	top := best[0]
	for _, s := range best {
		if s.Strategy != SelectBaseline && s.Precision > top.Precision {
			top = s
		}
	}
	switch {
	case chosen.Strategy == SelectBaseline:
		return fmt.Sprintf("the text order (%s): re-ranking does not help on the validation queries beyond noise "+
			"(%d standard errors): their P@%d is %.3f in text order and %.3f at best re-ranked (%s%s)",
			SelectBaseline, SelectMargin, SelectCutoff, chosen.Precision, top.Precision, top.Strategy, top.Params)
	case chosen.Strategy == best[0].Strategy:
		return fmt.Sprintf("the built-in default %s%s: no re-ranker beats its validation P@%d (%.3f) by more than %d standard errors",
			chosen.Strategy, chosen.Params, SelectCutoff, chosen.Precision, SelectMargin)
	default:
		return fmt.Sprintf("%s%s: its validation P@%d (%.3f) beats the built-in default's by %.3f, more than %d standard errors (%.3f)",
			chosen.Strategy, chosen.Params, SelectCutoff, chosen.Precision, chosen.Gain, SelectMargin, chosen.GainSE)
	}
}

// scored is setting s of c with its gain over the per-query precisions base.
func scored(c candidate, s int, base []float64) Scored {
	p := c.per[s]
	diff := make([]float64, len(p))
	for q := range p {
		diff[q] = p[q] - base[q]
	}
	return Scored{Strategy: c.strategy, Params: c.params[s], Precision: mean(p), Gain: mean(diff), GainSE: stderr(diff)}
}

// Precision is the P@SelectCutoff of strategy with params on each query,
// each searched as the server searches it with every other default.
func (e *Engine) Precision(ctx context.Context, strategy string, params json.RawMessage, queries []LabelledQuery) ([]float64, error) {
	per := make([]float64, len(queries))
	for i, q := range queries {
		req := DefaultRequest(q.Query)
		req.K, req.Seed, req.Rerank.Strategy, req.Rerank.Params, req.Rerank.Voters = SelectCutoff, q.Seed, strategy, params, 0
		resp, err := e.Search(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("%s on %q: %w", strategy, q.Query, err)
		}
		ranked := make([]bool, len(resp.Results))
		for j, h := range resp.Results {
			ranked[j] = q.Relevant[h.ID]
		}
		per[i] = metrics.PrecisionAt(ranked, SelectCutoff)
	}
	return per, nil
}

func mean(x []float64) float64 { return floats.Sum(x) / float64(len(x)) }

// stderr is the standard error of the mean of x (0 for fewer than two).
func stderr(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	return stat.StdDev(x, nil) / math.Sqrt(float64(len(x)))
}

// DefaultStrategy is the re-ranker of a request that names none:
// rerank.DefaultStrategy until SelectDefault chose another.
func (e *Engine) DefaultStrategy() string {
	s, _ := e.defaultRerank()
	return s
}

// defaultRerank is the re-ranker of a request that names none and its
// parameters (nil: its own defaults): SelectDefault's choice, if it ran.
func (e *Engine) defaultRerank() (string, json.RawMessage) {
	if s := e.selection.Load(); s != nil {
		return s.Strategy, s.Params
	}
	return rerank.DefaultStrategy, nil
}

// Selection is the last choice of SelectDefault (nil: none ran).
func (e *Engine) Selection() *Selection { return e.selection.Load() }

// ReadValidation reads labelled validation queries as JSON Lines, one
// object a line: {"q": "sky", "relevant": ["img1", "img2"]} (blank lines
// are skipped). Every query needs a q and at least one relevant id.
func ReadValidation(r io.Reader) ([]LabelledQuery, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var out []LabelledQuery
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec struct {
			Q        string   `json:"q"`
			Relevant []string `json:"relevant"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("%w: validation line %d: %v", ErrRequest, line, err)
		}
		if strings.TrimSpace(rec.Q) == "" || len(rec.Relevant) == 0 {
			return nil, fmt.Errorf(`%w: validation line %d: needs "q" and at least one "relevant" id`, ErrRequest, line)
		}
		q := LabelledQuery{Query: rec.Q, Relevant: make(map[string]bool, len(rec.Relevant))}
		for _, id := range rec.Relevant {
			q.Relevant[id] = true
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("validation queries: %w", err)
	}
	return out, nil
}
