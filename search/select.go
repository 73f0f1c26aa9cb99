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
	"github.com/kernelrank/kernelrank/rerank"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// SelectCandidates are the re-rankers SelectDefault compares, the
// built-in default first: it wins every tie.
var SelectCandidates = []string{rerank.DefaultStrategy, "npk", "poly", "intersection", "rbf", "linear"}

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
	Queries  int    `json:"queries"`
	// Precision is each candidate's mean P@SelectCutoff over the queries,
	// in SelectCandidates order; a candidate that rejected a window (its
	// learner cannot fit it, e.g. intersection on negative features) is
	// left out, with the reason in Skipped.
	Precision []Scored          `json:"precision"`
	Skipped   map[string]string `json:"skipped,omitempty"`
}

// Scored is one candidate's validation precision.
type Scored struct {
	Strategy  string  `json:"strategy"`
	Precision float64 `json:"precision"`
	// Gain is its mean per-query gain in precision over the first
	// candidate measured (the built-in default), and GainSE the standard
	// error of that mean (both 0 for the default itself).
	Gain   float64 `json:"gain"`
	GainSE float64 `json:"gain_se"`
}

// SelectMargin is how many standard errors a candidate's mean gain over the
// built-in default must exceed for SelectDefault to choose it. Without a
// margin, 45 validation queries of Corel5k (seed 2) chose poly for 0.6
// points, and it lost 3.8 on the test queries.
const SelectMargin = 2

// SelectDefault makes the engine's default re-ranker the candidate that its
// deployment's labelled validation queries show best, each query searched
// as the server searches it with every other default (window, prior,
// affinity, damping): of the candidates whose P@SelectCutoff beats the
// built-in default's by more than SelectMargin standard errors of the
// per-query differences (a paired test), the one with the highest mean;
// none such, the built-in default (the first candidate that runs on the
// corpus, in SelectCandidates order). So a deployment leaves the default
// for a re-ranker its own queries show better, but not for a difference
// they cannot tell from noise. Requests that name a strategy or a learner
// are not affected.
func (e *Engine) SelectDefault(ctx context.Context, queries []LabelledQuery) (Selection, error) {
	sel := Selection{Strategy: rerank.DefaultStrategy, Queries: len(queries)}
	if len(queries) == 0 {
		return sel, fmt.Errorf("%w: no validation queries", ErrRequest)
	}
	ctx = admission.Patient(ctx) // the choice waits for the requests' slots, never fails for them
	var names []string
	var per [][]float64
	for _, strategy := range SelectCandidates {
		p, err := e.precision(ctx, strategy, queries)
		if errors.Is(err, learners.ErrInput) || errors.Is(err, rerank.ErrOptions) {
			if sel.Skipped == nil {
				sel.Skipped = map[string]string{}
			}
			sel.Skipped[strategy] = err.Error()
			continue
		}
		if err != nil {
			return sel, err
		}
		names, per = append(names, strategy), append(per, p)
	}
	if len(names) == 0 {
		return sel, fmt.Errorf("%w: no candidate re-ranker runs on this corpus", ErrRequest)
	}
	sel.Strategy, sel.Precision = pick(names, per)
	e.selection.Store(&sel)
	return sel, nil
}

// pick is SelectDefault's rule over the per-query precisions per[c] of the
// candidates names[c], the first the default: the candidate of highest mean
// among those whose mean gain over the first exceeds SelectMargin standard
// errors, else the first.
func pick(names []string, per [][]float64) (string, []Scored) {
	chosen, best := names[0], math.Inf(-1)
	scored := make([]Scored, len(names))
	for c, p := range per {
		scored[c] = Scored{Strategy: names[c], Precision: mean(p)}
		if c == 0 {
			continue
		}
		diff := make([]float64, len(p))
		for q := range p {
			diff[q] = p[q] - per[0][q]
		}
		scored[c].Gain, scored[c].GainSE = mean(diff), stderr(diff)
		if g := scored[c].Gain; g > 0 && g > SelectMargin*scored[c].GainSE && scored[c].Precision > best {
			chosen, best = names[c], scored[c].Precision
		}
	}
	return chosen, scored
}

// precision is the P@SelectCutoff of strategy on each query.
func (e *Engine) precision(ctx context.Context, strategy string, queries []LabelledQuery) ([]float64, error) {
	per := make([]float64, len(queries))
	for i, q := range queries {
		req := DefaultRequest(q.Query)
		req.K, req.Seed, req.Rerank.Strategy, req.Rerank.Voters = SelectCutoff, q.Seed, strategy, 0
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
	if s := e.selection.Load(); s != nil {
		return s.Strategy
	}
	return rerank.DefaultStrategy
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
