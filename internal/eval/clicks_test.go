package eval

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/internal/feedback"
)

func TestClicksByHand(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	ev := func(kind, surface, session, ranker, item string, rank int) feedback.Event {
		e := feedback.Event{Kind: kind, Surface: surface, Session: session, Item: item, Rank: rank, ClientTime: t0}
		if surface == feedback.Search {
			e.Query, e.Rerank = "sky", ranker
		} else {
			e.User, e.ModelVersion = "u1", ranker
		}
		return e
	}
	imp, click := feedback.Impression, feedback.Click
	events := []feedback.Event{
		// poly: two lists of two; a click at rank 2 on the first, none on the second.
		ev(imp, "search", "s1", "poly", "a", 1), ev(imp, "search", "s1", "poly", "b", 2), ev(click, "search", "s1", "poly", "b", 2),
		ev(imp, "search", "s2", "poly", "a", 1), ev(imp, "search", "s2", "poly", "b", 2),
		// rbf: one list of two, clicks at ranks 2 and 1 (the first click by rank counts).
		ev(imp, "search", "s3", "rbf", "c", 1), ev(imp, "search", "s3", "rbf", "d", 2), ev(click, "search", "s3", "rbf", "d", 2), ev(click, "search", "s3", "rbf", "c", 1),
		// friends, model v7: one list of four, a click at rank 4.
		ev(imp, "friends", "s1", "v7", "x", 1), ev(imp, "friends", "s1", "v7", "y", 2), ev(imp, "friends", "s1", "v7", "z", 3), ev(imp, "friends", "s1", "v7", "w", 4),
		ev(click, "friends", "s1", "v7", "w", 4),
	}
	rep := Clicks(feedback.Collect(events))
	want := []ClickRow{
		{Surface: "search", Ranker: "rbf", Lists: 1, Impressions: 2, Clicks: 2, CTR: 1, CTRSE: 0, MRR: 1, MRRSE: 0},
		// CTR 1/4, SE sqrt(.25*.75/4); RRs 0.5 and 0: mean 0.25, SD sqrt(0.125), SE 0.25.
		{Surface: "search", Ranker: "poly", Lists: 2, Impressions: 4, Clicks: 1, CTR: 0.25, CTRSE: math.Sqrt(0.25 * 0.75 / 4), MRR: 0.25, MRRSE: 0.25},
		{Surface: "friends", Ranker: "v7", Lists: 1, Impressions: 4, Clicks: 1, CTR: 0.25, CTRSE: math.Sqrt(0.25 * 0.75 / 4), MRR: 0.25},
	}
	if rep.Events != len(events) || len(rep.Rows) != len(want) {
		t.Fatalf("report %+v", rep)
	}
	for i, w := range want {
		g := rep.Rows[i]
		if g.Surface != w.Surface || g.Ranker != w.Ranker || g.Lists != w.Lists || g.Impressions != w.Impressions || g.Clicks != w.Clicks ||
			math.Abs(g.CTR-w.CTR) > 1e-12 || math.Abs(g.CTRSE-w.CTRSE) > 1e-12 || math.Abs(g.MRR-w.MRR) > 1e-12 || math.Abs(g.MRRSE-w.MRRSE) > 1e-12 {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	if rep.Best["search"] != "rbf" || rep.Best["friends"] != "v7" || len(rep.Best) != 2 {
		t.Fatalf("best %v", rep.Best)
	}
}

// A click log from a position-based click model where "sharp" orders by
// relevance best: eval clicks must name it, beyond its standard error.
func TestClicksNameTheBestRanker(t *testing.T) {
	sim, err := feedback.Simulate(feedback.SimOptions{
		Rankers: []feedback.SimRanker{{Name: "random", Noise: 5}, {Name: "sharp", Noise: 0.1}, {Name: "blurred", Noise: 0.4}},
		Queries: 20, Items: 30, K: 10, Sessions: 6000, Relevant: 0.3, High: 0.8, Low: 0.1, Seed: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := Clicks(feedback.Collect(sim.Events))
	if rep.Best["search"] != "sharp" || len(rep.Rows) != 3 || rep.Rows[1].Ranker != "blurred" || rep.Rows[2].Ranker != "random" {
		t.Fatalf("rows %+v, best %v: want sharp, blurred, random", rep.Rows, rep.Best)
	}
	for _, i := range []int{0, 1} {
		a, b := rep.Rows[i], rep.Rows[i+1]
		if a.MRR-b.MRR < 2*math.Hypot(a.MRRSE, b.MRRSE) || a.CTR <= b.CTR {
			t.Errorf("%s over %s: MRR %.4f±%.4f vs %.4f±%.4f, CTR %.4f vs %.4f", a.Ranker, b.Ranker, a.MRR, a.MRRSE, b.MRR, b.MRRSE, a.CTR, b.CTR)
		}
	}
	var out bytes.Buffer
	PrintClicks(&out, rep)
	if !strings.Contains(out.String(), "best search ranker by MRR: sharp") {
		t.Fatalf("printed:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}
