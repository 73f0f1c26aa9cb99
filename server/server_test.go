package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	_ "github.com/kernelrank/kernelrank/learners/kit/all"
	"github.com/kernelrank/kernelrank/search"
	"github.com/prometheus/client_golang/prometheus"
)

const token = "secret-token"

// newTestServer serves a real on-disk index of 30 images in two visual
// clusters: "cat" images 0-19 (cluster A for 0-13, B for 14-19), "dog" 20-29.
func newTestServer(t *testing.T) (*Server, *index.Index) {
	t.Helper()
	return newServerWith(t, nil, nil)
}

// newCachedServer is newTestServer with an in-process cache, its metrics
// registered with the server's.
func newCachedServer(t *testing.T) (*Server, *index.Index) {
	t.Helper()
	mem, err := cache.NewMemory(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	reg := prometheus.NewRegistry()
	return newServerWith(t, reg, cache.NewLoader(mem, cache.NewMetrics(reg, mem.Backend())))
}

// newServerWith serves the index of newTestServer with metrics in reg and
// searches through ld, when they are not nil.
func newServerWith(t *testing.T, reg *prometheus.Registry, ld *cache.Loader) (*Server, *index.Index) {
	t.Helper()
	return newServerConfig(t, func(cfg *Config, ix *index.Index) {
		cfg.Registry = reg
		if ld != nil {
			cfg.Search = search.New(ix, ld, search.Options{})
		}
	})
}

// newServerConfig serves the index of newTestServer with the configuration
// edit makes of the tests' own (admin token, uploads, 1 MiB bodies).
func newServerConfig(t *testing.T, edit func(*Config, *index.Index)) (*Server, *index.Index) {
	t.Helper()
	dir := t.TempDir()
	ix, err := index.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	docs := make([]index.Doc, 30)
	for i := range docs {
		tags := []string{"cat"}
		if i >= 20 {
			tags = []string{"dog"}
		}
		if i%3 == 0 {
			tags = append(tags, "grass")
		}
		f := make([]float32, 297)
		base := 0
		if i >= 14 {
			base = 100
		}
		for j := 0; j < 5; j++ {
			// i/1000 keeps every vector distinct: identical ones would
			// vote as one (rerank's near-duplicates).
			f[base+j] = 1 + float32((i*7+j)%5)/10 + float32(i)/1000
		}
		docs[i] = index.Doc{ID: fmt.Sprintf("img%02d", i), Tags: tags, Title: fmt.Sprintf("image %d", i), Features: f}
	}
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
	cfg := Config{AdminToken: token, ImageDir: filepath.Join(dir, "uploads"), MaxBodyBytes: 1 << 20}
	edit(&cfg, ix)
	s := New(ix, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return s, ix
}

func do(t *testing.T, s *Server, method, target string, body []byte, auth string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	var out map[string]any
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: response is not JSON: %v: %s", method, target, err, rec.Body.String())
		}
	}
	return rec, out
}

func TestSearch(t *testing.T) {
	s, _ := newTestServer(t)
	rec, body := do(t, s, "GET", "/v1/search?q=cat&k=5&rerank=rbf", nil, "")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if body["total"].(float64) != 20 || body["window"].(float64) != 20 {
		t.Fatalf("total/window = %v/%v, want 20/20", body["total"], body["window"])
	}
	results := body["results"].([]any)
	if len(results) != 5 {
		t.Fatalf("%d results, want 5", len(results))
	}
	prev := 2.0
	for i, r := range results {
		r := r.(map[string]any)
		if int(r["rank"].(float64)) != i+1 {
			t.Errorf("rank %v at position %d", r["rank"], i)
		}
		vr := r["visualrank"].(float64)
		if vr > prev {
			t.Errorf("results not sorted by VisualRank: %v after %v", vr, prev)
		}
		prev = vr
		// The 14 images of cluster A outvote the 6 of cluster B.
		var id int
		fmt.Sscanf(r["id"].(string), "img%d", &id)
		if id >= 14 {
			t.Errorf("minority-cluster image %s in the top 5", r["id"])
		}
		if len(r["voters"].([]any)) == 0 {
			t.Errorf("result %s has no voters", r["id"])
		}
	}
	for _, q := range []string{"rerank=raw", "rerank=text", "rerank=npk", "learner=hsicnpk&params=" + url.QueryEscape(`{"rank":5}`), "rerank=intersection&prior=text"} {
		rec, body := do(t, s, "GET", "/v1/search?q=cat+grass&"+q, nil, "")
		if rec.Code != 200 {
			t.Errorf("%s: status %d: %s", q, rec.Code, rec.Body)
			continue
		}
		if n := len(body["results"].([]any)); n != 20 {
			t.Errorf("%s: %d results, want the 20 cat or grass images", q, n)
		}
	}
}

