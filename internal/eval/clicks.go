package eval

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/kernelrank/kernelrank/internal/feedback"
	"gonum.org/v1/gonum/stat"
)

// ClickRow is what users did with one ranker's lists on one surface: the
// re-ranker of a search, the model version of a friend or group
// suggestion.
type ClickRow struct {
	Surface string `json:"surface"`
	Ranker  string `json:"ranker"`
	// Lists are the lists shown (one a session, query or user, and
	// ranker), Impressions the items shown on them, Clicks the items
	// clicked.
	Lists       int `json:"lists"`
	Impressions int `json:"impressions"`
	Clicks      int `json:"clicks"`
	// CTR is Clicks / Impressions, CTRSE its standard error (binomial,
	// sqrt(p(1-p)/n): it takes the impressions as independent, which
	// those of one list are not quite).
	CTR   float64 `json:"ctr"`
	CTRSE float64 `json:"ctr_se"`
	// MRR is the mean over lists of 1/rank of the list's first click (0
	// for a list with none), MRRSE the standard error of that mean.
	MRR   float64 `json:"mrr"`
	MRRSE float64 `json:"mrr_se"`
}

// ClickReport is ClickRow per surface and ranker, and each surface's best
// ranker by MRR.
type ClickReport struct {
	Events int               `json:"events"`
	Rows   []ClickRow        `json:"rows"`
	Best   map[string]string `json:"best"` // surface -> ranker
}

// Clicks measures the lists of c: click-through rate and mean reciprocal
// rank of the first click, per surface and ranker (rows sorted by surface,
// then MRR, best first).
func Clicks(c *feedback.Collector) ClickReport {
	rep := ClickReport{Events: c.Events(), Best: map[string]string{}}
	for _, surface := range []string{feedback.Search, feedback.Friends, feedback.Groups} {
		byRanker := map[string]*ClickRow{}
		rrs := map[string][]float64{}
		for _, l := range c.Lists(surface) {
			name := l.Ranker
			row := byRanker[name]
			if row == nil {
				row = &ClickRow{Surface: surface, Ranker: name}
				byRanker[name] = row
			}
			row.Lists++
			rr := 0.0
			for _, s := range l.Items {
				row.Impressions++
				if s.Clicked {
					row.Clicks++
					if rr == 0 {
						rr = 1 / float64(s.Rank)
					}
				}
			}
			rrs[name] = append(rrs[name], rr)
		}
		var rows []ClickRow
		for name, row := range byRanker {
			p := float64(row.Clicks) / float64(row.Impressions)
			row.CTR, row.CTRSE = p, math.Sqrt(p*(1-p)/float64(row.Impressions))
			row.MRR, row.MRRSE = meanSE(rrs[name])
			rows = append(rows, *row)
		}
		slices.SortFunc(rows, func(a, b ClickRow) int {
			return cmp.Or(cmp.Compare(b.MRR, a.MRR), cmp.Compare(a.Ranker, b.Ranker))
		})
		if len(rows) > 0 {
			rep.Best[surface] = rows[0].Ranker
		}
		rep.Rows = append(rep.Rows, rows...)
	}
	return rep
}

// meanSE is the mean of x and its standard error.
func meanSE(x []float64) (mean, se float64) {
	mean, sd := stat.MeanStdDev(x, nil)
	if len(x) < 2 {
		return mean, 0
	}
	return mean, sd / math.Sqrt(float64(len(x)))
}

// PrintClicks writes rep as a table.
func PrintClicks(w io.Writer, rep ClickReport) {
	fmt.Fprintf(w, "%d events\n%-8s %-24s %7s %11s %7s %15s %15s\n", rep.Events, "surface", "ranker", "lists", "impressions", "clicks", "CTR ± SE", "MRR ± SE")
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "%-8s %-24s %7d %11d %7d %8.4f±%.4f %8.4f±%.4f\n", r.Surface, r.Ranker, r.Lists, r.Impressions, r.Clicks, r.CTR, r.CTRSE, r.MRR, r.MRRSE)
	}
	for _, surface := range []string{feedback.Search, feedback.Friends, feedback.Groups} {
		if best, ok := rep.Best[surface]; ok {
			fmt.Fprintf(w, "best %s ranker by MRR: %s\n", surface, best)
		}
	}
}
