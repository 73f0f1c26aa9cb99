package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/internal/redistest"
)

// stepper is a retraining handler that takes steps, reporting each, and
// publishes its id at the end; learner "slow" takes steps long enough to
// be cancelled midway.
type stepper struct {
	mu        sync.Mutex
	published []string
}

func (st *stepper) handle(ctx context.Context, id string, spec jobs.Spec, progress func(string, float64)) (string, error) {
	steps, step := 5, 10*time.Millisecond
	if spec.Learner == "slow" {
		steps, step = 100, time.Second
	}
	for i := range steps {
		progress("step "+string(rune('a'+i%26)), float64(i)/float64(steps))
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(step):
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.published = append(st.published, id)
	return id, nil
}

func (st *stepper) publications() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.published)
}

func newJobsServer(t *testing.T, q jobs.Queue) *Server {
	t.Helper()
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return New(ix, Config{AdminToken: token, Jobs: q}, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// pollJob gets a job until ok, failing after 30 s.
func pollJob(t *testing.T, s *Server, id string, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rec, body := do(t, s, "GET", "/v1/jobs/"+id, nil, token)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET job %s: %d %s", id, rec.Code, rec.Body)
		}
		if ok(body) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: not %s after 30 s: %v", id, what, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func jobStatus(s jobs.Status) func(map[string]any) bool {
	return func(b map[string]any) bool { return b["status"] == string(s) }
}

// exerciseJobs runs the job endpoints through a job's life on s, whose
// queue runs st.
func exerciseJobs(t *testing.T, s *Server, st *stepper) {
	post := func(body string) (int, map[string]any) {
		rec, out := do(t, s, "POST", "/v1/jobs", []byte(body), token)
		return rec.Code, out
	}
	code, j := post(`{"target":"social"}`)
	id, _ := j["id"].(string)
	if code != http.StatusAccepted || id == "" || j["status"] != "queued" {
		t.Fatalf("POST: %d %v", code, j)
	}
	done := pollJob(t, s, id, "succeeded", jobStatus(jobs.Succeeded))
	if done["version"] != id || done["fraction"] != 1.0 || done["attempts"] != 1.0 || done["finished_at"] == nil {
		t.Errorf("succeeded job: %v", done)
	}
	if rec, body := do(t, s, "DELETE", "/v1/jobs/"+id, nil, token); rec.Code != http.StatusConflict || !strings.Contains(errorMessage(body), "already finished") {
		t.Errorf("DELETE a finished job: %d %v, want 409", rec.Code, body)
	}

	// A running job: progress shows, DELETE cancels it, nothing is published.
	_, slow := post(`{"target":"all","learner":"slow"}`)
	slowID := slow["id"].(string)
	running := pollJob(t, s, slowID, "in its second step", func(b map[string]any) bool { return b["stage"] == "step b" })
	if running["status"] != "running" || running["fraction"] != 0.01 {
		t.Errorf("running job: %v", running)
	}
	rec, cancelled := do(t, s, "DELETE", "/v1/jobs/"+slowID, nil, token)
	if rec.Code != http.StatusOK || cancelled["status"] != "cancelled" || cancelled["version"] != nil {
		t.Errorf("DELETE a running job: %d %v", rec.Code, cancelled)
	}
	if p := st.publications(); !slices.Equal(p, []string{id}) {
		t.Errorf("published %v, want only %s", p, id)
	}

	rec, list := do(t, s, "GET", "/v1/jobs?limit=5", nil, token)
	got, _ := list["jobs"].([]any)
	if rec.Code != http.StatusOK || len(got) != 2 || got[0].(map[string]any)["id"] != slowID || got[1].(map[string]any)["id"] != id {
		t.Errorf("GET /v1/jobs: %d %v; want the cancelled job, then the first", rec.Code, list)
	}
}

func TestJobEndpointsLocal(t *testing.T) {
	st := &stepper{}
	q := jobs.NewLocal(st.handle, 0)
	defer q.Close()
	exerciseJobs(t, newJobsServer(t, q), st)
}

func TestJobEndpointsAsynq(t *testing.T) {
	srv := redistest.Start(t)
	ro, err := cache.ParseRedisURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	o := jobs.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	q, err := jobs.NewAsynq(context.Background(), ro, o)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	st := &stepper{}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- jobs.Worker(ctx, ro, o, 1, st.handle) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}()
	exerciseJobs(t, newJobsServer(t, q), st)
}

