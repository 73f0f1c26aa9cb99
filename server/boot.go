package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Boot is the HTTP handler of a server that is starting: the process
// listens first (probes get answers, not "connection refused", while the
// first index is built), and once Ready it serves the Server's routes.
// Until then /healthz is 200, /readyz 503 with the start-up's progress, and
// every other path a JSON 503 with Retry-After.
type Boot struct {
	srv atomic.Pointer[Server]
	t   Timeouts
	log *slog.Logger

	mu       sync.Mutex
	progress Progress
}

// Progress is what the start-up is doing, as /readyz reports it.
type Progress struct {
	Stage string `json:"stage"`
	Done  int    `json:"done,omitempty"`
	Total int    `json:"total,omitempty"`
}

// Timeouts bound how long a client holds a connection; zero values take
// the defaults.
type Timeouts struct {
	// Request is the handlers' deadline (Config.RequestTimeout; default 30 s).
	Request time.Duration
	// ReadHeader bounds reading a request's line and headers (default 10 s).
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included (default 60 s): a
	// client that stalls mid-body gets 408 and its connection closed.
	Read time.Duration
	// Idle is how long a kept-alive connection waits for its next request
	// (default 120 s).
	Idle time.Duration
	// Shutdown is how long requests in flight get to finish once the server
	// is stopping (default 10 s); then every connection is closed.
	Shutdown time.Duration
}

func (t *Timeouts) fill() {
	c := Config{RequestTimeout: t.Request}
	c.fill()
	t.Request = c.RequestTimeout
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&t.ReadHeader, 10 * time.Second}, {&t.Read, time.Minute}, {&t.Idle, 2 * time.Minute}, {&t.Shutdown, 10 * time.Second}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
}

// NewBoot returns the handler of a starting server with the timeouts t.
func NewBoot(t Timeouts, log *slog.Logger) *Boot {
	t.fill()
	return &Boot{t: t, log: log, progress: Progress{Stage: "starting"}}
}

// SetProgress records what the start-up is doing.
func (b *Boot) SetProgress(p Progress) {
	b.mu.Lock()
	b.progress = p
	b.mu.Unlock()
}

// Ready hands every later request to s.
func (b *Boot) Ready(s *Server) {
	b.srv.Store(s)
	b.log.Info("ready", "images", s.ix.Count())
}

func (b *Boot) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s := b.srv.Load(); s != nil {
		s.engine.ServeHTTP(w, r)
		return
	}
	b.mu.Lock()
	p := b.progress
	b.mu.Unlock()
	status, body := http.StatusServiceUnavailable, any(nil)
	switch r.URL.Path {
	case "/healthz":
		status, body = http.StatusOK, map[string]string{"status": "ok"}
	case "/readyz":
		body = struct {
			Status string `json:"status"`
			Progress
		}{"starting", p}
	default:
		msg := "the server is starting: " + p.Stage
		if p.Total > 0 {
			msg += fmt.Sprintf(" (%d of %d)", p.Done, p.Total)
		}
		var e apiError
		e.Error.Code, e.Error.Message = "starting", msg
		body = e
		w.Header().Set("Retry-After", "5")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = json.NewEncoder(w).Encode(body)
	}
}

// Serve serves on ln (bound by the caller, so that a busy port fails before
// any work) until ctx is cancelled, then shuts down gracefully, letting
// requests in flight finish for up to the shutdown timeout; the connections
// still open then (a client stalled mid-body) are closed.
func (b *Boot) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           b,
		ReadHeaderTimeout: b.t.ReadHeader,
		ReadTimeout:       b.t.Read,
		IdleTimeout:       b.t.Idle,
		WriteTimeout:      b.t.Read + b.t.Request + 5*time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	b.log.Info("shutting down")
	shut, cancel := context.WithTimeout(context.Background(), b.t.Shutdown)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		b.log.Warn("closing the connections still open after the shutdown timeout", "timeout", b.t.Shutdown)
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