func TestBadInputGetsClearErrors(t *testing.T) {
	plain, _ := newTestServer(t)
	cached, _ := newCachedServer(t)
	for _, s := range []*Server{plain, cached} {
		testBadInput(t, s)
	}
}

func testBadInput(t *testing.T, s *Server) {
	long := strings.Repeat("a", 2000)
	cases := map[string]int{
		"/v1/search":                            400,
		"/v1/search?q=+++":                      400,
		"/v1/search?q=" + long:                  400,
		"/v1/search?q=cat&k=0":                  400,
		"/v1/search?q=cat&k=1001":               400,
		"/v1/search?q=cat&k=ten":                400,
		"/v1/search?q=cat&window=0":             400,
		"/v1/search?q=cat&rerank=nope":          400,
		"/v1/search?q=cat&learner=nope":         400,
		"/v1/search?q=cat&rerank=rbf&learner=x": 400,
		"/v1/search?q=cat&params=%7Bbad":        400,
		"/v1/search?q=cat&rerank=rbf&params=" + url.QueryEscape(`{"gamma":1}`): 400,
		"/v1/search?q=cat&rerank=npk&params=" + url.QueryEscape(`{"rank":-1}`): 400,
		"/v1/search?q=cat&prior=zipf":                                          400,
		"/v1/search?q=cat&damping=1":                                           400,
		"/v1/search?q=cat&colour=red":                                          400,
		"/v1/images/no-such-image":                                             404,
		"/v1/learners?verbose=1":                                               400,
		"/v1/images/no-such-image?size=2":                                      400,
		"/v1/images/no-such-image/thumbnail?w=64":                              400,
		"/v1/images/no-such-image/thumbnail":                                   404,
		"/no/such/route":                                                       404,
	}
	for target, want := range cases {
		rec, body := do(t, s, "GET", target, nil, "")
		if rec.Code != want {
			t.Errorf("%s: status %d, want %d (%s)", target, rec.Code, want, rec.Body)
			continue
		}
		e, ok := body["error"].(map[string]any)
		if !ok || e["code"] == "" || e["message"] == "" {
			t.Errorf("%s: error body %s, want {\"error\":{\"code\",\"message\"}}", target, rec.Body)
		}
	}
	// A query matching nothing is not an error: an empty list.
	rec, body := do(t, s, "GET", "/v1/search?q=zebra", nil, "")
	if rec.Code != 200 || len(body["results"].([]any)) != 0 {
		t.Errorf("no-match query: %d %s", rec.Code, rec.Body)
	}
}

func TestSearchCache(t *testing.T) {
	s, ix := newCachedServer(t)
	get := func(target, want string) map[string]any {
		t.Helper()
		rec, body := do(t, s, "GET", target, nil, "")
		if rec.Code != 200 {
			t.Fatalf("%s: status %d: %s", target, rec.Code, rec.Body)
		}
		if got := body["rerank"].(map[string]any)["cache"]; got != want {
			t.Fatalf("%s: rerank.cache %v, want %s", target, got, want)
		}
		return body
	}
	miss := get("/v1/search?q=cat&k=5", "miss")
	hit := get("/v1/search?q=Cat&k=5", "hit")
	if !reflect.DeepEqual(hit["results"], miss["results"]) || hit["query"] != "Cat" || hit["text_ms"] != 0.0 {
		t.Errorf("hit %v\nmiss %v", hit, miss)
	}
	npk := get("/v1/search?q=cat&k=5&rerank=npk", "miss")
	if kc := npk["rerank"].(map[string]any)["kernel_cache"]; kc != "miss" {
		t.Errorf("first npk search: kernel_cache %v, want miss", kc)
	}
	npk = get("/v1/search?q=cat&k=3&rerank=npk", "miss")
	if kc := npk["rerank"].(map[string]any)["kernel_cache"]; kc != "hit" {
		t.Errorf("npk with another k: kernel_cache %v, want hit", kc)
	}
	// Adding an image changes the corpus version: the next search misses.
	if err := ix.Add([]index.Doc{{ID: "new", Tags: []string{"cat"}, Features: make([]float32, 297)}}); err != nil {
		t.Fatal(err)
	}
	if body := get("/v1/search?q=cat&k=5", "miss"); body["total"] != 21.0 {
		t.Errorf("after adding a cat: total %v, want 21", body["total"])
	}
	rec, _ := do(t, s, "GET", "/metrics", nil, "")
	if !strings.Contains(rec.Body.String(), `kernelrank_cache_lookups_total{kind="ranking",result="hit"} 1`) {
		t.Errorf("/metrics lacks the cache's ranking hit:\n%s", rec.Body)
	}
	plain, _ := newTestServer(t)
	rec, body := do(t, plain, "GET", "/v1/search?q=cat", nil, "")
	if rec.Code != 200 || body["rerank"].(map[string]any)["cache"] != "off" {
		t.Errorf("server without a cache: %d %s", rec.Code, rec.Body)
	}
}

