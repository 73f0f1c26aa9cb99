package server

import (
	"image/color"
	"maps"
	"strings"
	"testing"
	"time"
)

// Requests whose meaning is ambiguous get a 400 that says why: a repeated
// query parameter on any endpoint, an integer not in canonical decimal, a
// window smaller than k.
func TestAmbiguousQueriesAre400(t *testing.T) {
	s, _ := newTestServer(t)
	for target, want := range map[string]string{
		"/v1/search?q=cat&q=dog":         `query parameter "q" is given 2 times`,
		"/v1/search?q=cat&k=2&k=2":       `query parameter "k" is given 2 times`,
		"/v1/learners?x=1&x=1":           `query parameter "x" is given 2 times`,
		"/readyz?probe=1&probe=2":        `query parameter "probe" is given 2 times`,
		"/v1/search?q=cat&k=%2B5":        `k must be an integer from 1 to 1000, got "+5"`,
		"/v1/search?q=cat&k=05":          `k must be an integer from 1 to 1000, got "05"`,
		"/v1/search?q=cat&k=+5":          `k must be an integer from 1 to 1000, got " 5"`,
		"/v1/search?q=cat&seed=-0":       `seed must be an integer from 0 to 2147483647, got "-0"`,
		"/v1/search?q=cat&k=10&window=5": "window 5 is smaller than k 10: a search returns at most window results",
	} {
		rec, body := do(t, s, "GET", target, nil, "")
		if rec.Code != 400 || !strings.Contains(errorMessageOf(t, body), want) {
			t.Errorf("%s: %d %s, want 400 saying %q", target, rec.Code, rec.Body, want)
		}
	}
	for target, results := range map[string]int{
		"/v1/search?q=cat&k=5&window=5&rerank=raw": 5,
		"/v1/search?q=cat&k=5&seed=0&rerank=raw":   5,
		"/v1/search?q=cat&window=3&rerank=raw":     3, // without k, the window bounds the results
		"/readyz?probe=1":                          -1,
	} {
		rec, body := do(t, s, "GET", target, nil, "")
		if got, _ := body["results"].([]any); rec.Code != 200 || results >= 0 && len(got) != results {
			t.Errorf("%s: %d %s, want 200 with %d results", target, rec.Code, rec.Body, results)
		}
	}
	social := newSocialServer(t, 30*time.Second)
	if rec, body := do(t, social, "GET", "/v1/users/a/friends?k=1e1", nil, ""); rec.Code != 400 ||
		!strings.Contains(errorMessageOf(t, body), `k must be an integer from 1 to 1000, got "1e1"`) {
		t.Errorf("friends?k=1e1: %d %s", rec.Code, rec.Body)
	}
}

// An upload that would be read otherwise than it was meant is refused
// whole, and writes nothing.
func TestAmbiguousUploadsAre400(t *testing.T) {
	s, ix := newTestServer(t)
	pic := upload("kr-pic", encodeImage(t, "png", 40, 30, color.RGBA{0, 90, 0, 255}))
	files := dirFiles(t, s.cfg.ImageDir)
	for body, want := range map[string]string{
		`[{"id":"a","tags":["x"]},{"id":"b","tags":["y"]},{"id":"a","tags":["z"]}]`: `image 2: id "a" is also image 0's: a batch gives each id once`,
		`[` + pic + `,` + pic + `]`:                                  `image 1: id "kr-pic" is also image 0's`,
		strings.Replace(pic, `{"id"`, `{"features":[1,2,3],"id"`, 1): `image 0 ("kr-pic"): features are computed from image_base64: send one or the other`,
		`{"id":"a","tags":["x"],"colour":"red"}`:                     `json: unknown field "colour"`,
		`[{"id":"a","tags":["x"],"Title ":"t"}]`:                     `json: unknown field "Title "`,
		`{"id":"a","tags":["x"]} {"id":"b","tags":["y"]}`:            "one JSON value expected, with nothing after it",
	} {
		rec, out := do(t, s, "POST", "/v1/images", []byte(body), token)
		if rec.Code != 400 || !strings.Contains(errorMessageOf(t, out), want) {
			t.Errorf("%.80s: %d %s, want 400 saying %q", body, rec.Code, rec.Body, want)
		}
	}
	if ix.Count() != 30 || !maps.Equal(dirFiles(t, s.cfg.ImageDir), files) {
		t.Errorf("refused uploads wrote: %d images (want 30), or files", ix.Count())
	}
	mustPost(t, s, `[{"id":"a","tags":["x"]},{"id":"b","tags":["y"]}]`)
	if ix.Count() != 32 {
		t.Errorf("%d images after a good batch of two, want 32", ix.Count())
	}
}
