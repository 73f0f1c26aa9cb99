// Package decision decides, per query and before re-ranking, which
// re-ranker answers it: the deployment's single served choice or one
// alternative, by one signal of the query's candidate window against a
// threshold (a depth-1 tree). The rule is fitted on the deployment's
// labelled validation queries and adopted only where it beats the single
// choice in leave-one-out cross-validation, by a paired signed-rank test
// over the held-out queries' gains; otherwise every query gets the single
// choice, as before.
package decision

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// Choice is a re-ranker with its parameters (empty: its defaults).
type Choice struct {
	Strategy string          `json:"strategy"`
	Params   json.RawMessage `json:"params,omitempty"`
}

func (c Choice) String() string { return c.Strategy + string(c.Params) }

// Table is what a rule is fitted on: every validation query's signals
// (Signals[q][s], named by Names; NaN where the window had too few
// candidates to measure) and each choice's precision on it
// (Precision[c][q]); Served is the index of the single served choice.
type Table struct {
	Signals   [][]float64
	Choices   []Choice
	Precision [][]float64
	Served    int
}

// CVLevel is the one-sided p-value of the exact Wilcoxon signed-rank test
// over the leave-one-out gains below which a rule with a positive mean
// cross-validated gain is adopted. The gains are a few dozen multiples of
// 1/10, most of them zero (queries the rule leaves alone) and the rest
// skewed: a margin of standard errors of their mean assumes a normal mean
// it does not have. The signed-rank test asks whether the held-out queries
// that gain outnumber and outweigh, by the ranks of their sizes, those that
// lose. The level is the conventional one-sided 5%; docs/evaluation.md
// has the rules it adopts and refuses, on corpora it was not chosen on too.
const CVLevel = 0.05

// minLeaf is the fewest validation queries a rule may switch: a split that
// moves one or two queries fits their noise.
func minLeaf(queries int) int { return max(3, (queries+9)/10) }

// maxLeaf is the most it may switch: half. The served choice passed
// SelectDefault's paired test against every other re-ranker; a rule that
// gave most queries another would replace it without that test (on the
// demo and on one tag an image such rules won in cross-validation and
// lost on the held-out queries, docs/evaluation.md). The rule names the
// minority of windows where the signals say the single choice is wrong.
func maxLeaf(queries int) int { return queries / 2 }

// Rule is a fitted decision: queries whose Signal is above Threshold (or,
// with Above false, at or below it) get Alternative, every other query
// Served. A rule that is not Adopted decides nothing: every query gets
// Served.
type Rule struct {
	Adopted   bool    `json:"adopted"`
	Served    Choice  `json:"served"`
	Signal    string  `json:"signal,omitempty"`
	Threshold float64 `json:"threshold,omitempty"`
	Above     bool    `json:"above,omitempty"`
	// Alternative is the re-ranker of the queries on the rule's side of
	// the threshold (nil: no split gains on validation).
	Alternative *Choice `json:"alternative,omitempty"`
	// Switched is how many validation queries the rule fitted on all of
	// them gives Alternative.
	Switched int `json:"switched"`
	Queries  int `json:"queries"`
	// Gain is the rule's mean per-query gain in P@10 over Served on the
	// validation queries it was fitted on; CVGain and CVGainSE are the
	// mean and standard error of the gains of leave-one-out
	// cross-validation (each query decided by a rule fitted without it),
	// and CVP the one-sided p-value of the signed-rank test over them.
	Gain     float64 `json:"gain"`
	CVGain   float64 `json:"cv_gain"`
	CVGainSE float64 `json:"cv_gain_se"`
	CVP      float64 `json:"cv_p"`
	// Text is the rule in words, Reason why it was adopted or not.
	Text   string `json:"rule"`
	Reason string `json:"reason"`
}

// Decision is a rule's choice for one query, with the signals of its
// window and why.
type Decision struct {
	Choice
	Signals map[string]float64 `json:"signals"`
	Reason  string             `json:"reason"`
}

// stump is a depth-1 split: queries with signal s beyond t (above or not)
// get choice alt.
type stump struct {
	s, alt int
	t      float64
	above  bool
}

// switches reports whether signal value v falls on the split's side
// (never for NaN).
func (st stump) switches(v float64) bool {
	if st.above {
		return v > st.t
	}
	return v <= st.t
}

