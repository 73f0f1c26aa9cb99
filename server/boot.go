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
	srv     atomic.Pointer[Server]
	timeout time.Duration
	log     *slog.Logger

	mu       sync.Mutex
	progress Progress
}

// Progress is what the start-up is doing, as /readyz reports it.
type Progress struct {
	Stage string `json:"stage"`
	Done  int    `json:"done,omitempty"`
	Total int    `json:"total,omitempty"`
}

// NewBoot returns the handler of a starting server whose requests have
// the given deadline (Config.RequestTimeout; 0: the default).
func NewBoot(requestTimeout time.Duration, log *slog.Logger) *Boot {
	c := Config{RequestTimeout: requestTimeout}
	c.fill()
	return &Boot{timeout: c.RequestTimeout, log: log, progress: Progress{Stage: "starting"}}
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
// requests in flight finish (up to 10 s).
func (b *Boot) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           b,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      b.timeout + 5*time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	b.log.Info("shutting down")
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
