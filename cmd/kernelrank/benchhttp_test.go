package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/bench"
	"github.com/kernelrank/kernelrank/internal/demo"
)

// benchData writes a tiny index and social network under dir and returns
// the serve flags of a server over them, and one user's id.
func benchData(t *testing.T, dir string) (serveArgs []string, user string) {
	t.Helper()
	ix, err := index.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]index.Doc, 40)
	for i := range docs {
		f := make([]float32, 8)
		f[i%8], f[(i*3)%8] = 1, float32(i)/40
		docs[i] = index.Doc{ID: fmt.Sprintf("d%02d", i), Tags: []string{[]string{"cat", "dog"}[i%2], "pet"}, Features: f}
	}
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	net, err := demo.GenerateSocial(1, demo.SocialOptions{Users: 40, Groups: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := net.WriteDir(filepath.Join(dir, "social")); err != nil {
		t.Fatal(err)
	}
	return []string{"--data", filepath.Join(dir, "index"), "--social", filepath.Join(dir, "social"), "--cache-dir", filepath.Join(dir, "cache")}, net.Users[0].ID
}

// TestBenchHTTP runs a short bench on an in-process server over a tiny
// index and network: every request kind has a row per concurrency, with
// requests, no errors and ordered, positive latencies.
func TestBenchHTTP(t *testing.T) {
	serveArgs, user := benchData(t, t.TempDir())
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"bench", "http", "--duration", "150ms", "--concurrency", "1,3", "--queries", "cat,dog,pet",
		"--user", user}, serveArgs...), &out, &errOut)
	if err != nil {
		t.Fatalf("bench http: %v\n%s", err, errOut.String())
	}
	t.Log("\n" + out.String())
	if !strings.Contains(out.String(), "no ranking is asked for twice") {
		t.Errorf("the output does not say how the ranking cache is defeated")
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || (f[0] != "search" && f[0] != "friends") {
			continue
		}
		n := len(f)
		name := strings.Join(f[:n-7], " ") + " @" + f[n-7]
		rows[name] = true
		requests, _ := strconv.Atoi(f[n-6])
		errs, _ := strconv.Atoi(f[n-5])
		perSecond, _ := strconv.ParseFloat(f[n-4], 64)
		p50, _ := strconv.ParseFloat(f[n-3], 64)
		p99, _ := strconv.ParseFloat(f[n-2], 64)
		hits, _ := strconv.Atoi(f[n-1])
		if requests < 1 || errs != 0 || perSecond <= 0 || p50 <= 0 || p99 < p50 || hits != 0 {
			t.Errorf("row %q: %d requests, %d errors, %.1f req/s, p50 %.1f ms, p99 %.1f ms, %d cache hits", name, requests, errs, perSecond, p50, p99, hits)
		}
	}
	for _, kind := range []string{"search raw", "search poly", "search npk low-rank (rank 10)", "search npk full-rank", "friends of " + user} {
		for _, c := range []string{"1", "3"} {
			if !rows[kind+" @"+c] {
				t.Errorf("no row %q at %s clients", kind, c)
			}
		}
	}
}

// A server that rate-limits the bench gets no table: the error says how
// many requests were 429s and how to start the server.
func TestBenchHTTPRefusesRateLimitedNumbers(t *testing.T) {
	serveArgs, user := benchData(t, t.TempDir())
	var errOut bytes.Buffer
	base, stop, err := startServe(append([]string{"--rate-limit", "0.001", "--rate-burst", "5", "--log-level", "error"}, serveArgs...), &errOut)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("server: %v", err)
		}
	}()
	var out bytes.Buffer
	err = run(context.Background(), []string{"bench", "http", "--url", base, "--requests", "20", "--concurrency", "1", "--queries", "cat",
		"--user", user}, &out, &errOut)
	want := regexp.MustCompile(`answered 15 of 20 requests of "search raw" at 1 clients with 429 Too Many Requests: .* nothing is reported. Restart it with --rate-limit 0`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Fatalf("bench of a rate-limited server: %v, want it to match %q", err, want)
	}
	if strings.Contains(out.String(), "req/s") {
		t.Errorf("a table was printed:\n%s", out.String())
	}
}

// startServe runs `kernelrank serve` with args in this process on a free
// loopback port (see bench.StartServer).
func startServe(args []string, stderr io.Writer) (base string, stop func() error, err error) {
	return bench.StartServer(context.Background(), func(ctx context.Context, addr string) error {
		return serve(ctx, append([]string{"--addr", addr}, args...), stderr)
	})
}
