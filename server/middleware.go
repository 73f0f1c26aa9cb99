package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

const requestIDHeader = "X-Request-Id"

// requestID takes the caller's X-Request-Id (if sane) or makes one, and echoes it.
func (s *Server) requestID(c *gin.Context) {
	id := c.GetHeader(requestIDHeader)
	if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	c.Set("request_id", id)
	c.Header(requestIDHeader, id)
	c.Next()
}

// recover turns a panic into a logged JSON 500, never a stack trace to the client.
func (s *Server) recover(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			s.panicked(c, "handler", r, debug.Stack())
		}
	}()
	c.Next()
}

// panicked logs a recovered panic with its stack, counts it, and answers
// a JSON 500 with the request id.
func (s *Server) panicked(c *gin.Context, where string, value any, stack []byte) {
	s.log.Error("panic", "request_id", c.GetString("request_id"), "path", c.Request.URL.Path, "where", where,
		"panic", fmt.Sprint(value), "stack", string(stack))
	s.metrics.panics.WithLabelValues(where).Inc()
	internalError(c)
}

// rateLimit answers 429 with Retry-After to a client (by IP address) over
// its rate.
func (s *Server) rateLimit(c *gin.Context) {
	if ok, after := s.cfg.Limiter.Allow(c.ClientIP()); !ok {
		c.Header("Retry-After", strconv.Itoa(int(after.Seconds())))
		fail(c, http.StatusTooManyRequests, "rate_limited", "too many requests from "+c.ClientIP()+": retry in "+after.String())
		return
	}
	c.Next()
}

// limitHeaders answers 431 as JSON to headers over MaxHeaderBytes (Go's own
// limit, well above it, answers in plain text).
func (s *Server) limitHeaders(c *gin.Context) {
	size := len(c.Request.RequestURI)
	for name, vs := range c.Request.Header {
		for _, v := range vs {
			size += len(name) + len(v) + 4 // ": " and CRLF
		}
	}
	if size > s.cfg.MaxHeaderBytes {
		fail(c, http.StatusRequestHeaderFieldsTooLarge, "headers_too_large",
			"the request line and headers are over "+strconv.Itoa(s.cfg.MaxHeaderBytes)+" bytes")
		return
	}
	c.Next()
}

// singleParams answers 400 to a query parameter given more than once
// (q=cat&q=dog): every endpoint reads one value, and silently taking the
// first would answer a question the client did not ask.
func (s *Server) singleParams(c *gin.Context) {
	for name, vs := range c.Request.URL.Query() {
		if len(vs) > 1 {
			badRequest(c, fmt.Sprintf("query parameter %q is given %d times: give it once", name, len(vs)))
			return
		}
	}
	c.Next()
}

// observe logs every request and records its latency by route and status.
func (s *Server) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	status := c.Writer.Status()
	took := time.Since(start)
	s.metrics.requests.With(prometheus.Labels{"route": route, "status": strconv.Itoa(status)}).Observe(took.Seconds())
	s.log.Info("request", "request_id", c.GetString("request_id"), "method", c.Request.Method,
		"path", c.Request.URL.Path, "status", status, "ms", float64(took.Microseconds())/1000)
}

func (s *Server) limitBody(c *gin.Context) {
	if c.Request.ContentLength > s.cfg.MaxBodyBytes {
		fail(c, http.StatusRequestEntityTooLarge, "too_large", "request body over "+strconv.FormatInt(s.cfg.MaxBodyBytes, 10)+" bytes")
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.MaxBodyBytes)
	c.Next()
}

func (s *Server) timeout(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.RequestTimeout)
	defer cancel()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
}

func (s *Server) requireAdmin(c *gin.Context) {
	if s.cfg.AdminToken == "" {
		fail(c, http.StatusForbidden, "admin_disabled", "admin endpoints are disabled: start the server with --admin-token")
		return
	}
	got, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.AdminToken)) != 1 {
		c.Header("WWW-Authenticate", `Bearer realm="kernelrank"`)
		fail(c, http.StatusUnauthorized, "unauthorized", "a valid admin bearer token is required")
		return
	}
	c.Next()
}

type metrics struct {
	requests *prometheus.HistogramVec
	stage    *prometheus.HistogramVec
	panics   *prometheus.CounterVec
	events   *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kernelrank_http_request_seconds", Help: "HTTP request latency by route and status.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"route", "status"}),
		stage: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kernelrank_search_stage_seconds", Help: "Search latency by stage (text, kernel, visualrank) and strategy.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
		}, []string{"stage", "strategy"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kernelrank_panics_total", Help: "Panics recovered, by where: in a learner (or kernel) or in a handler.",
		}, []string{"where"}),
	}
	m.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kernelrank_events_total", Help: "Events of POST /v1/events by result: stored, or failed (the log did not take them: 503).",
	}, []string{"result"})
	for _, where := range []string{"learner", "handler"} {
		m.panics.WithLabelValues(where) // exported at 0, for alerts on any increase
	}
	reg.MustRegister(m.requests, m.stage, m.panics, m.events, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}
