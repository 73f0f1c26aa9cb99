package eval

import (
	"context"
	"testing"
)

// The fold-in protocol on a generated network: the split's counts add up,
// and users folded into a model trained without them rank their held-out
// friends better than Adamic-Adar and about as well as a retrain.
func TestFoldInOnTheDemoNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the fold-in protocol")
	}
	rep, err := FoldIn(context.Background(), FoldInConfig{Data: demoNetwork(t, 300), Seed: 1, Hidden: 30})
	if err != nil {
		t.Fatal(err)
	}
	// A friendship between two hidden users is added back or held out
	// once, and counted at both ends.
	if rep.Users != 300 || rep.Hidden != 30 || rep.TestUsers != 30 || rep.Revealed < 30 || rep.Test == 0 || len(rep.Rows) != 2*3*len(SocialMetrics) {
		t.Fatalf("report %+v", rep)
	}
	get := func(method, metric string) float64 {
		for _, r := range rep.Rows {
			if r.Task == FoldInAll && r.Method == method && r.Metric == metric {
				return r.Value
			}
		}
		t.Fatalf("no row %s %s", method, metric)
		return 0
	}
	fold, retrain, aa := get("fold-in", "MAP"), get("retrain", "MAP"), get("adamic-adar", "MAP")
	t.Logf("MAP fold-in %.4f, retrain %.4f, adamic-adar %.4f", fold, retrain, aa)
	if fold < aa || fold < retrain-0.1 {
		t.Errorf("fold-in MAP %.4f, retrain %.4f, adamic-adar %.4f", fold, retrain, aa)
	}
}