// Fit fits a rule on tab: of every split (a signal, a threshold half-way
// between two adjacent values, a side, an alternative choice) that
// switches minLeaf to maxLeaf queries, the one of largest total gain in
// precision over the served choice (the first on a tie); none gaining, no
// rule. It adopts the rule if the leave-one-out cross-validated gains have
// a positive mean and a signed-rank p-value below CVLevel.
func Fit(tab Table) Rule {
	q := len(tab.Precision[tab.Served])
	all := make([]int, q)
	for i := range all {
		all[i] = i
	}
	r := Rule{Served: tab.Choices[tab.Served], Queries: q, CVP: 1} // no rule: no evidence for one
	best, ok := fitStump(tab, all)
	if !ok {
		r.Text = "every query: " + r.Served.String()
		r.Reason = fmt.Sprintf("no split of the %d validation queries by a signal of their windows gains over %s", q, r.Served)
		return r
	}
	alt := tab.Choices[best.alt]
	r.Signal, r.Threshold, r.Above, r.Alternative = Names[best.s], best.t, best.above, &alt
	r.Text = fmt.Sprintf("%s if %s %s %.4g, otherwise %s", alt, r.Signal, side(best.above), best.t, r.Served)
	gains := make([]float64, q)
	for i := range gains {
		if best.switches(tab.Signals[i][best.s]) {
			gains[i] = tab.Precision[best.alt][i] - tab.Precision[tab.Served][i]
			r.Switched++
		}
	}
	r.Gain = floats.Sum(gains) / float64(q)
	cv := make([]float64, q)
	rest := make([]int, 0, q)
	for i := range cv {
		rest = append(append(rest[:0], all[:i]...), all[i+1:]...)
		if st, ok := fitStump(tab, rest); ok && st.switches(tab.Signals[i][st.s]) {
			cv[i] = tab.Precision[st.alt][i] - tab.Precision[tab.Served][i]
		}
	}
	r.CVGain = floats.Sum(cv) / float64(q)
	if q > 1 {
		r.CVGainSE = stat.StdDev(cv, nil) / math.Sqrt(float64(q))
	}
	r.CVP = signedRankP(cv)
	r.Adopted = r.CVGain > 0 && r.CVP < CVLevel
	verdict := "adopted"
	if !r.Adopted {
		verdict = "not adopted: every query gets " + r.Served.String()
	}
	r.Reason = fmt.Sprintf("%s: it gains %.3f P@10 a query on the %d validation queries it was fitted on (%d switched), "+
		"%.3f ± %.3f in leave-one-out cross-validation, signed-rank p = %.3f (adopted with a positive mean gain below p = %g)",
		verdict, r.Gain, q, r.Switched, r.CVGain, r.CVGainSE, r.CVP, CVLevel)
	return r
}

func side(above bool) string {
	if above {
		return ">"
	}
	return "<="
}

// fitStump is the split of largest total gain over the served choice on
// the queries qs, switching minLeaf to maxLeaf of them; false when
// none gains.
func fitStump(tab Table, qs []int) (stump, bool) {
	var best stump
	bestGain, found := 0.0, false
	lo, hi := minLeaf(len(qs)), maxLeaf(len(qs))
	vals := make([]float64, 0, len(qs))
	for s := range Names {
		vals = vals[:0]
		for _, i := range qs {
			if v := tab.Signals[i][s]; !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
		slices.Sort(vals)
		vals = slices.Compact(vals)
		for k := 0; k+1 < len(vals); k++ {
			for _, above := range []bool{true, false} {
				st := stump{s: s, t: (vals[k] + vals[k+1]) / 2, above: above}
				for c := range tab.Choices {
					if c == tab.Served {
						continue
					}
					st.alt = c
					n, g := 0, 0.0
					for _, i := range qs {
						if st.switches(tab.Signals[i][s]) {
							n++
							g += tab.Precision[c][i] - tab.Precision[tab.Served][i]
						}
					}
					if n >= lo && n <= hi && g > bestGain+1e-12 {
						best, bestGain, found = st, g, true
					}
				}
			}
		}
	}
	return best, found
}

// Decide is the rule's choice for a window with signals sig (in Names
// order; nil when the window had too few candidates to measure).
func (r *Rule) Decide(sig []float64) Decision {
	d := Decision{Choice: r.Served}
	if sig != nil {
		d.Signals = make(map[string]float64, len(Names))
		for s, name := range Names {
			d.Signals[name] = sig[s]
		}
	}
	s := slices.Index(Names, r.Signal)
	switch {
	case !r.Adopted || r.Alternative == nil || s < 0:
		d.Reason = "every query: " + r.Served.String()
	case sig == nil:
		d.Reason = "too few candidates to measure the window: " + r.Served.String()
	case (stump{s: s, t: r.Threshold, above: r.Above}).switches(sig[s]):
		d.Choice = *r.Alternative
		d.Reason = fmt.Sprintf("%s %.4g %s %.4g: %s", r.Signal, sig[s], side(r.Above), r.Threshold, d.Choice)
	default:
		d.Reason = fmt.Sprintf("%s %.4g not %s %.4g: %s", r.Signal, sig[s], side(r.Above), r.Threshold, d.Choice)
	}
	return d
}
