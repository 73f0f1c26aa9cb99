package server

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/search"
)

// parseSearch runs the server's parser of /v1/search on a raw query string.
func parseSearch(s *Server, rawQuery string) (search.Request, bool, *httptest.ResponseRecorder) {
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	c.Request = &http.Request{Method: "GET", URL: &url.URL{Path: "/v1/search", RawQuery: rawQuery}, Header: http.Header{}}
	req, ok := s.searchRequest(c)
	return req, ok, rec
}

// encodeSearch is the query string of req, as a client would send it.
func encodeSearch(req search.Request) string {
	v := url.Values{"q": {req.Query}, "voters": {strconv.Itoa(req.Rerank.Voters)}}
	set := func(name, val string, present bool) {
		if present {
			v.Set(name, val)
		}
	}
	set("k", strconv.Itoa(req.K), req.K != 0)
	set("window", strconv.Itoa(req.Window), req.Window != 0)
	set("seed", strconv.FormatInt(req.Seed, 10), req.Seed != 0)
	set("rerank", req.Rerank.Strategy, req.Rerank.Strategy != "")
	set("prior", req.Rerank.Prior, req.Rerank.Prior != "")
	set("affinity", req.Rerank.Affinity, req.Rerank.Affinity != "")
	set("params", string(req.Rerank.Params), req.Rerank.Params != nil)
	set("damping", strconv.FormatFloat(req.Rerank.Damping, 'g', -1, 64), req.Rerank.Damping != 0)
	return v.Encode()
}

// FuzzSearchRequest: any query string is either a request within the
// server's limits, which encodes back to the same request, or a 400 with
// the JSON error body; never a panic. Seeds: testdata/fuzz/FuzzSearchRequest.
func FuzzSearchRequest(f *testing.F) {
	gin.SetMode(gin.ReleaseMode)
	s := &Server{cfg: Config{}}
	s.cfg.fill()
	f.Fuzz(func(t *testing.T, raw string) {
		req, ok, rec := parseSearch(s, raw)
		if !ok {
			checkErrorBody(t, rec, http.StatusBadRequest)
			return
		}
		if rec.Body.Len() > 0 {
			t.Fatalf("accepted, yet wrote %q", rec.Body)
		}
		cfg := s.cfg
		switch {
		case req.Query == "" || req.Query != strings.TrimSpace(req.Query) || utf8.RuneCountInString(req.Query) > cfg.MaxQueryLen:
			t.Fatalf("accepted query %q", req.Query)
		case req.K < 0 || req.K > cfg.MaxK, req.Window < 0 || req.Window > cfg.MaxWindow:
			t.Fatalf("accepted k %d, window %d", req.K, req.Window)
		case req.Seed < 0 || req.Rerank.Voters < 0 || req.Rerank.Voters > 20:
			t.Fatalf("accepted seed %d, voters %d", req.Seed, req.Rerank.Voters)
		case req.Rerank.Params != nil && !isJSONObject(req.Rerank.Params):
			t.Fatalf("accepted params %q, not a JSON object", req.Rerank.Params)
		}
		again, ok, rec := parseSearch(s, encodeSearch(req))
		if !ok {
			t.Fatalf("%+v encoded as %q is rejected: %s", req, encodeSearch(req), rec.Body)
		}
		// NaN never equals itself; the parser is what is checked, not NaN.
		if math.IsNaN(req.Rerank.Damping) && math.IsNaN(again.Rerank.Damping) {
			req.Rerank.Damping, again.Rerank.Damping = 0, 0
		}
		if !reflect.DeepEqual(req, again) {
			t.Fatalf("round trip: %+v became %+v", req, again)
		}
	})
}

func isJSONObject(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// checkErrorBody fails unless rec is status with the JSON error body.
func checkErrorBody(t *testing.T, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	var body apiError
	if rec.Code != status || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("answer %d %q, want %d with {\"error\": {\"code\", \"message\"}}", rec.Code, rec.Body, status)
	}
}
