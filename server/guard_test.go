package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/internal/admission"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"github.com/kernelrank/kernelrank/search"
	"github.com/prometheus/client_golang/prometheus"
)

func init() { learnertest.RegisterPanicking() }

func errorMessageOf(t *testing.T, body map[string]any) string {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	if !ok || e["code"] == "" {
		t.Fatalf("body %v, want {\"error\":{\"code\",\"message\"}}", body)
	}
	return e["message"].(string)
}

// Every bad input (parameters out of range, learners that cannot re-rank,
// malformed requests) gets a JSON error with the right status and a message
// that says what is wrong.
func TestBadInputsNameTheProblem(t *testing.T) {
	s, _ := newCachedServer(t)
	p := func(js string) string { return "&params=" + url.QueryEscape(js) }
	for _, c := range []struct {
		target string
		status int
		want   string
	}{
		{"/v1/search?q=cat&rerank=npk" + p(`{"C":1e200}`), 400, `parameter "C": must be in (0, 1e+06], got 1e+200`},
		{"/v1/search?q=cat&rerank=npk" + p(`{"budget":-1}`), 400, `parameter "budget": must be in (0, 1e+06]`},
		{"/v1/search?q=cat&rerank=rbf" + p(`{"scale":1e300}`), 400, `parameter "scale"`},
		{"/v1/search?q=cat&rerank=npk" + p(`{"C":1e400}`), 400, `parameter "C": want a number`},
		{"/v1/search?q=cat&damping=0", 400, "damping must be a number in the open interval (0, 1), got \"0\""},
		{"/v1/search?q=cat&damping=-0.5", 400, "damping"},
		{"/v1/search?q=cat&damping=NaN", 400, "damping"},
		{"/v1/search?q=cat&rerank=ploy", 400, `unknown re-ranker "ploy": use a strategy (intersection, linear, poly, raw, rbf, text)`},
		{"/v1/search?q=cat&rerank=ploy", 400, "hsicnpk, influence-mkl, npk, npk-fused"},
		{"/v1/search?q=cat&rerank=lpmkl", 400, "lpmkl cannot re-rank a search: it needs labels"},
		{"/v1/search?q=cat&learner=spe", 400, "spe cannot re-rank a search: it outputs embedding"},
		{"/v1/search?q=cat&rerank=npk-fused" + p(`{"max_iter":1e7}`), 400, `parameter "max_iter"`},
	} {
		rec, body := do(t, s, "GET", c.target, nil, "")
		if rec.Code != c.status || !strings.Contains(errorMessageOf(t, body), c.want) {
			t.Errorf("%s: %d %s, want %d saying %q", c.target, rec.Code, rec.Body, c.status, c.want)
		}
	}
	if rec, _ := do(t, s, "GET", "/v1/search?q=cat&damping=0.5&rerank=intersection", nil, ""); rec.Code != 200 {
		t.Errorf("damping 0.5 with intersection: %d %s", rec.Code, rec.Body)
	}
	social := newSocialServer(t, time.Minute)
	rec, body := do(t, social, "GET", "/v1/users/a?foo=1", nil, "")
	if rec.Code != 400 || !strings.Contains(errorMessageOf(t, body), `unknown query parameter "foo": this endpoint takes none`) {
		t.Errorf("/v1/users/a?foo=1: %d %s", rec.Code, rec.Body)
	}
}

// A panic in a learner is a JSON 500 with the request id, logged and
// counted; under the cache (singleflight's goroutine) it does not kill the
// process either.
func TestLearnerPanicIsAJSON500(t *testing.T) {
	for name, s := range map[string]*Server{"plain": first(newTestServer(t)), "cached": first(newCachedServer(t))} {
		var logged strings.Builder
		s.log = slog.New(slog.NewTextHandler(&logged, nil))
		req := httptest.NewRequest("GET", "/v1/search?q=cat&rerank=test-panic", nil)
		req.Header.Set("X-Request-ID", "req-42")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != 500 || rec.Header().Get("X-Request-Id") != "req-42" ||
			rec.Body.String() != `{"error":{"code":"internal","message":"internal error (request req-42)"}}` {
			t.Errorf("%s: %d %v %s", name, rec.Code, rec.Header(), rec.Body)
		}
		if l := logged.String(); !strings.Contains(l, "request_id=req-42") || !strings.Contains(l, "insufficient length") || !strings.Contains(l, "panicking.Fit") {
			t.Errorf("%s: the log lacks the request id, the panic or its stack:\n%s", name, l)
		}
		rec, _ = do(t, s, "GET", "/metrics", nil, "")
		if !strings.Contains(rec.Body.String(), `kernelrank_panics_total{where="learner"} 1`) {
			t.Errorf("%s: panics not counted", name)
		}
	}
}

