package server

import (
	"strings"
	"testing"
)

// TestPages checks that each page is served whole, with its own script,
// and that the assets are served with their types (the browser test,
// server/e2e, drives the pages).
func TestPages(t *testing.T) {
	s, _ := newTestServer(t)
	for path, script := range map[string]string{"/": "search.js", "/users/u001": "user.js", "/learners": "learners.js"} {
		rec, _ := do(t, s, "GET", path, nil, "")
		body := rec.Body.String()
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") ||
			!strings.Contains(body, `<script src="/web/`+script+`">`) || !strings.Contains(body, `<main>`) || strings.Contains(body, "{{") {
			t.Errorf("GET %s: %d %s\n%s", path, rec.Code, rec.Header().Get("Content-Type"), body)
		}
	}
	for path, typ := range map[string]string{"/web/app.css": "text/css", "/web/search.js": "text/javascript"} {
		if rec, _ := do(t, s, "GET", path, nil, ""); rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), typ) {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	// A missing file, and a directory: not listed.
	for _, path := range []string{"/web/nope.js", "/web/", "/web"} {
		if rec, body := do(t, s, "GET", path, nil, ""); rec.Code != 404 || body["error"] == nil {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
}
