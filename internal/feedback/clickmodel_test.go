package feedback

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"time"
)

// abTest is a click log of three rankers of 30 items a query, the top 10
// shown, with examination 1/rank: "sharp" orders by relevance with little
// noise, "blurred" with more, "random" with so much that it is about
// random. The rankers put the same item at different ranks, as the model
// needs to tell examination from relevance.
func abTest(t *testing.T, sessions int, seed uint64) Simulated {
	t.Helper()
	sim, err := Simulate(SimOptions{
		Rankers: []SimRanker{{"random", 5}, {"blurred", 0.4}, {"sharp", 0.1}},
		Queries: 20, Items: 30, K: 10, Sessions: sessions, Relevant: 0.3, High: 0.8, Low: 0.1, Seed: seed,
	})
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

func TestListsPairClicksWithImpressions(t *testing.T) {
	at := func(kind, session, item string, rank int) Event {
		return Event{Kind: kind, Surface: Search, Query: "q", Rerank: "r", Session: session, Item: item, Rank: rank, ClientTime: t0}
	}
	c := Collect([]Event{
		at(Impression, "s1", "b", 2), at(Impression, "s1", "a", 1), at(Impression, "s2", "a", 1),
		at(Click, "s1", "b", 2), at(Click, "s1", "b", 2), at(Click, "s2", "c", 3), // a click without its impression
		{Kind: Click, Surface: Friends, User: "u", ModelVersion: "v", Session: "s1", Item: "x", Rank: 1, ClientTime: t0},
	})
	want := []List{
		{Search, "s1", "q", "r", []Shown{{"q", "a", 1, false}, {"q", "b", 2, true}}},
		{Search, "s2", "q", "r", []Shown{{"q", "a", 1, false}, {"q", "c", 3, true}}},
	}
	if lists := c.Lists(Search); !reflect.DeepEqual(lists, want) {
		t.Fatalf("lists %v, want %v", lists, want)
	}
	friends := []List{{Friends, "s1", "u", "v", []Shown{{"u", "x", 1, true}}}}
	if lists := c.Lists(Friends); !reflect.DeepEqual(lists, friends) || c.Events() != 7 {
		t.Fatalf("friends lists %v, want %v; %d events, want 7", lists, friends, c.Events())
	}
}

// A relevant item shown low is clicked rarely; the click model must see
// its relevance through the examination it corrects for, where the raw
// click-through rate would call it irrelevant.
func TestJudgmentsRecoverTheClickModel(t *testing.T) {
	sim := abTest(t, 30000, 1)
	lists := Collect(sim.Events).Lists(Search)
	judged, m := Judgments(lists, JudgeOptions{})
	for k := 1; k <= 5; k++ {
		if got := m.Examine[k-1]; math.Abs(got-1/float64(k)) > 0.05 {
			t.Errorf("examination of rank %d: %.3f, want %.3f", k, got, 1/float64(k))
		}
	}
	if m.Iter >= 1000 {
		t.Errorf("EM did not converge in %d iterations", m.Iter)
	}
	// Raw click-through rates, for the items judged.
	shown, clicked := map[[2]string]int{}, map[[2]string]int{}
	for _, l := range lists {
		for _, s := range l.Items {
			shown[[2]string{s.Subject, s.Item}]++
			if s.Clicked {
				clicked[[2]string{s.Subject, s.Item}]++
			}
		}
	}
	right, wrong, lowCTR := 0, 0, 0
	for _, q := range judged {
		for _, item := range q.Relevant {
			if sim.Relevance[q.Query][item] == 0.8 {
				right++
			} else {
				wrong++
			}
			key := [2]string{q.Query, item}
			if float64(clicked[key])/float64(shown[key]) < 0.25 {
				lowCTR++
			}
		}
	}
	// Truly relevant items shown often enough to be judged.
	missed := 0
	for key, n := range shown {
		if n >= 5 && sim.Relevance[key[0]][key[1]] == 0.8 && !contains(judged, key[0], key[1]) {
			missed++
		}
	}
	t.Logf("judged %d relevant (%d wrongly), missed %d, %d of them with a raw click-through under 0.25; examination by rank %.3f; %d EM iterations", right+wrong, wrong, missed, lowCTR, m.Examine, m.Iter)
	if len(judged) != 20 || wrong > right/50 || missed > right/20 || lowCTR < right/4 {
		t.Fatalf("%d queries judged (want 20); %d right, %d wrong, %d missed; %d under 0.25 raw click-through", len(judged), right, wrong, missed, lowCTR)
	}
}

func contains(qs []Judgment, query, item string) bool {
	for _, q := range qs {
		if q.Query == query {
			return slices.Contains(q.Relevant, item)
		}
	}
	return false
}

func TestSimulateIsDeterministicAndChecksItsOptions(t *testing.T) {
	a, b := abTest(t, 50, 7), abTest(t, 50, 7)
	if len(a.Events) != len(b.Events) || len(a.Events) < 500 {
		t.Fatalf("%d and %d events", len(a.Events), len(b.Events))
	}
	for i := range a.Events {
		if a.Events[i] != b.Events[i] {
			t.Fatalf("event %d differs: %+v, %+v", i, a.Events[i], b.Events[i])
		}
		if err := a.Events[i].Validate(); err != nil || a.Events[i].ServerTime.Before(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("event %d %+v: %v", i, a.Events[i], err)
		}
	}
	if _, err := Simulate(SimOptions{Rankers: []SimRanker{{"r", 0}}, Queries: 1, Items: 1, K: 1, High: 2}); err == nil {
		t.Fatal("a relevance of 2 was taken")
	}
}