func first[A, B any](a A, _ B) A { return a }

// Answers gin would give in HTML or plain text are JSON; HEAD works on the
// health endpoints.
func TestProtocolAnswersAreJSON(t *testing.T) {
	s, _ := newTestServer(t)
	rec, body := do(t, s, "GET", "/v1/search/?q=cat", nil, "")
	if rec.Code != 301 || rec.Header().Get("Location") != "/v1/search?q=cat" || !strings.Contains(errorMessageOf(t, body), "/v1/search") {
		t.Errorf("trailing slash: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if rec, _ := do(t, s, "GET", "/v1/images/img01/", nil, ""); rec.Code != 301 || rec.Header().Get("Location") != "/v1/images/img01" {
		t.Errorf("trailing slash after a :param: %d %v", rec.Code, rec.Header())
	}
	if rec, body := do(t, s, "GET", "/v1/nothing/", nil, ""); rec.Code != 404 || errorMessageOf(t, body) == "" {
		t.Errorf("unknown path with a slash: %d %s", rec.Code, rec.Body)
	}
	if rec, body := do(t, s, "DELETE", "/v1/search", nil, ""); rec.Code != 405 || errorMessageOf(t, body) == "" {
		t.Errorf("405: %d %s", rec.Code, rec.Body)
	}
	req := httptest.NewRequest("GET", "/v1/search?q=cat", nil)
	req.Header.Set("X-Padding", strings.Repeat("x", 70<<10))
	big := httptest.NewRecorder()
	s.Handler().ServeHTTP(big, req)
	if big.Code != 431 || !strings.Contains(big.Body.String(), `"code":"headers_too_large"`) {
		t.Errorf("70 KiB of headers: %d %s", big.Code, big.Body)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if rec, _ := do(t, s, "HEAD", path, nil, ""); rec.Code != 200 {
			t.Errorf("HEAD %s: %d", path, rec.Code)
		}
	}
	rec, body = do(t, s, "GET", "/v1/search?q=cat&rerank=npk", nil, "")
	r := body["rerank"].(map[string]any)
	if rec.Code != 200 || r["kernel_ms"] == nil || r["rank_ms"] == nil || r["kernel_ns"] != nil || body["text_ms"] == nil {
		t.Errorf("timings: want text_ms, kernel_ms and rank_ms: %s", rec.Body)
	}
}

// /v1/learners says which learners and strategies can re-rank a search
// here, and why not.
func TestLearnersSayWhetherTheyRerank(t *testing.T) {
	s, _ := newTestServer(t)
	_, body := do(t, s, "GET", "/v1/learners", nil, "")
	got := map[string]any{}
	for _, l := range body["learners"].([]any) {
		l := l.(map[string]any)
		got[l["name"].(string)] = l["rerank"]
		if l["rerank"] == false && l["rerank_reason"] == nil {
			t.Errorf("%s cannot re-rank and says not why", l["name"])
		}
		if _, ok := l["params"]; !ok || l["kind"] == nil {
			t.Errorf("%s lost its spec: %v", l["name"], l)
		}
	}
	if got["hsicnpk"] != true || got["npk-fused"] != true || got["poly"] != true || got["raw"] != true ||
		got["lpmkl"] != false || got["spe"] != false || got["mklr"] != false {
		t.Errorf("rerank flags %v", got)
	}
	var strategies []string
	for _, st := range body["strategies"].([]any) {
		st := st.(map[string]any)
		if st["rerank"] != true {
			t.Errorf("strategy %v cannot re-rank the test corpus", st)
		}
		strategies = append(strategies, st["name"].(string))
	}
	if want := []string{"intersection", "linear", "poly", "raw", "rbf", "text"}; !slices.Equal(strategies, want) {
		t.Errorf("strategies %v, want the fixed plug-ins %v", strategies, want)
	}
	// rerank lists every name a search takes here: each plug-in marked
	// rerank, and the aliases.
	var names []string
	for _, v := range body["rerank"].([]any) {
		names = append(names, v.(string))
	}
	for name, can := range got {
		if slices.Contains(names, name) != (can == true) {
			t.Errorf("%s: rerank %v, listed in rerank: %v", name, can, slices.Contains(names, name))
		}
	}
	if !slices.Contains(names, "npk") {
		t.Errorf("rerank %v lacks the alias npk", names)
	}
}

// Over its rate a client gets 429 with Retry-After; the probes are not
// limited.
func TestRateLimit(t *testing.T) {
	s, _ := newTestServer(t)
	reg := prometheus.NewRegistry()
	s.cfg.Limiter = admission.NewLimiter(0.5, 2, admission.NewMetrics(reg))
	for i := 0; i < 2; i++ {
		if rec, _ := do(t, s, "GET", "/v1/search?q=cat&rerank=raw", nil, ""); rec.Code != 200 {
			t.Fatalf("request %d within the burst: %d", i, rec.Code)
		}
	}
	rec, body := do(t, s, "GET", "/v1/learners", nil, "")
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "2" || !strings.Contains(errorMessageOf(t, body), "too many requests") {
		t.Errorf("over the rate: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if rec, _ := do(t, s, "GET", path, nil, ""); rec.Code != 200 {
			t.Errorf("%s limited: %d", path, rec.Code)
		}
	}
	// X-Forwarded-For does not pick the bucket: the peer address does.
	req := httptest.NewRequest("GET", "/v1/learners", nil)
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	forged := httptest.NewRecorder()
	s.Handler().ServeHTTP(forged, req)
	if forged.Code != 429 {
		t.Errorf("a forged X-Forwarded-For escaped the limit: %d", forged.Code)
	}
}

// An expensive re-ranking that finds every slot taken gets 503 with
// Retry-After once the wait is over; a cheap one is served meanwhile (the
// gate itself is tested in search, over windows the cost model deems
// expensive).
func TestBusyIs503(t *testing.T) {
	s, ix := newTestServer(t)
	gate := admission.NewGate(1, time.Millisecond, nil)
	s.images = search.New(ix, nil, search.Options{Expensive: gate})
	release, err := gate.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if rec, _ := do(t, s, "GET", "/v1/search?q=cat&rerank=poly", nil, ""); rec.Code != 200 {
		t.Fatalf("cheap request with the gate full: %d %s", rec.Code, rec.Body)
	}
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	c.Request = httptest.NewRequest("GET", "/v1/search?q=cat", nil)
	s.searchError(c, fmt.Errorf("search: %w", admission.ErrBusy))
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), `"code":"busy"`) {
		t.Errorf("busy: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}

func TestBoot(t *testing.T) {
	b := NewBoot(Timeouts{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.SetProgress(Progress{Stage: "building the demo index", Done: 500, Total: 4000})
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		b.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	if rec := get("/readyz"); rec.Code != 503 || rec.Body.String() != `{"status":"starting","stage":"building the demo index","done":500,"total":4000}`+"\n" {
		t.Errorf("/readyz while starting: %d %s", rec.Code, rec.Body)
	}
	if rec := get("/healthz"); rec.Code != 200 {
		t.Errorf("/healthz while starting: %d", rec.Code)
	}
	if rec := get("/v1/search?q=cat"); rec.Code != 503 || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), `"message":"the server is starting: building the demo index (500 of 4000)"`) {
		t.Errorf("a search while starting: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	s, _ := newTestServer(t)
	b.Ready(s)
	if rec := get("/v1/search?q=cat"); rec.Code != 200 {
		t.Errorf("a search once ready: %d %s", rec.Code, rec.Body)
	}
}
