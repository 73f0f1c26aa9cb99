package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// redisServer is a server of a deployment on one Redis: its own Redis
// client under the deployment's prefix, its own index (the same
// documents), cache metrics in its own registry.
func redisServer(t *testing.T, url, prefix string) (*Server, *cache.Redis, *prometheus.Registry) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := cache.OpenRedis(ctx, url, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	reg := prometheus.NewRegistry()
	s, _ := newServerWith(t, reg, cache.NewLoader(r, cache.NewMetrics(reg, r.Backend())))
	return s, r, reg
}

// waitFor polls cond every 20 ms until it holds or 30 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func modelVersion(t *testing.T, s *Server) string {
	t.Helper()
	rec, body := do(t, s, http.MethodGet, "/v1/users/a/friends?k=3", nil, "")
	if rec.Code != http.StatusOK {
		return ""
	}
	v, _ := body["model_version"].(string)
	return v
}

// TestTwoServersOneRedis: a kernel learned by one server is a hit on the
// other, and a retraining job queued through either switches both to the
// new model version, which a worker published.
func TestTwoServersOneRedis(t *testing.T) {
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	a, ra, _ := redisServer(t, url, prefix)
	b, rb, _ := redisServer(t, url, prefix)

	// The two indexes hold the same documents: one corpus version.
	_, bodyA := do(t, a, http.MethodGet, "/v1/search?q=cat&rerank=npk&k=5", nil, "")
	_, bodyB := do(t, b, http.MethodGet, "/v1/search?q=cat&rerank=npk&k=7", nil, "")
	ka, kb := bodyA["rerank"].(map[string]any), bodyB["rerank"].(map[string]any)
	if ka["kernel_cache"] != "miss" || kb["kernel_cache"] != "hit" || kb["cache"] != "miss" {
		t.Errorf("npk kernel: server a %v/%v, server b (another k) %v/%v; want a miss on a, a kernel hit on b",
			ka["cache"], ka["kernel_cache"], kb["cache"], kb["kernel_cache"])
	}
	_, bodyB = do(t, b, http.MethodGet, "/v1/search?q=cat&rerank=npk&k=5", nil, "")
	if got := bodyB["rerank"].(map[string]any)["cache"]; got != "hit" {
		t.Errorf("server a's request on server b: ranking cache %v, want hit", got)
	}

	// Both serve the recommender through the shared model store.
	dir := writeSocialDir(t)
	for _, sr := range []struct {
		s *Server
		r *cache.Redis
	}{{a, ra}, {b, rb}} {
		svc := newSocialService(t, dir, cache.NewRedisStore(sr.r), 100*time.Millisecond)
		if err := svc.Start(); err != nil {
			t.Fatal(err)
		}
		sr.s.cfg.Social, sr.s.cfg.ModelWait = svc, 10*time.Second
	}
	waitFor(t, "one model version on both servers", func() bool {
		va := modelVersion(t, a)
		return va != "" && va == modelVersion(t, b)
	})
	before := modelVersion(t, a)

	// Jobs go through one asynq queue to a worker with a recommender of
	// its own over the same store (as `kernelrank worker` has).
	ro, err := cache.ParseRedisURL(url)
	if err != nil {
		t.Fatal(err)
	}
	o := jobs.Options{Queue: strings.TrimSuffix(prefix, ":"), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, s := range []*Server{a, b} {
		q, err := jobs.NewAsynq(context.Background(), ro, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		s.cfg.Jobs = q
	}
	rw, err := cache.OpenRedis(context.Background(), url, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rw.Close() })
	ws := newSocialService(t, dir, cache.NewRedisStore(rw), 0)
	work := func(ctx context.Context, id string, spec jobs.Spec, progress func(string, float64)) (string, error) {
		return ws.Retrain(ctx, recommend.RetrainRequest{Learner: spec.Learner, DataPath: spec.Social, Version: id}, progress)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- jobs.Worker(ctx, ro, o, 1, jobs.Dispatch(work, nil)) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}()

	rec, body := do(t, b, http.MethodPost, "/v1/jobs", []byte(`{"target":"social"}`), token)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs: %d %v", rec.Code, body)
	}
	id := body["id"].(string)
	job := pollJob(t, a, id, "succeeded", jobStatus(jobs.Succeeded))
	if job["version"] != id {
		t.Errorf("job %s published version %v, want its id", id, job["version"])
	}
	waitFor(t, "both servers on the job's version", func() bool {
		return modelVersion(t, a) == id && modelVersion(t, b) == id
	})
	if before == id {
		t.Errorf("the version before the job is the job's")
	}
}

// TestRedisGoneMidLoad: with its Redis stopped the server keeps answering
// searches, computing them; /readyz says "degraded" (still 200) and the
// backend-up gauge is 0; once Redis is back, it caches again.
func TestRedisGoneMidLoad(t *testing.T) {
	srv := redistest.Start(t)
	s, _, reg := redisServer(t, srv.URL, "")
	search := func() (int, string) {
		rec, body := do(t, s, http.MethodGet, "/v1/search?q=cat&k=5", nil, "")
		if rec.Code != http.StatusOK {
			return rec.Code, ""
		}
		return rec.Code, body["rerank"].(map[string]any)["cache"].(string)
	}
	if _, st := search(); st != "miss" {
		t.Fatalf("first search: %s", st)
	}
	if _, st := search(); st != "hit" {
		t.Fatalf("second search: %s", st)
	}
	up := func() float64 {
		g, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range g {
			if mf.GetName() == "kernelrank_cache_backend_up" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no kernelrank_cache_backend_up metric")
		return 0
	}

	srv.Stop()
	for i := range 20 {
		if code, st := search(); code != http.StatusOK || st != "miss" {
			t.Fatalf("search %d with Redis gone: %d %q, want 200 and a computed answer (miss)", i, code, st)
		}
	}
	rec, body := do(t, s, http.MethodGet, "/readyz", nil, "")
	c, _ := body["cache"].(map[string]any)
	if rec.Code != http.StatusOK || body["status"] != "degraded" || c["ok"] != false || c["error"] == "" {
		t.Errorf("/readyz with Redis gone: %d %v", rec.Code, body)
	}
	if up() != 0 {
		t.Errorf("kernelrank_cache_backend_up = %v with Redis gone, want 0", up())
	}
	if n := testutil.CollectAndCount(reg, "kernelrank_cache_backend_errors_total"); n == 0 {
		t.Error("no backend error counted")
	}

	srv.Restart()
	waitFor(t, "searches cached again", func() bool {
		_, st := search()
		return st == "hit"
	})
	rec, body = do(t, s, http.MethodGet, "/readyz", nil, "")
	if rec.Code != http.StatusOK || body["status"] != "ready" || up() != 1 {
		t.Errorf("/readyz with Redis back: %d %v, up %v", rec.Code, body, up())
	}
}
