// Package e2e drives the web pages in headless Chromium against a real
// server: a bleve index of demo drawings (real images, features computed
// here) and a generated demo network with a trained recommender.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/demo"
	_ "github.com/kernelrank/kernelrank/learners/kit/all"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/search"
	"github.com/kernelrank/kernelrank/server"
	"github.com/kernelrank/kernelrank/social"
	"github.com/kernelrank/kernelrank/social/live"
)

// adminToken is the server's admin token, typed into the user page.
const adminToken = "e2e-admin"

// corpusTags picks the demo drawings indexed: those with any of these tags
// (about 170), enough for visual neighbours, quick to ingest.
var corpusTags = []string{"fruit", "flower", "cat", "dog"}

// chromium returns the browser's path; without one the test skips, or
// fails under CI=true (.ci/run installs it).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (.ci/run installs Debian's chromium)")
	}
	t.Skip("chromium is not installed: apt-get install chromium to run the browser tests")
	return ""
}

// newServer serves the demo subset (returned too) and a 200-user demo
// network, with its default recommender trained.
func newServer(t *testing.T) (*httptest.Server, *index.Index) {
	t.Helper()
	return newServerWith(t, server.Config{})
}

// newServerWith is newServer with cfg's settings beside the corpus and the
// network.
func newServerWith(t *testing.T, cfg server.Config) (*httptest.Server, *index.Index) {
	t.Helper()
	dir := t.TempDir()
	jsonl, err := demo.Extract(filepath.Join(dir, "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	rep, err := index.IngestJSONL(context.Background(), ix, bytes.NewReader(pick(t, jsonl)), filepath.Dir(jsonl), index.IngestOptions{StopOnError: true})
	if err != nil || rep.Added < 100 {
		t.Fatalf("ingest: %+v, %v", rep, err)
	}
	net, err := demo.GenerateSocial(demo.DefaultSocialSeed, demo.SocialOptions{Users: 200, Groups: 12})
	if err != nil {
		t.Fatal(err)
	}
	if err := net.WriteDir(filepath.Join(dir, "social")); err != nil {
		t.Fatal(err)
	}
	store, err := cache.NewDirStore(filepath.Join(dir, "models"))
	if err != nil {
		t.Fatal(err)
	}
	life, stop := context.WithCancel(context.Background()) // ends the service's goroutines
	t.Cleanup(stop)
	svc, err := recommend.NewService(life, recommend.DirSource{Dir: filepath.Join(dir, "social"), Options: social.ImportOptions{StopOnError: true}},
		store, recommend.ServiceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := svc.Model(ctx, ""); err != nil {
		t.Fatal(err)
	}
	// The network is in a social store too, which the user page edits.
	people, err := live.OpenDir(filepath.Join(dir, "store"), live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(people.Close)
	if _, err := people.Import(ctx, svc.Dataset()); err != nil {
		t.Fatal(err)
	}
	people.SetOnChange(svc.Apply)
	cfg.Social, cfg.SocialStore, cfg.AdminToken, cfg.Search = svc, people, adminToken, search.New(ix, nil, search.Options{})
	srv := server.New(ix, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, ix
}

// pick returns the lines of the corpus file with a tag of corpusTags.
func pick(t *testing.T, jsonl string) []byte {
	t.Helper()
	f, err := os.Open(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var doc struct{ Tags []string }
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(doc.Tags, func(tag string) bool { return slices.Contains(corpusTags, tag) }) {
			out.Write(sc.Bytes())
			out.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// apiGet decodes an API answer into v.
func apiGet(t *testing.T, url string, v any) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(r.Body)
		t.Fatalf("GET %s: %d %s", url, r.StatusCode, b)
	}
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// browser starts headless Chromium with a fresh profile and the flags that
// keep it from reaching out to the (closed) network; it stops with the test.
func browser(t *testing.T, path string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	ctx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	ctx, cancelBrowser := chromedp.NewContext(ctx)
	t.Cleanup(func() { cancelBrowser(); cancelTimeout(); cancelAlloc() })
	return ctx
}

// shots saves full-page screenshots in $KERNELRANK_E2E_SCREENSHOTS, or a
// temporary directory, and logs their paths.
type shots struct {
	t   *testing.T
	dir string
}

func newShots(t *testing.T) shots {
	dir := os.Getenv("KERNELRANK_E2E_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return shots{t, dir}
}

func (s shots) take(ctx context.Context, name string) {
	s.t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		s.t.Fatal(err)
	}
	path := filepath.Join(s.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("screenshot: %s", path)
}

// run runs the steps in order, failing the test on an error.
func run(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Steps(steps...)); err != nil {
		t.Fatal(err)
	}
}

// shows waits until the page has an element matching sel, failing the
// test at once when the page shows an error instead.
func shows(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		const e = [...document.querySelectorAll('.error')].find(e => e.textContent);
		return e ? 'error: ' + e.textContent : document.querySelector(`+strconv.Quote(sel)+`) ? 'ok' : '';
	})()`))
	if err != nil {
		t.Fatalf("waiting for %s: %v", sel, err)
	}
	if got != "ok" {
		t.Fatalf("waiting for %s, the page shows %s", sel, got)
	}
}

// pageError opens url and returns the error the page shows.
func pageError(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	run(t, ctx, chromedp.Navigate(url), chromedp.WaitVisible(`#error:not(:empty)`))
	return eval[string](t, ctx, `document.getElementById('error').textContent`)
}

// eval returns the value of a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type hit struct {
	ID        string  `json:"id"`
	TextScore float64 `json:"text_score"`
	Voters    []struct {
		ID string `json:"id"`
	} `json:"voters"`
}

type searchAnswer struct {
	Results []hit `json:"results"`
}

// sameOrder says whether the page lists the API's results in its order.
func sameOrder(page []string, api []hit) bool {
	return slices.EqualFunc(page, api, func(id string, h hit) bool { return id == h.ID })
}

// TestPages types a query, compares the page's two orders with the API's,
// opens an explanation, shows an API error, opens a user page with its bar
// charts and the learners page.
func TestPages(t *testing.T) {
	path := chromium(t) // before the set-up, which takes a while
	ts, ix := newServer(t)
	ctx := browser(t, path)
	shot := newShots(t)
	var raw, ranked searchAnswer
	apiGet(t, ts.URL+"/v1/search?q=flower&k=10&rerank=raw", &raw)
	apiGet(t, ts.URL+"/v1/search?q=flower&k=10&voters=5", &ranked)
	if slices.EqualFunc(raw.Results, ranked.Results, func(a, b hit) bool { return a.ID == b.ID }) {
		t.Fatalf("the re-ranked order is the text order: nothing to compare (%v)", raw.Results)
	}

	run(t, ctx,
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitReady(`select[name=rerank] option`),
		chromedp.SendKeys(`input[name=q]`, "flower"),
		chromedp.SetValue(`input[name=k]`, "10"),
		chromedp.Click(`#search button`))
	shows(t, ctx, `#ranked > li`)
	rawIDs := eval[[]string](t, ctx, `[...document.querySelectorAll('#raw > li')].map(e => e.dataset.id)`)
	rankedIDs := eval[[]string](t, ctx, `[...document.querySelectorAll('#ranked > li')].map(e => e.dataset.id)`)
	if !sameOrder(rawIDs, raw.Results) || !sameOrder(rankedIDs, ranked.Results) {
		t.Errorf("page orders\n text %v\n re-ranked %v\nAPI\n text %v\n re-ranked %v", rawIDs, rankedIDs, raw.Results, ranked.Results)
	}

	// The top result's explanation: its scores and its voters' thumbnails.
	const voters = `[...document.querySelectorAll('#ranked > li:first-child ul.voters img')]`
	run(t, ctx,
		chromedp.Click(`#ranked > li:first-child summary`),
		chromedp.WaitVisible(`#ranked > li:first-child ul.voters img`))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](voters+`.every(i => i.complete)`)); err != nil {
		t.Fatal(err)
	}
	shot.take(ctx, "search")
	scoreText := eval[string](t, ctx, `document.querySelector('#ranked > li:first-child dl.scores dd').textContent`)
	loaded := eval[int](t, ctx, voters+`.filter(i => i.naturalWidth > 0).length`)
	top := ranked.Results[0]
	if scoreText != fmt.Sprintf("%.3f", top.TextScore) || loaded != len(top.Voters) || loaded == 0 {
		t.Errorf("explanation of %s: text score %q (API %v), %d voter thumbnails loaded, API lists %d", top.ID, scoreText, top.TextScore, loaded, len(top.Voters))
	}
	// It says in words what moved the top result, from its text rank.
	why := eval[string](t, ctx, `document.querySelector('#ranked > li:first-child .why').textContent`)
	was := slices.IndexFunc(raw.Results, func(h hit) bool { return h.ID == top.ID }) + 1
	want := "Tag match and visual votes agree: it keeps text rank 1"
	switch {
	case was == 0:
		want = fmt.Sprintf("Visual votes moved it up from below text rank %d", len(raw.Results))
	case was > 1:
		want = fmt.Sprintf("Visual votes moved it up %d from text rank %d", was-1, was)
	}
	if !strings.HasPrefix(why, want) || !strings.Contains(why, "share of the visual votes") {
		t.Errorf("the top result's explanation says %q, want it to start %q", why, want)
	}

	// An API error reaches the page: window 0 is refused with 400.
	if errText := pageError(t, ctx, ts.URL+"/?q=flower&window=0"); !strings.Contains(errText, "400") || !strings.Contains(errText, "window") {
		t.Errorf("error shown: %q", errText)
	}

	userPage(t, ctx, ts.URL, shot)
	userPageEdits(t, ctx, ts.URL, shot)
	learnersPage(t, ctx, ts.URL, shot)
	textOrderServed(t, ctx, ix)

	// Narrow screens stack the two orders.
	run(t, ctx,
		chromedp.EmulateViewport(420, 900),
		chromedp.Navigate(ts.URL+"/?q=flower&k=5"))
	shows(t, ctx, `#ranked > li`)
	shot.take(ctx, "search-narrow")
	left := eval[float64](t, ctx, `document.getElementById('raw').getBoundingClientRect().left`)
	right := eval[float64](t, ctx, `document.getElementById('ranked').getBoundingClientRect().left`)
	if left != right {
		t.Errorf("at 420 px the columns start at x = %v and %v: not stacked", left, right)
	}
}

// userPage opens u001's page and checks each suggested friend's bars
// against the API: one bar a modality, labelled as the API names it, in
// its order, then the similar pairs, the difference from a typical
// candidate in the caption; the exact parts' caption the log-odds; each
// group's explanation its scorer. Then an unknown user's page.
func userPage(t *testing.T, ctx context.Context, base string, shot shots) {
	t.Helper()
	var friends struct {
		Items []struct {
			User       string  `json:"user"`
			LogOdds    float64 `json:"log_odds"`
			Typical    float64 `json:"typical_log_odds"`
			Modalities []struct {
				Modality string `json:"modality"`
			} `json:"modalities"`
		} `json:"items"`
	}
	var groups struct {
		Items []struct {
			Scorer string `json:"scorer"`
		} `json:"items"`
	}
	apiGet(t, base+"/v1/users/u001/friends?k=10", &friends)
	apiGet(t, base+"/v1/users/u001/groups", &groups)
	run(t, ctx,
		chromedp.Navigate(base+"/users/u001"))
	shows(t, ctx, `#friends table.bars`)
	shows(t, ctx, `#groups tr`)
	shot.take(ctx, "user")
	run(t, ctx, chromedp.Click(`#friends > tr:first-child details summary`), chromedp.WaitVisible(`#friends > tr:first-child details table`))
	shot.take(ctx, "user-exact")
	users := eval[[]string](t, ctx, `[...document.querySelectorAll('#friends > tr')].map(r => r.querySelector('a').textContent)`)
	labels := eval[[][]string](t, ctx, `[...document.querySelectorAll('#friends > tr')].map(r => [...r.querySelectorAll(':scope > td > table.bars tbody th')].map(th => th.textContent))`)
	captions := eval[[]string](t, ctx, `[...document.querySelectorAll('#friends > tr')].map(r => r.querySelector(':scope > td > table.bars caption').textContent)`)
	exact := eval[[]string](t, ctx, `[...document.querySelectorAll('#friends details table.bars caption')].map(c => c.textContent)`)
	whys := eval[[]string](t, ctx, `[...document.querySelectorAll('#groups .why')].map(d => d.textContent)`)
	nonzero := eval[int](t, ctx, `[...document.querySelectorAll('#friends .bar span')].filter(s => s.getBoundingClientRect().width > 0).length`)
	// An unknown user's page says so.
	if errText := pageError(t, ctx, base+"/users/nobody"); !strings.Contains(errText, "404") || !strings.Contains(errText, "nobody") {
		t.Errorf("unknown user's page shows %q", errText)
	}
	if len(friends.Items) == 0 || len(users) != len(friends.Items) || len(exact) != len(users) || nonzero == 0 {
		t.Fatalf("user page lists %v with %d visible bars, %d exact tables; API: %d friends", users, nonzero, len(exact), len(friends.Items))
	}
	for i, f := range friends.Items {
		var want []string
		for _, m := range f.Modalities {
			want = append(want, m.Modality)
		}
		want = append(want, "similar pairs")
		if users[i] != f.User || !slices.Equal(labels[i], want) || !strings.HasSuffix(captions[i], fmt.Sprintf("%+.3f", f.LogOdds-f.Typical)) ||
			!strings.HasSuffix(exact[i], fmt.Sprintf("%.3f", f.LogOdds)) {
			t.Errorf("friend %d: page %s, bars %v, %q, %q; API %s, %v, %+.3f, log-odds %.3f", i, users[i], labels[i], captions[i], exact[i], f.User, want, f.LogOdds-f.Typical, f.LogOdds)
		}
	}
	if len(whys) != len(groups.Items) || len(whys) == 0 {
		t.Fatalf("%d group explanations, API %d groups", len(whys), len(groups.Items))
	}
	for i, g := range groups.Items {
		if !strings.HasPrefix(whys[i], "Scored by "+g.Scorer) {
			t.Errorf("group %d explained %q, API scorer %s", i, whys[i], g.Scorer)
		}
	}
}

// userPageEdits adds u001's first suggested friend and a group on its
// page, then removes them: each time the page's profile and the API's say
// so. A wrong token shows the API's 401.
func userPageEdits(t *testing.T, ctx context.Context, base string, shot shots) {
	t.Helper()
	var friends struct {
		Items []struct {
			User string `json:"user"`
		} `json:"items"`
	}
	apiGet(t, base+"/v1/users/u001/friends?k=1", &friends)
	if len(friends.Items) == 0 {
		t.Fatal("no friend suggested to u001")
	}
	friend := friends.Items[0].User
	var profile struct {
		Friends []string `json:"friends"`
		Groups  []string `json:"groups"`
	}
	run(t, ctx, chromedp.Navigate(base+"/users/u001"))
	shows(t, ctx, `#profile dd`)
	// click presses a button of the edit form and waits for its outcome.
	click := func(button string) string {
		t.Helper()
		run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('edit-status').textContent = ''; document.getElementById('edit-error').textContent = ''`),
			chromedp.Click(`#edit button[value="`+button+`"]`))
		got, err := chromedp.Run(ctx, chromedp.Poll[string](`document.getElementById('edit-status').textContent || document.getElementById('edit-error').textContent`))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	run(t, ctx, chromedp.SetValue(`#edit input[name=token]`, "wrong"), chromedp.SetValue(`#edit input[name=friend]`, friend))
	if got := click("PUT friends"); !strings.HasPrefix(got, "401") {
		t.Fatalf("a wrong token: the page shows %q", got)
	}
	run(t, ctx, chromedp.SetValue(`#edit input[name=token]`, adminToken), chromedp.SetValue(`#edit input[name=group]`, "e2e-walkers"))
	for _, step := range []struct {
		button string
		has    bool
	}{{"PUT friends", true}, {"PUT groups", true}, {"DELETE friends", false}, {"DELETE groups", false}} {
		if got := click(step.button); !strings.Contains(got, "data version") {
			t.Fatalf("%s: the page shows %q", step.button, got)
		}
		if step.button == "PUT groups" {
			shot.take(ctx, "user-edited")
		}
		apiGet(t, base+"/v1/users/u001", &profile)
		page := eval[string](t, ctx, `document.getElementById('profile').textContent`)
		name, list := friend, profile.Friends
		if strings.HasSuffix(step.button, "groups") {
			name, list = "e2e-walkers", profile.Groups
		}
		if slices.Contains(list, name) != step.has || strings.Contains(page, name) != step.has {
			t.Fatalf("after %s: the API lists %v, the page shows %q; %s should be there: %v", step.button, list, page, name, step.has)
		}
		if step.button == "PUT friends" {
			newFriendNotSuggested(t, ctx, base, friend)
		}
	}
}

// newFriendNotSuggested checks that u001's new friend has left its
// suggestions at once, in the API (folded into the served model, not
// retrained) and in the page's table, which the edit refreshed.
func newFriendNotSuggested(t *testing.T, ctx context.Context, base, friend string) {
	t.Helper()
	var api struct {
		FoldedIn bool `json:"folded_in"`
		Items    []struct {
			User string `json:"user"`
		} `json:"items"`
	}
	apiGet(t, base+"/v1/users/u001/friends?k=50", &api)
	if !api.FoldedIn || len(api.Items) == 0 {
		t.Fatalf("after the new friendship: folded_in %v, %d suggestions", api.FoldedIn, len(api.Items))
	}
	for _, it := range api.Items {
		if it.User == friend {
			t.Fatalf("the API still suggests the new friend %s", friend)
		}
	}
	shown := eval[[]string](t, ctx, `[...document.querySelectorAll('#friends tr td:first-child > a')].map(a => a.textContent)`)
	if len(shown) == 0 || slices.Contains(shown, friend) {
		t.Fatalf("the page suggests %v after befriending %s", shown, friend)
	}
}

// learnersPage checks that the learners page lists every registered
// learner, and opens the one its URL names with its parameters.
func learnersPage(t *testing.T, ctx context.Context, base string, shot shots) {
	t.Helper()
	var api struct {
		Learners []struct {
			Name   string            `json:"name"`
			Params []json.RawMessage `json:"params"`
		} `json:"learners"`
		Rerank []string `json:"rerank"`
	}
	apiGet(t, base+"/v1/learners", &api)
	const open = "npk-fused"
	run(t, ctx, chromedp.Navigate(base+"/learners#learner-"+open))
	shows(t, ctx, `#learners details[open] table`)
	shot.take(ctx, "learners")
	names := eval[[]string](t, ctx, `[...document.querySelectorAll('#learners details')].map(a => a.id.replace('learner-', ''))`)
	opened := eval[[]string](t, ctx, `[...document.querySelectorAll('#learners details[open]')].map(a => a.id)`)
	params := eval[int](t, ctx, `document.querySelectorAll('#learners details[open] tbody tr').length`)
	var want []string
	wantParams := -1
	for _, l := range api.Learners {
		want = append(want, l.Name)
		if l.Name == open {
			wantParams = len(l.Params)
		}
	}
	if len(want) == 0 || !slices.Equal(names, want) {
		t.Errorf("learners page lists %v, API %v", names, want)
	}
	if !slices.Equal(opened, []string{"learner-" + open}) || params != wantParams {
		t.Errorf("learners page opened %v with %d parameters; %s has %d", opened, params, open, wantParams)
	}
	// The re-rankers row names every re-ranker the API takes here, the
	// learners and the aliases among them (npk), not only the fixed ones.
	row := eval[string](t, ctx, `document.querySelector('#search dd').textContent`)
	for _, name := range api.Rerank {
		if !slices.Contains(strings.Split(row, ", "), name) {
			t.Errorf("the re-rankers row %q lacks %s", row, name)
		}
	}
	if !slices.Contains(api.Rerank, "npk") || !slices.Contains(api.Rerank, open) {
		t.Errorf("the API's re-rankers %v lack npk or %s", api.Rerank, open)
	}
}

// textOrderServed serves ix with a default chosen on validation queries
// whose answers are the text order's own top 10, so the text order (raw)
// is served; the search page then starts its right-hand column with the
// re-ranker best on those queries, and its note says why.
func textOrderServed(t *testing.T, ctx context.Context, ix *index.Index) {
	t.Helper()
	engine := search.New(ix, nil, search.Options{})
	var queries []search.LabelledQuery
	for _, q := range corpusTags {
		req := search.DefaultRequest(q)
		req.K, req.Rerank.Strategy = search.SelectCutoff, "raw"
		r, err := engine.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		lq := search.LabelledQuery{Query: q, Relevant: map[string]bool{}}
		for _, h := range r.Results {
			lq.Relevant[h.ID] = true
		}
		queries = append(queries, lq)
	}
	sel, err := engine.SelectDefault(ctx, queries)
	if err != nil || sel.Strategy != "raw" {
		t.Fatalf("selection %+v, %v: want the text order served", sel, err)
	}
	best := search.Scored{Precision: -1} // the first of the highest, as the page's
	for _, s := range sel.Precision {
		if s.Strategy != "raw" && s.Precision > best.Precision {
			best = s
		}
	}
	ts := httptest.NewServer(server.New(ix, server.Config{Search: engine}, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	t.Cleanup(ts.Close)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitReady(`select[name=rerank] option`))
	shows(t, ctx, `#rerank-note`)
	chosen := eval[string](t, ctx, `document.querySelector('select[name=rerank]').value`)
	note := eval[string](t, ctx, `document.getElementById('rerank-note').textContent`)
	if chosen != best.Strategy || !strings.Contains(note, "Served by default: the text order (raw)") || !strings.Contains(note, "starts with "+best.Strategy) {
		t.Errorf("with the text order served the page starts with %s (want %s, best on validation), note %q", chosen, best.Strategy, note)
	}
}
