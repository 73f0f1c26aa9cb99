package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kernelrank/kernelrank/internal/feedback"
	"github.com/kernelrank/kernelrank/server"
)

// suggestions is the part of a friends or groups answer the pages report.
type suggestions struct {
	User         string `json:"user"`
	ModelVersion string `json:"model_version"`
	Items        []struct {
		User  string `json:"user"`
		Group string `json:"group"`
	} `json:"items"`
}

// TestPagesSendEvents runs a scripted session: a search (its two lists
// shown), a click on a re-ranked result, a user page (friends and groups
// shown), a click on a group, then a click on a suggested friend, whose page
// opens and shows its own suggestions. The log must hold exactly those
// impressions and clicks, one session id throughout.
func TestPagesSendEvents(t *testing.T) {
	path := chromium(t)
	events, err := feedback.OpenFileLog(t.TempDir(), feedback.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	ts, _ := newServerWith(t, server.Config{Events: events})
	ctx := browser(t, path)

	var raw, ranked struct {
		Query  string `json:"query"`
		Rerank struct {
			Strategy string `json:"strategy"`
		} `json:"rerank"`
		Results []hit `json:"results"`
	}
	apiGet(t, ts.URL+"/v1/search?q=flower&k=5&rerank=raw", &raw)
	apiGet(t, ts.URL+"/v1/search?q=flower&k=5&voters=5", &ranked)
	var friends, groups suggestions
	apiGet(t, ts.URL+"/v1/users/u001/friends?k=10", &friends)
	apiGet(t, ts.URL+"/v1/users/u001/groups", &groups)
	if len(friends.Items) < 3 || len(groups.Items) < 2 {
		t.Fatalf("u001 has %d friend and %d group suggestions: the script clicks the 3rd and the 2nd", len(friends.Items), len(groups.Items))
	}
	next := friends.Items[2].User
	var nextFriends, nextGroups suggestions
	apiGet(t, ts.URL+"/v1/users/"+next+"/friends?k=10", &nextFriends)
	apiGet(t, ts.URL+"/v1/users/"+next+"/groups", &nextGroups)

	// want counts the events the session must produce, by what they say.
	want := map[string]int{}
	add := func(kind, surface, subject, ranker, item string, rank int) {
		want[fmt.Sprintf("%s %s %s %s %s %d", kind, surface, subject, ranker, item, rank)]++
	}
	for _, j := range []struct {
		list   []hit
		ranker string
	}{{raw.Results, raw.Rerank.Strategy}, {ranked.Results, ranked.Rerank.Strategy}} {
		for i, h := range j.list {
			add("impression", "search", "flower", j.ranker, h.ID, i+1)
		}
	}
	add("click", "search", "flower", ranked.Rerank.Strategy, ranked.Results[1].ID, 2)
	shown := func(s suggestions, surface string) {
		for i, x := range s.Items {
			add("impression", surface, s.User, s.ModelVersion, x.User+x.Group, i+1)
		}
	}
	shown(friends, "friends")
	shown(groups, "groups")
	add("click", "groups", "u001", groups.ModelVersion, groups.Items[1].Group, 2)
	add("click", "friends", "u001", friends.ModelVersion, next, 3)
	shown(nextFriends, "friends")
	shown(nextGroups, "groups")
	total := 0
	for _, n := range want {
		total += n
	}

	run(t, ctx, chromedp.Navigate(ts.URL+"/?q=flower&k=5"))
	shows(t, ctx, `#ranked > li`)
	run(t, ctx, chromedp.Click(`#ranked > li:nth-child(2) img.thumb`))
	run(t, ctx, chromedp.Navigate(ts.URL+"/users/u001"))
	shows(t, ctx, `#friends table.bars`)
	shows(t, ctx, `#groups tr`)
	run(t, ctx, chromedp.Click(`#groups > tr:nth-child(2) > td:first-child`))
	run(t, ctx, chromedp.Click(`#friends > tr:nth-child(3) > td:first-child a`))
	// The link leaves the page: wait for the next one before polling it.
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if p, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`)); err == nil && p == "/users/"+next {
			break
		} else if time.Since(start) > 20*time.Second {
			t.Fatalf("the friend link did not open /users/%s (at %q, %v)", next, p, err)
		}
	}
	shows(t, ctx, `#friends table.bars`)
	shows(t, ctx, `#groups tr`)

	// The reports are sent in the background: wait for them, then a moment
	// more for any extra one.
	var got []feedback.Event
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < total && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		if got, err = feedback.All(context.Background(), events); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	if got, err = feedback.All(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	have := map[string]int{}
	sessions := map[string]bool{}
	for _, e := range got {
		have[fmt.Sprintf("%s %s %s %s %s %d", e.Kind, e.Surface, e.Subject(), e.Ranker(), e.Item, e.Rank)]++
		sessions[e.Session] = true
		if e.ClientTime.IsZero() || e.ServerTime.IsZero() {
			t.Errorf("event %+v lacks a time", e)
		}
	}
	if !maps.Equal(have, want) || len(sessions) != 1 {
		var missing, extra []string
		for k, n := range want {
			if have[k] != n {
				missing = append(missing, fmt.Sprintf("%s (want %d, got %d)", k, n, have[k]))
			}
		}
		for k, n := range have {
			if want[k] == 0 {
				extra = append(extra, fmt.Sprintf("%s (%d)", k, n))
			}
		}
		slices.Sort(missing)
		slices.Sort(extra)
		t.Fatalf("%d events stored, want %d, in one session (got %d)\nwrong counts: %v\nunexpected: %v", len(got), total, len(sessions), missing, extra)
	}
	t.Logf("%d events: %d distinct", total, len(want))
}