func pngBase64(t *testing.T, c color.Color) string {
	img := image.NewRGBA(image.Rect(0, 0, 300, 200))
	for y := 0; y < 200; y++ {
		for x := 0; x < 300; x++ {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

func TestAdminImages(t *testing.T) {
	s, ix := newTestServer(t)
	doc := []byte(`{"id":"new1","tags":["cat","sofa"],"image_base64":"` + pngBase64(t, color.RGBA{200, 10, 10, 255}) + `"}`)
	for _, auth := range []string{"", "wrong"} {
		if rec, _ := do(t, s, "POST", "/v1/images", doc, auth); rec.Code != 401 {
			t.Errorf("auth %q: status %d, want 401", auth, rec.Code)
		}
	}
	if ix.Count() != 30 {
		t.Fatalf("unauthorised POST changed the index: %d images", ix.Count())
	}
	bad := map[string][]byte{
		"malformed JSON":    []byte(`{"id":`),
		"empty array":       []byte(`[]`),
		"corrupt image":     []byte(`{"id":"x1","tags":["cat"],"image_base64":"` + base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nbroken")) + `"}`),
		"not base64":        []byte(`{"id":"x2","tags":["cat"],"image_base64":"***"}`),
		"wrong feature dim": []byte(`{"id":"x3","tags":["cat"],"features":[1,2,3]}`),
		"no tags":           []byte(`{"id":"x4","features":[]}`),
		"server path":       []byte(`{"id":"x5","tags":["cat"],"image":"/etc/passwd"}`),
		"bad id":            []byte(`{"id":"a/b","tags":["cat"],"image_base64":"` + pngBase64(t, color.White) + `"}`),
	}
	for name, body := range bad {
		rec, _ := do(t, s, "POST", "/v1/images", body, token)
		if rec.Code != 400 {
			t.Errorf("%s: status %d, want 400 (%s)", name, rec.Code, rec.Body)
		}
	}
	if ix.Count() != 30 {
		t.Fatalf("rejected POSTs changed the index: %d images", ix.Count())
	}
	if rec, _ := do(t, s, "POST", "/v1/images", bytes.Repeat([]byte("x"), 2<<20), token); rec.Code != 413 {
		t.Errorf("oversized body: status %d, want 413", rec.Code)
	}
	rec, _ := do(t, s, "POST", "/v1/images", doc, token)
	if rec.Code != 200 || ix.Count() != 31 {
		t.Fatalf("add: status %d (%s), %d images", rec.Code, rec.Body, ix.Count())
	}
	rec, _ = do(t, s, "GET", "/v1/images/new1/thumbnail", nil, "")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("thumbnail: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	thumb, err := png.Decode(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b := thumb.Bounds(); b.Dx() != 256 || b.Dy() != 170 {
		t.Errorf("thumbnail is %dx%d, want 256x170", b.Dx(), b.Dy())
	}
	if r, _, _, _ := thumb.At(5, 5).RGBA(); r>>8 != 200 {
		t.Errorf("thumbnail colour red = %d, want 200", r>>8)
	}
	rec, body := do(t, s, "GET", "/v1/search?q=sofa", nil, "")
	if rec.Code != 200 {
		t.Fatalf("search for the added image: %d %s", rec.Code, rec.Body)
	}
	if res := body["results"].([]any); len(res) != 1 || !strings.HasSuffix(res[0].(map[string]any)["thumbnail"].(string), "/new1/thumbnail") {
		t.Errorf("the added image is not searchable with its thumbnail: %v", body)
	}
	if rec, _ := do(t, s, "DELETE", "/v1/images/new1", nil, token); rec.Code != 200 {
		t.Fatalf("delete: %d", rec.Code)
	}
	if rec, _ := do(t, s, "GET", "/v1/images/new1", nil, ""); rec.Code != 404 || ix.Count() != 30 {
		t.Fatalf("deleted image still there: %d, %d images", rec.Code, ix.Count())
	}
}

func TestLearnersAndHealth(t *testing.T) {
	s, _ := newTestServer(t)
	rec, body := do(t, s, "GET", "/v1/learners", nil, "")
	if rec.Code != 200 {
		t.Fatal(rec.Code)
	}
	found := false
	for _, l := range body["learners"].([]any) {
		l := l.(map[string]any)
		if l["name"] == "hsicnpk" {
			found = l["kind"] == "kernel" && len(l["params"].([]any)) > 0
		}
	}
	if !found {
		t.Errorf("hsicnpk missing or incomplete in %s", rec.Body)
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics", "/"} {
		if rec, _ := do(t, s, "GET", p, nil, ""); rec.Code != 200 {
			t.Errorf("%s: %d", p, rec.Code)
		}
	}
	if rec, _ := do(t, s, "POST", "/v1/search?q=cat", nil, ""); rec.Code != 405 {
		t.Errorf("POST /v1/search: %d, want 405", rec.Code)
	}
}
