package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/bench"
	"github.com/kernelrank/kernelrank/internal/deploy"
)

// tinyIndex writes an index of three images and returns its directory.
func tinyIndex(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := index.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var docs []index.Doc
	for _, id := range []string{"a", "b", "c"} {
		docs = append(docs, index.Doc{ID: id, Tags: []string{"cat"}, Features: []float32{1, 2, 3}})
	}
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A busy port is reported before any work and before "listening"; a free
// one is bound, then the server serves.
func TestServeBindsFirst(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	data := tinyIndex(t)
	var errOut bytes.Buffer
	args := []string{"serve", "--no-social", "--cache-dir", t.TempDir(), "--data", data, "--addr", busy.Addr().String()}
	err = run(context.Background(), args, io.Discard, &errOut)
	if err == nil || !strings.Contains(err.Error(), "address already in use") || strings.Contains(errOut.String(), "listening") {
		t.Fatalf("busy port: error %v, log:\n%s", err, errOut.String())
	}
	addr := busy.Addr().String()
	busy.Close()
	errOut.Reset()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, io.Discard, &errOut) }()
	ready := false
	for deadline := time.Now().Add(20 * time.Second); !ready && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			ready = resp.StatusCode == 200
		}
	}
	cancel()
	err = <-done // the log is read once the server is done writing it
	log := errOut.String()
	if !ready || err != nil {
		t.Fatalf("ready %v, error %v, log:\n%s", ready, err, log)
	}
	if l, r := strings.Index(log, `msg=listening`), strings.Index(log, `msg=ready`); l < 0 || r < l {
		t.Errorf("want listening, then ready:\n%s", log)
	}
}

// A second process on a held index is told which lock and why.
func TestHeldIndexNamesTheLock(t *testing.T) {
	data := tinyIndex(t)
	held, err := index.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, _, err = deploy.OpenIndex(context.Background(), data, t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)), func(string, int, int) {})
	want := "another kernelrank process holds " + data + " (the lock of " + filepath.Join(data, "store", "root.bolt")
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "use another --cache-dir") {
		t.Fatalf("error %v, want it to say %q", err, want)
	}
	// kernelrank ingest into a served index is told the same.
	if err := run(context.Background(), []string{"ingest", "--data", data, data}, io.Discard, io.Discard); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("ingest into a held index: %v, want it to say %q", err, want)
	}
}

// serve --help shows --data's argument as a string, not as `kernelrank
// ingest`, and the admission flags.
func TestServeHelp(t *testing.T) {
	var errOut bytes.Buffer
	_ = run(context.Background(), []string{"serve", "--help"}, io.Discard, &errOut)
	help := errOut.String()
	for _, want := range []string{"-data string", "-max-expensive int", "-rate-limit float", "-max-full-rank-window int", "-learner-timeout duration"} {
		if !strings.Contains(help, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, help)
		}
	}
}

// Every flag's -h shows its value as its type or as a deliberate
// placeholder in capitals: a back-quoted word in a usage string becomes the
// value's name ("-cache-dir kernelrank serve --cache-dir"), which must not
// happen by accident.
func TestFlagHelpNamesValues(t *testing.T) {
	line := regexp.MustCompile(`^  -([a-z0-9-]+)(?: (.+))?$`)
	named := regexp.MustCompile(`^(string|int|int64|uint|float|duration|[A-Z]+)$`)
	for _, cmd := range [][]string{{"serve"}, {"ingest"}, {"retrain"}, {"worker"}, {"eval", "images"}, {"eval", "learners"},
		{"eval", "social"}, {"bench", "http"}} {
		var errOut bytes.Buffer
		_ = run(context.Background(), append(cmd, "-h"), io.Discard, &errOut)
		flags := 0
		for _, l := range strings.Split(errOut.String(), "\n") {
			m := line.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			flags++
			if m[2] != "" && !named.MatchString(m[2]) {
				t.Errorf("%s -h: -%s shows its value as %q", strings.Join(cmd, " "), m[1], m[2])
			}
		}
		if flags == 0 {
			t.Errorf("%s -h lists no flags:\n%s", strings.Join(cmd, " "), errOut.String())
		}
	}
}

// serve's HTTP flags reach the server: --read-timeout (a stalled body gets
// 408), --cors-origins, and --trusted-proxies (loopback is the proxy here,
// so each X-Forwarded-For client has its own bucket of --rate-limit).
func TestServeHTTPFlags(t *testing.T) {
	base, stop, err := startServe([]string{"--no-social", "--cache-dir", t.TempDir(), "--data", tinyIndex(t),
		"--admin-token", "tok", "--read-timeout", "300ms", "--cors-origins", "https://app.example", "--trusted-proxies", "127.0.0.1",
		"--rate-limit", "0.001", "--rate-burst", "1", "--log-level", "error"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	if err := bench.WaitReady(context.Background(), http.DefaultClient, base, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	get := func(client string) *http.Response {
		req, _ := http.NewRequest("GET", base+"/v1/learners", nil)
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for i, c := range []struct {
		client string
		want   int
	}{{"203.0.113.1", 200}, {"203.0.113.2", 200}, {"203.0.113.1", 429}} {
		resp := get(c.client)
		if resp.StatusCode != c.want || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
			t.Errorf("request %d from %s: %d, CORS %q; want %d and the origin allowed", i, c.client, resp.StatusCode,
				resp.Header.Get("Access-Control-Allow-Origin"), c.want)
		}
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST /v1/images HTTP/1.1\r\nHost: kr\r\nAuthorization: Bearer tok\r\nX-Forwarded-For: 203.0.113.3\r\nContent-Length: 100\r\n\r\n[")
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a stalled body: %v %v, want 408", resp, err)
	}
}
