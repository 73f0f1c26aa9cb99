package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/search"
	"github.com/kernelrank/kernelrank/search/decision"
)

// DemoRow is one re-ranker's P@search.SelectCutoff on the demo: on its
// built-in validation queries (demo.Validation) and on the queries its page
// suggests (demo.Suggested), with the per-query values of the latter.
type DemoRow struct {
	Method     string          `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Validation float64         `json:"validation"`
	Suggested  float64         `json:"suggested"`
	PerQuery   []float64       `json:"per_query"`
}

// DemoReport is the demo's table: the text order, the served default
// (chosen on the validation queries as `serve` chooses it) and each
// candidate at the setting validation chose for it.
type DemoReport struct {
	Images, Validation int
	Suggested          []string
	Served             search.Selection
	Decision           *decision.Rule
	Rows               []DemoRow
}

// Demo builds the bundled demo corpus's index (features from its drawings,
// as `serve` does on first start), chooses the served default on its
// built-in validation queries, and measures every candidate on the
// suggested queries.
func Demo(ctx context.Context, window int, progress io.Writer) (*DemoReport, error) {
	if progress == nil {
		progress = io.Discard
	}
	tmp, err := os.MkdirTemp("", "kernelrank-eval-demo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintln(progress, "indexing the demo corpus (features from its drawings)")
	ix, err := demoIndex(ctx, tmp)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	val, err := demoQueries(demo.Validation())
	if err != nil {
		return nil, err
	}
	sugg, err := demoQueries(demo.SuggestedQueries())
	if err != nil {
		return nil, err
	}
	engine := search.New(ix, nil, search.Options{Window: window})
	fmt.Fprintf(progress, "choosing the served re-ranker on %d validation queries\n", len(val))
	sel, err := engine.SelectDefault(ctx, val)
	if err != nil {
		return nil, err
	}
	rep := &DemoReport{Images: int(ix.Count()), Validation: len(val), Served: sel}
	for _, q := range sugg {
		rep.Suggested = append(rep.Suggested, q.Query)
	}
	row := func(method string, s search.Scored) error {
		per, err := engine.Precision(ctx, s.Strategy, s.Params, sugg)
		if err != nil {
			return err
		}
		rep.Rows = append(rep.Rows, DemoRow{Method: method, Params: s.Params, Validation: s.Precision, Suggested: metrics.Mean(per), PerQuery: per})
		return nil
	}
	served := search.Scored{Strategy: sel.Strategy, Params: sel.Params}
	for _, s := range sel.Precision {
		if s.Strategy == search.SelectBaseline {
			if err := row("text order", s); err != nil {
				return nil, err
			}
		}
		if s.Strategy == sel.Strategy && string(s.Params) == string(sel.Params) {
			served.Precision = s.Precision
		}
	}
	if err := row("served: "+sel.Strategy, served); err != nil {
		return nil, err
	}
	// A request that names no re-ranker: the per-query decision's choice
	// when it is adopted. Its validation P@10 is the single choice's plus
	// the decision's gain in sample.
	rep.Decision = engine.Decision()
	perQuery := search.Scored{Precision: served.Precision}
	if rep.Decision != nil && rep.Decision.Adopted {
		perQuery.Precision += rep.Decision.Gain
	}
	if err := row("served, per-query", perQuery); err != nil {
		return nil, err
	}
	if d := rep.Decision; d != nil && d.Alternative != nil {
		// What the adoption test kept out (or let in): the fitted rule
		// followed on every suggested query whether adopted or not.
		forced := *d
		forced.Adopted = true
		r := DemoRow{Method: "rule, if adopted", Validation: served.Precision + d.Gain, PerQuery: make([]float64, len(sugg))}
		for i, q := range sugg {
			sig, err := engine.Signals(ctx, q)
			if err != nil {
				return nil, err
			}
			c := forced.Decide(sig).Choice
			per, err := engine.Precision(ctx, c.Strategy, c.Params, sugg[i:i+1])
			if err != nil {
				return nil, err
			}
			r.PerQuery[i] = per[0]
		}
		r.Suggested = metrics.Mean(r.PerQuery)
		rep.Rows = append(rep.Rows, r)
	}
	for _, s := range sel.Precision {
		if err := row(s.Strategy, s); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// PrintDemo writes the demo's table: P@10 in %.
func PrintDemo(w io.Writer, rep *DemoReport) {
	fmt.Fprintf(w, "Demo corpus, P@%d (%%): %d drawings; the served default chosen on %d built-in validation queries (curated folders); measured on the %d suggested queries too\n\n",
		search.SelectCutoff, rep.Images, rep.Validation, len(rep.Suggested))
	fmt.Fprintf(w, "%-22s %-22s %10s %10s", "method", "params", "validation", "suggested")
	for _, q := range rep.Suggested {
		fmt.Fprintf(w, " %6s", q)
	}
	fmt.Fprintln(w)
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "%-22s %-22s %10.1f %10.1f", r.Method, r.Params, 100*r.Validation, 100*r.Suggested)
		for _, p := range r.PerQuery {
			fmt.Fprintf(w, " %6.0f", 100*p)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nserved: %s\n", rep.Served.Reason)
	if d := rep.Decision; d != nil {
		fmt.Fprintf(w, "per-query decision: %s; %s\n", d.Text, d.Reason)
	}
}

// demoIndex extracts the demo corpus under dir and indexes it there,
// computing the drawings' features.
func demoIndex(ctx context.Context, dir string) (*index.Index, error) {
	jsonl, err := demo.Extract(filepath.Join(dir, "corpus"))
	if err != nil {
		return nil, err
	}
	ix, err := index.Open(filepath.Join(dir, "index"))
	if err != nil {
		return nil, err
	}
	if _, err := index.IngestDir(ctx, ix, filepath.Dir(jsonl), index.IngestOptions{StopOnError: true}); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// DemoValidation is the demo's built-in validation set as the search
// facade's labelled queries: what serve chooses the demo's default on.
func DemoValidation() ([]search.LabelledQuery, error) { return demoQueries(demo.Validation()) }

// demoQueries turns the demo's labelled queries into the search facade's.
func demoQueries(qs []demo.Query, err error) ([]search.LabelledQuery, error) {
	if err != nil {
		return nil, err
	}
	out := make([]search.LabelledQuery, len(qs))
	for i, q := range qs {
		out[i] = search.LabelledQuery{Query: q.Query, Relevant: q.Relevant}
	}
	return out, nil
}
