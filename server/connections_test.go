package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/admission"
)

// failAfter bounds how long a test waits for what must happen at once; it
// only turns a hang into a failure, the tests assert no speed.
const failAfter = 30 * time.Second

// serveBoot serves s through a Boot with timeouts t on a loopback port; the
// returned stop shuts it down and returns Serve's error.
func serveBoot(t *testing.T, s *Server, timeouts Timeouts) (addr string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := NewBoot(timeouts, slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.Ready(s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Serve(ctx, ln) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(failAfter):
			t.Fatal("Serve did not return after shutdown")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	return ln.Addr().String(), stop
}

// stalledUpload sends POST /v1/images announcing a 1000-byte body and
// sends only its first byte, then stalls.
func stalledUpload(t *testing.T, addr, auth string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := "POST /v1/images HTTP/1.1\r\nHost: kernelrank\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n"
	if auth != "" {
		head += "Authorization: Bearer " + auth + "\r\n"
	}
	if _, err := io.WriteString(conn, head+"\r\n["); err != nil {
		t.Fatal(err)
	}
	return conn
}

// readAnswer reads the response on conn, failing the test if none comes.
func readAnswer(t *testing.T, conn net.Conn) *http.Response {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(failAfter))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the client stalls: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	return resp
}

// A request refused for its token, or for its announced size, is answered
// while its body has not arrived: the server reads none of it (the read
// timeout is an hour here) and closes the connection.
func TestRefusalsDoNotWaitForTheBody(t *testing.T) {
	s, _ := newTestServer(t)
	addr, _ := serveBoot(t, s, Timeouts{Read: time.Hour})
	resp := readAnswer(t, stalledUpload(t, addr, "wrong-token"))
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Errorf("bad token: %d, close %v; want 401 and the connection closed", resp.StatusCode, resp.Close)
	}

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST /v1/images HTTP/1.1\r\nHost: kernelrank\r\nAuthorization: Bearer "+token+
		"\r\nContent-Length: 2000000\r\n\r\n[")
	if resp := readAnswer(t, conn); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body announced over the limit: %d, want 413", resp.StatusCode)
	}
}

