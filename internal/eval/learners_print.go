package eval

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// PrintLearners writes every table as the paper prints it: a row per data
// set, a column per method, our mean ± deviation over the repetitions on one
// line and the published number under it (accuracies in %).
func PrintLearners(w io.Writer, rep *LearnersReport) {
	fmt.Fprintf(w, "Learner evaluation, suite %s, seed %d, %d workers\n", rep.Suite, rep.Seed, rep.Workers)
	for _, t := range rep.Tables {
		fmt.Fprintf(w, "\n%s\n%d repetitions\n", t.Title, t.Reps)
		var metricsSeen []string
		for _, r := range t.Rows {
			if !slices.Contains(metricsSeen, r.Metric) {
				metricsSeen = append(metricsSeen, r.Metric)
			}
		}
		for _, m := range metricsSeen {
			printBlock(w, t.Rows, m)
		}
		if len(t.Rows) == 0 {
			fmt.Fprintln(w, "  (no rows)")
		}
		for _, n := range t.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
}

// printBlock prints the rows of one metric as a data set x method grid.
func printBlock(w io.Writer, rows []LearnerRow, metric string) {
	var datasets, methods []string
	cell := map[[2]string]LearnerRow{}
	for _, r := range rows {
		if r.Metric != metric {
			continue
		}
		if !slices.Contains(datasets, r.Dataset) {
			datasets = append(datasets, r.Dataset)
		}
		if !slices.Contains(methods, r.Method) {
			methods = append(methods, r.Method)
		}
		cell[[2]string{r.Dataset, r.Method}] = r
	}
	width := 13
	for _, m := range methods {
		width = max(width, len(m))
	}
	first := 12
	for _, d := range datasets {
		first = max(first, len(d))
	}
	unit := map[string]string{metricAccuracy: "%", metricSeconds: "s", metricRank: "", metricExponent: ""}[metric]
	fmt.Fprintf(w, "\n%-*s %-5s", first, metric+unitSuffix(unit), "")
	for _, m := range methods {
		fmt.Fprintf(w, " %*s", width, m)
	}
	fmt.Fprintln(w)
	for _, d := range datasets {
		var ours, paper strings.Builder
		anyPaper := false
		for _, m := range methods {
			r, ok := cell[[2]string{d, m}]
			o, p := "-", ""
			if ok {
				o = formatValue(r.Value, r.Std, metric, r.Runs > 1 && r.Dataset != "mean")
				if r.Paper != nil {
					p = formatValue(*r.Paper, r.PaperStd, metric, r.PaperStd > 0 || metric == metricAccuracy && r.Dataset != "mean")
					anyPaper = true
				}
			}
			fmt.Fprintf(&ours, " %*s", width, o)
			fmt.Fprintf(&paper, " %*s", width, p)
		}
		fmt.Fprintf(w, "%-*s %-5s%s\n", first, d, "ours", ours.String())
		if anyPaper {
			fmt.Fprintf(w, "%-*s %-5s%s\n", first, "", "paper", paper.String())
		}
	}
}

func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " (" + unit + ")"
}

// formatValue prints a number in the unit of its metric, with its
// deviation when withStd.
func formatValue(v, std float64, metric string, withStd bool) string {
	switch metric {
	case metricAccuracy:
		if withStd {
			return fmt.Sprintf("%.1f±%.1f", 100*v, 100*std)
		}
		return fmt.Sprintf("%.1f", 100*v)
	case metricSeconds:
		digits := 3
		if v >= 10 {
			digits = 1
		}
		if withStd {
			return fmt.Sprintf("%.*f±%.*f", digits, v, digits, std)
		}
		return fmt.Sprintf("%.*f", digits, v)
	case metricNMI, metricF, metricPrecision, metricRecall, metricEntropy, metricARI:
		if withStd {
			return fmt.Sprintf("%.3f±%.3f", v, std)
		}
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
