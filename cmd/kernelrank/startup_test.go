package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/index"
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
// one is bound, then the server serves (issue 10, finding 10).
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

// A second process on a held index is told which lock and why (finding 10).
func TestHeldIndexNamesTheLock(t *testing.T) {
	data := tinyIndex(t)
	held, err := index.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, _, err = openIndex(context.Background(), data, t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)), func(string, int, int) {})
	want := filepath.Join(data, "store", "root.bolt") + " is held by another process, most likely another kernelrank serve"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want it to say %q", err, want)
	}
}

// serve --help shows --data's argument as a string, not as `kernelrank
// ingest`, and the admission flags (finding 10).
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

// A corpus directory's progress has its total (finding 10: total=-1 when
// the demo was ingested as a file).
func TestIngestDirProgressHasTotal(t *testing.T) {
	dir := t.TempDir()
	corpus := `{"id":"a","tags":["cat"],"features":[1,2]}` + "\n" + `{"id":"b","tags":["dog"],"features":[2,1]}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, index.CorpusFile), []byte(corpus), 0o644); err != nil {
		t.Fatal(err)
	}
	var totals []int
	if _, err := ingestFiles(context.Background(), filepath.Join(t.TempDir(), "ix"), []string{dir}, false, func(_, total int) {
		totals = append(totals, total)
	}); err != nil {
		t.Fatal(err)
	}
	if len(totals) == 0 || slices.ContainsFunc(totals, func(n int) bool { return n != 2 }) {
		t.Fatalf("progress totals %v, want 2", totals)
	}
}