// A client that stalls mid-body gets a JSON 408 once the read timeout has
// passed; one that stalls in its headers has its connection closed once
// the header timeout has.
func TestStalledClientsAreLetGo(t *testing.T) {
	s, _ := newTestServer(t)
	addr, _ := serveBoot(t, s, Timeouts{Read: 200 * time.Millisecond})
	resp := readAnswer(t, stalledUpload(t, addr, token))
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"code":"request_timeout"`) {
		t.Errorf("stalled body: %d %s, want 408 request_timeout", resp.StatusCode, body)
	}
	// The header timeout alone: the read timeout is an hour.
	addr, _ = serveBoot(t, s, Timeouts{Read: time.Hour, ReadHeader: 100 * time.Millisecond})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: kernelrank\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(failAfter))
	if _, err := io.ReadAll(conn); err != nil {
		t.Errorf("a client stalled in its headers kept its connection: %v", err)
	}
}

// A client stalled mid-body does not hold the shutdown past its timeout
// (the read timeout, an hour here, would): its connection is closed.
func TestShutdownClosesStalledClients(t *testing.T) {
	s, _ := newTestServer(t)
	addr, stop := serveBoot(t, s, Timeouts{Read: time.Hour, Shutdown: 100 * time.Millisecond})
	conn := stalledUpload(t, addr, token)
	// The request is in its handler once the server answers another.
	if resp, err := http.Get("http://" + addr + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v", err)
	}
	if err := stop(); err != nil {
		t.Errorf("Serve after a shutdown past its timeout: %v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(failAfter))
	if _, err := io.ReadAll(conn); err != nil {
		t.Errorf("the stalled connection was not closed: %v", err)
	}
}

// Behind a trusted proxy the rate limit sees the client X-Forwarded-For
// names; from anyone else it sees the peer.
func TestTrustedProxies(t *testing.T) {
	proxies, err := admission.ParseNetworks("10.0.0.0/8, 192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newServerConfig(t, func(cfg *Config, _ *index.Index) {
		cfg.TrustedProxies = proxies
		cfg.Limiter = admission.NewLimiter(0.001, 1, nil)
	})
	get := func(peer, forwarded string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/v1/learners", nil)
		req.RemoteAddr = peer + ":4000"
		req.Header.Set("X-Forwarded-For", forwarded)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	for i, c := range []struct {
		peer, forwarded string
		want            int
		client          string
	}{
		{"10.1.2.3", "203.0.113.9", 200, ""},
		{"192.0.2.7", "203.0.113.10", 200, ""},
		{"10.9.9.9", "203.0.113.9", 429, "203.0.113.9"}, // the same client through another proxy
		{"198.51.100.1", "203.0.113.11", 200, ""},       // not a proxy: its own bucket
		{"198.51.100.1", "203.0.113.12", 429, "198.51.100.1"},
	} {
		rec := get(c.peer, c.forwarded)
		if rec.Code != c.want || !strings.Contains(rec.Body.String(), c.client) {
			t.Errorf("request %d (peer %s, X-Forwarded-For %s): %d %s, want %d naming %q", i, c.peer, c.forwarded, rec.Code, rec.Body, c.want, c.client)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "10.0.0.1,"} {
		if _, err := admission.ParseNetworks(bad); (err == nil) != (bad == "10.0.0.1,") {
			t.Errorf("ParseNetworks(%q): %v", bad, err)
		}
	}
	if p, _ := admission.ParseNetworks("10.1.2.3/8"); len(p) != 1 || p[0] != netip.MustParsePrefix("10.0.0.0/8") {
		t.Errorf("ParseNetworks(10.1.2.3/8) = %v, want 10.0.0.0/8", p)
	}
}

// Listed origins get CORS headers and preflights; others are served as
// without CORS, and a preflight of theirs fails.
func TestCORS(t *testing.T) {
	s, _ := newServerConfig(t, func(cfg *Config, _ *index.Index) { cfg.CORSOrigins = []string{"https://App.example"} })
	send := func(method, path, origin string, header ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Origin", origin)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	pre := send("OPTIONS", "/v1/images", "https://app.example", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "authorization,content-type")
	if pre.Code != http.StatusNoContent || pre.Header().Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(strings.ToLower(pre.Header().Get("Access-Control-Allow-Headers")), "authorization") ||
		!strings.Contains(pre.Header().Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight of a listed origin: %d %v", pre.Code, pre.Header())
	}
	get := send("GET", "/v1/search?q=cat&k=1&rerank=raw", "https://app.example")
	if get.Code != 200 || get.Header().Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(get.Header().Get("Access-Control-Expose-Headers"), "X-Request-Id") {
		t.Errorf("GET from a listed origin: %d %v", get.Code, get.Header())
	}
	other := send("GET", "/v1/search?q=cat&k=1&rerank=raw", "https://other.example")
	if other.Code != 200 || other.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("GET from another origin: %d %v, want 200 without CORS headers", other.Code, other.Header())
	}
	if pre := send("OPTIONS", "/v1/images", "https://other.example", "Access-Control-Request-Method", "POST"); pre.Code != http.StatusMethodNotAllowed ||
		pre.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of another origin: %d %v, want a 405 without CORS headers", pre.Code, pre.Header())
	}
	plain, _ := newTestServer(t)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/v1/learners", nil)
	req.Header.Set("Origin", "https://app.example")
	plain.Handler().ServeHTTP(rec, req)
	if rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS headers from a server with no origins: %v", rec.Header())
	}
	for _, bad := range [][]string{{"app.example"}, {"*", "https://app.example"}} {
		if err := (Config{CORSOrigins: bad}).Validate(); err == nil {
			t.Errorf("origins %q pass Validate", bad)
		}
	}
}