func TestJobEndpointErrors(t *testing.T) {
	st := &stepper{}
	q := jobs.NewLocal(st.handle, 0)
	defer q.Close()
	s := newJobsServer(t, q)
	cases := []struct {
		method, target, body, auth string
		status                     int
		msg                        string
	}{
		{"POST", "/v1/jobs", `{"target":"social"}`, "", http.StatusUnauthorized, "admin bearer token"},
		{"GET", "/v1/jobs", ``, "wrong", http.StatusUnauthorized, "admin bearer token"},
		{"POST", "/v1/jobs", `{"target":"images"}`, token, http.StatusBadRequest, `unknown target "images"`},
		{"POST", "/v1/jobs", `{"target":"social","force":true}`, token, http.StatusBadRequest, `unknown field "force"`},
		{"POST", "/v1/jobs", `{"target":`, token, http.StatusBadRequest, "JSON object"},
		{"POST", "/v1/jobs", ``, token, http.StatusBadRequest, "JSON object"},
		{"POST", "/v1/jobs", `{"target":"social","queries":10}`, token, http.StatusBadRequest, "queries is for search"},
		{"GET", "/v1/jobs/nope", ``, token, http.StatusNotFound, `no job with id "nope"`},
		{"DELETE", "/v1/jobs/nope", ``, token, http.StatusNotFound, `no job with id "nope"`},
		{"GET", "/v1/jobs?limit=0", ``, token, http.StatusBadRequest, "limit must be an integer from 1 to 100"},
		{"GET", "/v1/jobs?limit=x", ``, token, http.StatusBadRequest, "limit must be an integer from 1 to 100"},
		{"PUT", "/v1/jobs/x", ``, token, http.StatusMethodNotAllowed, "not allowed"},
	}
	for _, c := range cases {
		rec, body := do(t, s, c.method, c.target, []byte(c.body), c.auth)
		if rec.Code != c.status || !strings.Contains(errorMessage(body), c.msg) {
			t.Errorf("%s %s %s: %d %v; want %d saying %q", c.method, c.target, c.body, rec.Code, body, c.status, c.msg)
		}
	}
	if rec, list := do(t, s, "GET", "/v1/jobs", nil, token); rec.Code != http.StatusOK || len(list["jobs"].([]any)) != 0 {
		t.Errorf("rejected jobs were queued: %v", list)
	}

	off := newJobsServer(t, nil)
	rec, body := do(t, off, "POST", "/v1/jobs", []byte(`{"target":"social"}`), token)
	if rec.Code != http.StatusNotFound || !strings.Contains(errorMessage(body), "--redis") {
		t.Errorf("no queue: %d %v; want 404 saying how to enable jobs", rec.Code, body)
	}

	q.Close()
	rec, body = do(t, s, "POST", "/v1/jobs", []byte(`{"target":"social"}`), token)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(errorMessage(body), "closed") {
		t.Errorf("closed queue: %d %v; want 503", rec.Code, body)
	}
}

// TestJobsReadTheServersSocialData: a social (or all) job that names no
// data re-reads the server's; one that names some keeps it; a search job
// has none.
func TestJobsReadTheServersSocialData(t *testing.T) {
	st := &stepper{}
	q := jobs.NewLocal(st.handle, 0)
	defer q.Close()
	s := newJobsServer(t, q)
	s.cfg.SocialData = "/srv/social"
	for body, want := range map[string]string{
		`{"target":"social"}`:                     "/srv/social",
		`{"target":"all"}`:                        "/srv/social",
		`{"target":"social","social":"/data/fb"}`: "/data/fb",
		`{"target":"search"}`:                     "",
	} {
		rec, job := do(t, s, http.MethodPost, "/v1/jobs", []byte(body), token)
		if rec.Code != http.StatusAccepted {
			t.Fatalf("%s: %d %v", body, rec.Code, job)
		}
		if got, _ := job["spec"].(map[string]any)["social"].(string); got != want {
			t.Errorf("%s: the job reads social data %q, want %q", body, got, want)
		}
	}
}
