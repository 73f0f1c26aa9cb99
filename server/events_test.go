package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/internal/admission"
	"github.com/kernelrank/kernelrank/internal/feedback"
)

const goodEvent = `{"kind":"click","surface":"search","query":"cat","item":"img3","rank":2,"rerank":"poly","session":"s1","client_time":"2026-01-02T03:04:05Z"}`

// newEventsServer is newTestServer recording events in a file log.
func newEventsServer(t *testing.T) (*Server, feedback.Log) {
	t.Helper()
	l, err := feedback.OpenFileLog(t.TempDir(), feedback.Retention{MaxEvents: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s, _ := newTestServer(t)
	s.cfg.Events = l
	return s, l
}

func TestPostEventsStoresTheBatch(t *testing.T) {
	s, l := newEventsServer(t)
	before := time.Now().UTC()
	rec, body := do(t, s, "POST", "/v1/events", []byte(`{"events":[`+goodEvent+`,`+strings.Replace(goodEvent, `"click"`, `"impression"`, 1)+`]}`), "")
	if rec.Code != http.StatusOK || body["stored"] != 2.0 {
		t.Fatalf("%d %v", rec.Code, body)
	}
	if rec, _ := do(t, s, "GET", "/metrics", nil, ""); !strings.Contains(rec.Body.String(), `kernelrank_events_total{result="stored"} 2`) {
		t.Errorf("metrics lack the 2 stored events:\n%s", rec.Body)
	}
	got, err := feedback.All(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Kind != feedback.Click || got[1].Kind != feedback.Impression || got[0].Rank != 2 ||
		got[0].Item != "img3" || got[0].Rerank != "poly" || got[0].ServerTime.Before(before) {
		t.Fatalf("stored %+v", got)
	}
}

func TestPostEventsRefusalsStoreNothing(t *testing.T) {
	s, l := newEventsServer(t)
	many := `{"events":[` + strings.Repeat(goodEvent+",", feedback.MaxBatch) + goodEvent + `]}`
	huge := `{"events":[` + strings.Replace(goodEvent, `"cat"`, `"`+strings.Repeat("x", feedback.MaxBodyBytes)+`"`, 1) + `]}`
	for _, c := range []struct {
		target, body string
		status       int
		want         string
	}{
		{"/v1/events", `{"events":[` + goodEvent + `,` + strings.Replace(goodEvent, `"rank":2`, `"rank":0`, 1) + `]}`, 400, "event 1: rank 0"},
		{"/v1/events", `{"events":[` + strings.Replace(goodEvent, `"click"`, `"like"`, 1) + `]}`, 400, `event 0: unknown kind \"like\"`},
		{"/v1/events", `{"events":[` + strings.Replace(goodEvent, `"session":"s1",`, ``, 1) + `]}`, 400, `event 0: \"session\" is missing`},
		{"/v1/events", `{"events":[` + strings.Replace(goodEvent, `"rank":2`, `"rank":NaN`, 1) + `]}`, 400, "invalid character 'N'"},
		{"/v1/events", many, 400, "101 events: at most 100"},
		{"/v1/events", huge, 413, "at most 65536 bytes"},
		{"/v1/events?x=1", `{"events":[` + goodEvent + `]}`, 400, `unknown query parameter \"x\"`},
	} {
		rec, _ := do(t, s, "POST", c.target, []byte(c.body), "")
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("%.60s: %d %s, want %d with %q", c.body, rec.Code, rec.Body, c.status, c.want)
		}
	}
	if got, err := feedback.All(context.Background(), l); err != nil || len(got) != 0 {
		t.Fatalf("refused batches stored %d events (%v)", len(got), err)
	}
}

func TestPostEventsWithoutALog(t *testing.T) {
	s, _ := newTestServer(t)
	if rec, _ := do(t, s, "POST", "/v1/events", []byte(`{"events":[`+goodEvent+`]}`), ""); rec.Code != http.StatusNotFound {
		t.Fatalf("%d %s, want 404", rec.Code, rec.Body)
	}
}

func TestPostEventsIsRateLimited(t *testing.T) {
	s, l := newEventsServer(t)
	s.cfg.Limiter = admission.NewLimiter(0.001, 1, nil)
	body := []byte(`{"events":[` + goodEvent + `]}`)
	if rec, _ := do(t, s, "POST", "/v1/events", body, ""); rec.Code != http.StatusOK {
		t.Fatalf("first batch: %d %s", rec.Code, rec.Body)
	}
	if rec, _ := do(t, s, "POST", "/v1/events", body, ""); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("second batch: %d %s, want 429", rec.Code, rec.Body)
	}
	if got, _ := feedback.All(context.Background(), l); len(got) != 1 {
		t.Fatalf("%d events stored, want the first batch's 1", len(got))
	}
}

func TestPostEventsLogDown(t *testing.T) {
	s, l := newEventsServer(t)
	l.Close() // appends now fail, as a Redis gone would
	rec, body := do(t, s, "POST", "/v1/events", []byte(`{"events":[`+goodEvent+`]}`), "")
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"events_unavailable"`) {
		t.Fatalf("%d %v, want 503 events_unavailable", rec.Code, body)
	}
	if rec, _ := do(t, s, "GET", "/metrics", nil, ""); !strings.Contains(rec.Body.String(), `kernelrank_events_total{result="failed"} 1`) {
		t.Errorf("metrics lack the failed event")
	}
}
