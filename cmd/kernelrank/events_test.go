package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/internal/redistest"
)

// String is what l holds so far.
func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveUntil runs `kernelrank serve args` on a free port until the test
// ends or stop is called, and returns its address once it is ready.
func serveUntil(t *testing.T, args ...string) (addr string, log *lockedBuffer, stop func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var exited error
	done := make(chan struct{})
	log = &lockedBuffer{}
	go func() {
		exited = run(ctx, append([]string{"serve", "--no-social", "--addr", addr}, args...), io.Discard, log)
		close(done)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			if exited != nil {
				t.Errorf("serve: %v\n%s", exited, log.String())
			}
		})
	}
	t.Cleanup(stop)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return addr, log, stop
			}
		}
		select {
		case <-done:
			t.Fatalf("serve ended before it was ready: %v\n%s", exited, log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready:\n%s", log.String())
		}
	}
}

// postClicks posts n sessions of "cat" on server addr: a, b, c shown by
// re-ranker, c clicked.
func postClicks(t *testing.T, addr, reranker string, n int) {
	t.Helper()
	for s := range n {
		var evs []string
		for i, item := range []string{"a", "b", "c"} {
			e := fmt.Sprintf(`{"kind":"impression","surface":"search","query":"cat","rerank":%q,"item":%q,"rank":%d,"session":"%s-%d","client_time":"2026-01-02T03:04:05Z"}`,
				reranker, item, i+1, reranker, s)
			evs = append(evs, e)
			if item == "c" {
				evs = append(evs, strings.Replace(e, "impression", "click", 1))
			}
		}
		resp, err := http.Post("http://"+addr+"/v1/events", "application/json", strings.NewReader(`{"events":[`+strings.Join(evs, ",")+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != `{"stored":4}` {
			t.Fatalf("POST /v1/events: %d %s", resp.StatusCode, body)
		}
	}
}

// evalClicksOut runs `kernelrank eval clicks args` and returns what it printed.
func evalClicksOut(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), append([]string{"eval", "clicks"}, args...), &out, &errOut); err != nil {
		t.Fatalf("eval clicks: %v\n%s", err, errOut.String())
	}
	return out.String()
}

// waitLog waits until log holds want.
func waitLog(t *testing.T, log *lockedBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(log.String(), want); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never says %q:\n%s", want, log.String())
		}
	}
}

// Without Redis a server keeps its events in its cache directory. With
// --validation-from-clicks it chooses its default re-ranker on the
// judgments they give: again as clicks come (--reselect-every), and at the
// start of a restarted server, which keeps them.
func TestServeKeepsEventsInItsCacheDir(t *testing.T) {
	data, cacheDir := tinyIndex(t), t.TempDir()
	addr, log, stop := serveUntil(t, "--data", data, "--cache-dir", cacheDir, "--validation-from-clicks", "--reselect-every", "20ms")
	waitLog(t, log, "no validation queries: the default re-ranker stays")
	postClicks(t, addr, "poly", 6)
	waitLog(t, log, "msg=\"click judgments\" events=24 queries=1 relevant=1")
	waitLog(t, log, "default re-ranker chosen")
	stop()
	addr, log, _ = serveUntil(t, "--data", data, "--cache-dir", cacheDir, "--validation-from-clicks")
	waitLog(t, log, "default re-ranker chosen")
	if !strings.Contains(log.String(), "msg=\"click judgments\" events=24 queries=1 relevant=1") ||
		!strings.Contains(log.String(), "from=--validation-from-clicks") {
		t.Errorf("the restarted server's choice was not made on the kept clicks:\n%s", log.String())
	}
	postClicks(t, addr, "rbf", 2)
	out := evalClicksOut(t, "--events", filepath.Join(cacheDir, "events"))
	for _, want := range []string{"32 events", "search   poly                           6          18       6", "search   rbf                            2           6       2"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval clicks printed no %q:\n%s", want, out)
		}
	}
}

// With Redis every server appends to the one stream, which outlives them.
func TestServersShareTheEventStream(t *testing.T) {
	url := redistest.Start(t).URL
	corpus := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(corpus, []byte(`{"id":"a","tags":["cat"],"features":[1,2]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	if err := run(context.Background(), []string{"ingest", "--redis", url, corpus}, io.Discard, &errOut); err != nil {
		t.Fatalf("ingest: %v\n%s", err, errOut.String())
	}
	a, _, stopA := serveUntil(t, "--cache-dir", t.TempDir(), "--redis", url)
	b, _, stopB := serveUntil(t, "--cache-dir", t.TempDir(), "--redis", url)
	postClicks(t, a, "poly", 3)
	postClicks(t, b, "rbf", 4)
	stopA()
	stopB()
	out := evalClicksOut(t, "--redis", url)
	for _, want := range []string{"28 events", "search   poly                           3           9       3", "search   rbf                            4          12       4"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval clicks printed no %q:\n%s", want, out)
		}
	}
}
