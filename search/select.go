package search

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kernelrank/kernelrank/internal/admission"
	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/rerank"
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
}

// SelectDefault makes the engine's default re-ranker the candidate with the
// best mean P@SelectCutoff over labelled validation queries of this
// deployment, each searched as the server would search it with every other
// default (window, prior, affinity, damping). So a deployment never serves
// a re-ranker that its own validation queries show worse than another it
// could have served. Requests that name a strategy or a learner are not
// affected. Without queries the default stays DefaultStrategy.
func (e *Engine) SelectDefault(ctx context.Context, queries []LabelledQuery) (Selection, error) {
	sel := Selection{Strategy: rerank.DefaultStrategy, Queries: len(queries)}
	if len(queries) == 0 {
		return sel, fmt.Errorf("%w: no validation queries", ErrRequest)
	}
	ctx = admission.Patient(ctx) // the choice waits for the requests' slots, never fails for them
	best := -1.0
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
		sel.Precision = append(sel.Precision, Scored{strategy, p})
		if p > best {
			best, sel.Strategy = p, strategy
		}
	}
	e.selection.Store(&sel)
	return sel, nil
}

// precision is the mean P@SelectCutoff of strategy over queries.
func (e *Engine) precision(ctx context.Context, strategy string, queries []LabelledQuery) (float64, error) {
	sum := 0.0
	for _, q := range queries {
		req := DefaultRequest(q.Query)
		req.K, req.Seed, req.Rerank.Strategy, req.Rerank.Voters = SelectCutoff, q.Seed, strategy, 0
		resp, err := e.Search(ctx, req)
		if err != nil {
			return 0, fmt.Errorf("%s on %q: %w", strategy, q.Query, err)
		}
		ranked := make([]bool, len(resp.Results))
		for i, h := range resp.Results {
			ranked[i] = q.Relevant[h.ID]
		}
		sum += metrics.PrecisionAt(ranked, SelectCutoff)
	}
	return sum / float64(len(queries)), nil
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
