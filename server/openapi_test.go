package server

import (
	"bytes"
	"context"
	"encoding/json"
	"image/color"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/kernelrank/kernelrank/internal/admission"
	"github.com/kernelrank/kernelrank/internal/jobs"
)

// loadOpenAPI loads the served document and validates it as OpenAPI 3.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	s, _ := newTestServer(t)
	rec, _ := do(t, s, "GET", "/v1/openapi.json", nil, "")
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), openAPIDoc) {
		t.Fatalf("GET /v1/openapi.json: %d, %d bytes; want 200 and the embedded document", rec.Code, rec.Body.Len())
	}
	doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("the OpenAPI document does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document is not valid OpenAPI 3: %v", err)
	}
	return doc
}

var ginParam = regexp.MustCompile(`[:*]([^/]+)`)

// TestOpenAPIMatchesRouter: every route of the router is in the document
// with its method, and every path and method of the document is a route.
func TestOpenAPIMatchesRouter(t *testing.T) {
	doc := loadOpenAPI(t)
	s, _ := newTestServer(t)
	var routes, documented []string
	for _, r := range s.engine.Routes() {
		routes = append(routes, r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}"))
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	slices.Sort(routes)
	slices.Sort(documented)
	for _, r := range routes {
		if _, found := slices.BinarySearch(documented, r); !found {
			t.Errorf("route %s is not in server/openapi.json", r)
		}
	}
	for _, d := range documented {
		if _, found := slices.BinarySearch(routes, d); !found {
			t.Errorf("server/openapi.json documents %s, which is no route", d)
		}
	}
}

// TestOpenAPIResponses checks requests and answers of every endpoint, good
// and bad, against the document: the answer's status must be documented for
// the operation and its JSON body must match the schema; a request answered
// 2xx must be valid by the document's parameters.
func TestOpenAPIResponses(t *testing.T) {
	doc := loadOpenAPI(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	features := make([]float64, 297)
	features[3] = 1
	newImage, _ := json.Marshal(map[string]any{"id": "added", "tags": []string{"cat"}, "features": features})
	plain, _ := newTestServer(t)
	social := newSocialServer(t, 30*time.Second)
	writable := newLiveServer(t)
	q := jobs.NewLocal((&stepper{}).handle, 0)
	defer q.Close()
	withJobs := newJobsServer(t, q)
	npk := url.QueryEscape(`{"rank":5}`)
	// An uploaded image: its file, header and thumbnail.
	pic := []byte(upload("pic", encodeImage(t, "png", 300, 150, color.RGBA{200, 0, 0, 255})))
	tooBig := append(append([]byte(`{"id":"big","tags":["cat"],"title":"`), bytes.Repeat([]byte("x"), 1<<20)...), `"}`...)
	// A client over its rate: 1 request, then 429 with Retry-After.
	limited, _ := newTestServer(t)
	limited.cfg.Limiter = admission.NewLimiter(0.001, 1, nil)
	events, _ := newEventsServer(t)
	event := []byte(`{"events":[` + goodEvent + `]}`)
	cases := []struct {
		s            *Server
		method, path string
		body         []byte
		auth         string
		want         int
	}{
		{plain, "GET", "/", nil, "", 200},
		{plain, "GET", "/learners", nil, "", 200},
		{plain, "GET", "/users/a", nil, "", 200},
		{plain, "GET", "/web/app.css", nil, "", 200},
		{plain, "HEAD", "/web/search.js", nil, "", 200},
		{plain, "GET", "/web/missing.js", nil, "", 404},
		{plain, "GET", "/healthz", nil, "", 200},
		{plain, "HEAD", "/healthz", nil, "", 200},
		{plain, "GET", "/readyz", nil, "", 200},
		{plain, "HEAD", "/readyz", nil, "", 200},
		{social, "GET", "/readyz", nil, "", 200},
		{plain, "GET", "/metrics", nil, "", 200},
		{plain, "GET", "/v1/openapi.json", nil, "", 200},
		{plain, "GET", "/v1/learners", nil, "", 200},
		{limited, "GET", "/v1/learners", nil, "", 200},
		{limited, "GET", "/v1/learners", nil, "", 429},
		{plain, "GET", "/v1/search?q=cat", nil, "", 200},
		{plain, "GET", "/v1/search?q=cat&k=5&rerank=raw", nil, "", 200},
		{plain, "GET", "/v1/search?q=cat+dog&k=5&window=30&rerank=poly&prior=text&affinity=shift&damping=0.5&seed=3&voters=0", nil, "", 200},
		{plain, "GET", "/v1/search?q=cat&rerank=npk&params=" + npk, nil, "", 200},
		{plain, "GET", "/v1/search?q=nothingmatches", nil, "", 200},
		{plain, "GET", "/v1/search", nil, "", 400},
		{plain, "GET", "/v1/search?q=cat&k=0", nil, "", 400},
		{plain, "GET", "/v1/search?q=cat&colour=red", nil, "", 400},
		{plain, "GET", "/v1/search?q=cat&rerank=nope", nil, "", 400},
		{plain, "GET", "/v1/search?q=cat&q=dog", nil, "", 400},
		{plain, "GET", "/v1/search?q=cat&k=%2B5", nil, "", 400},
		{plain, "GET", "/v1/search?q=cat&k=10&window=5", nil, "", 400},
		{plain, "GET", "/v1/search?q=cat&window=5&rerank=raw", nil, "", 200},
		{plain, "GET", "/v1/images/img01", nil, "", 200},
		{plain, "GET", "/v1/images/missing", nil, "", 404},
		{plain, "GET", "/v1/images/img01/thumbnail", nil, "", 404},
		{plain, "POST", "/v1/images", newImage, token, 200},
		{plain, "POST", "/v1/images", newImage, "", 401},
		{plain, "POST", "/v1/images", []byte(`{"id":`), token, 400},
		{plain, "POST", "/v1/images", tooBig, token, 413},
		{plain, "POST", "/v1/images", []byte(`{"id":"x","tags":["cat"],"colour":"red"}`), token, 400},
		{plain, "POST", "/v1/images", []byte(`[{"id":"x","tags":["cat"]},{"id":"x","tags":["dog"]}]`), token, 400},
		{plain, "POST", "/v1/images", pic, token, 200},
		{plain, "GET", "/v1/images/pic", nil, "", 200},
		{plain, "GET", "/v1/images/pic/thumbnail", nil, "", 200},
		{plain, "DELETE", "/v1/images/added", nil, token, 200},
		{plain, "DELETE", "/v1/images/added", nil, token, 404},
		{social, "GET", "/v1/users/a", nil, "", 200},
		{social, "GET", "/v1/users/nobody", nil, "", 404},
		{social, "GET", "/v1/users/a?k=3", nil, "", 400},
		{social, "GET", "/v1/users/a/friends?k=3", nil, "", 200},
		{social, "GET", "/v1/users/lone/friends", nil, "", 200},
		{social, "GET", "/v1/users/a/friends?k=0", nil, "", 400},
		{social, "GET", "/v1/users/a/groups?k=2&learner=uniform", nil, "", 200},
		{social, "GET", "/v1/users/a/groups?learner=nope", nil, "", 400},
		{plain, "GET", "/v1/users/a", nil, "", 404},
		{writable, "PUT", "/v1/users/n", []byte(`{"tags":["x"],"photos":[{"visual":[1,2],"time":"2010-06-01T12:00:00Z"}]}`), token, 200},
		{writable, "PUT", "/v1/users/n", []byte(`{"tags":[""]}`), token, 400},
		{writable, "PUT", "/v1/users/n", []byte(`{}`), "", 401},
		{social, "PUT", "/v1/users/n", []byte(`{}`), token, 501},
		{writable, "PUT", "/v1/users/n/friends/a", nil, token, 200},
		{writable, "PUT", "/v1/users/n/friends/nobody", nil, token, 404},
		{writable, "PUT", "/v1/users/n/groups/g1", nil, token, 200},
		{writable, "DELETE", "/v1/users/n/groups/g1", nil, token, 200},
		{writable, "DELETE", "/v1/users/n/friends/a", nil, token, 200},
		{writable, "POST", "/v1/social/batch", []byte(`{"ops":[{"op":"put_user","user":"m","profile":{}},{"op":"put_friend","user":"m","friend":"n"}]}`), token, 200},
		{writable, "POST", "/v1/social/batch", []byte(`{"ops":[{"op":"put_friend","user":"m","friend":"m"}]}`), token, 400},
		{writable, "DELETE", "/v1/users/n", nil, token, 200},
		{writable, "DELETE", "/v1/users/n", nil, token, 404},
		{writable, "GET", "/v1/status", nil, "", 200},
		{plain, "GET", "/v1/jobs", nil, token, 404},
		{withJobs, "POST", "/v1/jobs", []byte(`{"target":"social"}`), token, 202},
		{withJobs, "POST", "/v1/jobs", []byte(`{"target":"moon"}`), token, 400},
		{withJobs, "GET", "/v1/jobs?limit=5", nil, token, 200},
		{withJobs, "GET", "/v1/jobs/nope", nil, token, 404},
		{withJobs, "DELETE", "/v1/jobs/nope", nil, token, 404},
		{events, "POST", "/v1/events", event, "", 200},
		{events, "POST", "/v1/events", []byte(`{"events":[{"kind":"view"}]}`), "", 400},
		{events, "POST", "/v1/events", bytes.Repeat([]byte(" "), 70000), "", 413},
		{plain, "POST", "/v1/events", event, "", 404},
	}
	ctx := context.Background()
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	check := func(h http.Handler, method, path string, body []byte, auth string, header http.Header, want int) *httptest.ResponseRecorder {
		t.Helper()
		name := method + " " + path
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("%s: %d, want %d: %.300s", name, rec.Code, want, rec.Body.String())
		}
		// The document's router matches the absolute URL a client sends.
		docReq := req.Clone(ctx)
		docReq.URL.Scheme, docReq.URL.Host = "http", "127.0.0.1"
		docReq.Body = io.NopCloser(bytes.NewReader(body))
		route, params, err := router.FindRoute(docReq)
		if err != nil {
			t.Errorf("%s: not in the document: %v", name, err)
			return rec
		}
		in := &openapi3filter.RequestValidationInput{Request: docReq, PathParams: params, Route: route, Options: opts}
		if rec.Code < 300 {
			if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
				t.Errorf("%s answered %d but the document rejects the request: %v", name, rec.Code, err)
			}
		}
		checkResponse(t, name, in, rec)
		return rec
	}
	for _, tc := range cases {
		check(tc.s.Handler(), tc.method, tc.path, tc.body, tc.auth, nil, tc.want)
	}

	// The thumbnail's ETag answers 304; headers over the limit 431.
	etag := check(plain.Handler(), "GET", "/v1/images/pic/thumbnail", nil, "", nil, 200).Header().Get("ETag")
	if etag == "" {
		t.Error("the thumbnail has no ETag")
	}
	check(plain.Handler(), "GET", "/v1/images/pic/thumbnail", nil, "", http.Header{"If-None-Match": {etag}}, 304)
	big := http.Header{"X-Padding": {strings.Repeat("x", 65<<10)}}
	check(plain.Handler(), "GET", "/healthz", nil, "", big, 431)
	check(plain.Handler(), "GET", "/v1/search?q=cat", nil, "", big, 431)

	// A server that is starting: /healthz 200, /readyz 503 with its
	// progress, everything else 503 with Retry-After.
	boot := NewBoot(Timeouts{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	boot.SetProgress(Progress{Stage: "indexing", Done: 3, Total: 10})
	check(boot, "GET", "/healthz", nil, "", nil, 200)
	check(boot, "HEAD", "/healthz", nil, "", nil, 200)
	check(boot, "GET", "/readyz", nil, "", nil, 503)
	check(boot, "HEAD", "/readyz", nil, "", nil, 503)
	for _, path := range []string{"/", "/v1/search?q=cat", "/v1/images/img01/thumbnail", "/v1/users/a/friends"} {
		if rec := check(boot, "GET", path, nil, "", nil, 503); rec.Header().Get("Retry-After") == "" {
			t.Errorf("GET %s while starting: no Retry-After", path)
		}
	}
}

func checkResponse(t *testing.T, name string, in *openapi3filter.RequestValidationInput, rec *httptest.ResponseRecorder) {
	t.Helper()
	// openapi3filter skips HEAD requests and 301, 304, 307 and 308 answers
	// altogether: their status must be documented all the same.
	if in.Request.Method == http.MethodHead || slices.Contains([]int{301, 304, 307, 308}, rec.Code) {
		if in.Route.Operation.Responses.Status(rec.Code) == nil {
			t.Errorf("%s: answer %d is not documented", name, rec.Code)
		}
		return
	}
	ro := *in.Options // IncludeResponseStatus: an undocumented status fails
	// Only JSON bodies have a schema to meet.
	ro.ExcludeResponseBody = !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json")
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Options: &ro}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s: answer %d does not match the document: %v\n%.400s", name, rec.Code, err, rec.Body.String())
	}
}
