package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index/blob"
	"github.com/kernelrank/kernelrank/internal/bench"
	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The deployment of the design notes, as real processes on a real Redis:
// three servers and a worker share one corpus through the change log, and
// stay one corpus through a server killed mid-apply, a Redis restart, a
// trimmed log and concurrent writers of one id. The Redis is private (the
// processes own its keys), with its append-only file on.
func TestSeveralServersOneCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs five processes")
	}
	rs := redistest.StartAOF(t)
	severalServers(t, rs.URL, func() {
		rs.Stop()
		rs.Restart()
	})
}

// The same on a private three-master Redis Cluster.
func TestSeveralServersOneCorpusOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs five processes")
	}
	c := redistest.StartCluster(t, true)
	severalServers(t, c.URL, c.Restart)
}

// severalServers runs the deployment on redisURL; restartRedis kills
// Redis and starts it again from its append-only files.
func severalServers(t *testing.T, redisURL string, restartRedis func()) {
	d := newDeployment(t, redisURL)

	// A small corpus through the log: 30 demo images.
	corpusDir, distinct := demoCorpus(t, 30)
	d.run("ingest", "--redis", redisURL, corpusDir)
	a, b, c := d.serve("a"), d.serve("b"), d.serve("c")
	w := d.start("worker", "worker", "--redis", redisURL, "--cache-dir", filepath.Join(d.dir, "w"), "--log-level", "warn")
	defer w.stop(t)
	v := d.converged(a, b, c)
	if v.Images != 30 {
		t.Fatalf("%d images served, want the 30 ingested", v.Images)
	}

	// An upload on A is searchable on B and C within 2 s.
	d.upload(a, "kr-up", []string{"unicorn"}, color.RGBA{200, 20, 20, 255})
	start := time.Now()
	for _, n := range []*node{b, c} {
		for !n.finds(t, "unicorn", "kr-up") {
			if time.Since(start) > 2*time.Second {
				t.Fatalf("the upload on a is not searchable on %s after 2 s", n.name)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Logf("upload on a searchable on b and c after %v", time.Since(start).Round(time.Millisecond))
	if code, _ := d.get(b, "/v1/images/kr-up/thumbnail"); code != 200 {
		t.Fatalf("b serves a's upload's thumbnail: %d", code)
	}
	// A delete on C is gone everywhere.
	if code, _ := d.do(c, "DELETE", "/v1/images/kr-up", nil); code != 200 {
		t.Fatalf("DELETE on c: %d", code)
	}
	d.converged(a, b, c)
	for _, n := range []*node{a, b, c} {
		if code, _ := d.get(n, "/v1/images/kr-up"); code != 404 {
			t.Fatalf("deleted on c, %s answers %d", n.name, code)
		}
	}

	// A search job's rankings, computed by the worker on its replica, are
	// hits on all three servers.
	q := "animal"
	d.get(a, "/v1/search?q="+q) // counts the query
	code, job := d.do(a, "POST", "/v1/jobs", []byte(`{"target":"search","queries":5}`))
	if code != 202 {
		t.Fatalf("POST /v1/jobs: %d %v", code, job)
	}
	id, _ := job["id"].(string)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, job = d.do(a, "GET", "/v1/jobs/"+id, nil)
		if job["status"] == "succeeded" || job["status"] == "failed" || time.Now().After(deadline) {
			break
		}
	}
	v = d.converged(a, b, c)
	if job["status"] != "succeeded" || job["version"] != v.Version {
		t.Fatalf("search job %v; want succeeded on corpus version %s", job, v.Version)
	}
	for _, n := range []*node{a, b, c} {
		_, res := d.get(n, "/v1/search?rerank=npk&q="+q)
		if rr, _ := res["rerank"].(map[string]any); rr["cache"] != "hit" {
			t.Fatalf("%s: the worker's npk ranking of %q is not a hit: %v", n.name, q, rr)
		}
	}

	// Fault: b killed with -9 while it applies a large ingest, then
	// restarted: it loses nothing the log acknowledged.
	docs := filepath.Join(d.dir, "synthetic.jsonl")
	if err := bench.WriteSyntheticJSONL(docs, 3000); err != nil {
		t.Fatal(err)
	}
	ing := d.start("ingest", "ingest", "--redis", redisURL, docs)
	for deadline := time.Now().Add(30 * time.Second); d.status(b).Images <= 30 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("b killed with %d of 3030 images applied", d.status(b).Images)
	b.kill9(t)
	if err := ing.cmd.Wait(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, ing.output())
	}
	b = d.serve("b")
	if v = d.converged(a, b, c); v.Images != 3030 {
		t.Fatalf("%d images after the ingest, want 3030", v.Images)
	}

	// Fault: Redis restarted (its append-only file on): the servers go on
	// and nothing acknowledged is lost.
	d.upload(a, "before-restart", []string{"zebra"}, color.RGBA{0, 0, 200, 255})
	restartRedis()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if code, _ := d.do(b, "POST", "/v1/images", []byte(uploadBody(t, "after-restart", []string{"zebra"}, color.RGBA{0, 200, 0, 255}))); code == 200 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no write taken 20 s after Redis restarted: %d", code)
		}
	}
	v = d.converged(a, b, c)
	for _, n := range []*node{a, b, c} {
		if !n.finds(t, "zebra", "before-restart") || !n.finds(t, "zebra", "after-restart") {
			t.Fatalf("%s lacks a write from before or after Redis restarted", n.name)
		}
	}

	// Fault: two servers write one id at once: one winner everywhere, and
	// only the winner's image is kept.
	var wg sync.WaitGroup
	for i, n := range []*node{a, b} {
		wg.Go(func() {
			for j := range 5 {
				d.upload(n, "same", []string{"race"}, color.RGBA{uint8(40 * i), uint8(40 * j), 99, 255})
			}
		})
	}
	wg.Wait()
	v = d.converged(a, b, c)
	var thumbs [][]byte
	for _, n := range []*node{a, b, c} {
		thumbs = append(thumbs, d.raw(n, "/v1/images/same/thumbnail"))
	}
	if !bytes.Equal(thumbs[0], thumbs[1]) || !bytes.Equal(thumbs[0], thumbs[2]) || len(thumbs[0]) == 0 {
		t.Fatal("the servers disagree on the winner of the race")
	}
	// The demo's distinct images, before-restart, after-restart and the
	// race's winner.
	if n := d.originalBlobs(t); n != distinct+3 {
		t.Fatalf("%d originals in the blob store, want %d: %d no doc refers to", n, distinct+3, n-distinct-3)
	}

	// Fault: the log was trimmed below a snapshot (the servers write one
	// every 10 entries); a new server starts from the snapshot and the
	// log's tail. A snapshot is written after the entries are applied, by
	// whichever server takes the lock; b, killed above, may have held it
	// (it expires after a minute), so wait for one rather than expect it.
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		st := d.fullStatus(a)
		if st.Corpus.Replica.Snapshot != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot written: %+v\n%s", st, a.output()+b.output())
		}
	}
	e := d.serve("e")
	if v2 := d.converged(a, b, c, e); v2.Version != v.Version {
		t.Fatalf("new server: version %s, want %s", v2.Version, v.Version)
	}
	if !strings.Contains(e.output(), "loading the snapshot") {
		t.Errorf("the new server did not load the snapshot:\n%s", e.output())
	}
}

// deployment runs kernelrank processes on one Redis.
type deployment struct {
	t     *testing.T
	bin   string
	redis string
	dir   string
	mu    sync.Mutex
	nodes []*node
}

func newDeployment(t *testing.T, redisURL string) *deployment {
	d := &deployment{t: t, redis: redisURL, dir: t.TempDir()}
	d.bin = filepath.Join(d.dir, "kernelrank")
	if out, err := exec.Command("go", "build", "-o", d.bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		for _, n := range d.nodes {
			n.stop(t)
		}
	})
	return d
}

// node is a kernelrank process.
type node struct {
	name string
	addr string // a server's
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (n *node) output() string {
	n.out.mu.Lock()
	defer n.out.mu.Unlock()
	return n.out.b.String()
}

func (d *deployment) start(name string, args ...string) *node {
	d.t.Helper()
	n := &node{name: name, out: &lockedBuffer{}, done: make(chan struct{})}
	n.cmd = exec.Command(d.bin, args...)
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	if err := n.cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.mu.Lock()
	d.nodes = append(d.nodes, n)
	d.mu.Unlock()
	return n
}

// run runs a command to its end.
func (d *deployment) run(args ...string) {
	d.t.Helper()
	n := d.start(args[0], args...)
	if err := n.cmd.Wait(); err != nil {
		d.t.Fatalf("kernelrank %s: %v\n%s", strings.Join(args, " "), err, n.output())
	}
}

// serve starts server name (its cache directory kept across restarts) and
// waits until it is ready.
func (d *deployment) serve(name string) *node {
	return d.serveWith(name, "--redis", d.redis, "--no-social", "--snapshot-every", "10")
}

// serveWith starts server name with the flags given besides its cache
// directory, address, token and log level, and waits until it is ready.
func (d *deployment) serveWith(name string, flags ...string) *node {
	d.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		d.t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	args := append([]string{"serve", "--cache-dir", filepath.Join(d.dir, name), "--addr", addr,
		"--admin-token", "tok", "--rate-limit", "0", "--log-level", "info"}, flags...)
	n := d.start(name, args...)
	n.addr = addr
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return n
			}
		}
		if time.Now().After(deadline) || n.cmd.ProcessState != nil {
			d.t.Fatalf("server %s not ready:\n%s", name, n.output())
		}
	}
}

func (n *node) kill9(t *testing.T) {
	t.Helper()
	if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	n.cmd.Wait()
}

func (n *node) stop(t *testing.T) {
	if n.cmd.ProcessState != nil {
		return
	}
	n.cmd.Process.Signal(os.Interrupt)
	timer := time.AfterFunc(20*time.Second, func() { n.cmd.Process.Kill() })
	n.cmd.Wait()
	timer.Stop()
}

func (d *deployment) do(n *node, method, path string, body []byte) (int, map[string]any) {
	d.t.Helper()
	req, err := http.NewRequest(method, "http://"+n.addr+path, bytes.NewReader(body))
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s on %s: %v", method, path, n.name, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

func (d *deployment) get(n *node, path string) (int, map[string]any) {
	return d.do(n, "GET", path, nil)
}

func (d *deployment) raw(n *node, path string) []byte {
	d.t.Helper()
	resp, err := http.Get("http://" + n.addr + path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil
	}
	return b
}

func (n *node) finds(t *testing.T, q, id string) bool {
	resp, err := http.Get("http://" + n.addr + "/v1/search?k=100&q=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Results []struct{ ID string }
	}
	json.NewDecoder(resp.Body).Decode(&out)
	for _, r := range out.Results {
		if r.ID == id {
			return true
		}
	}
	return false
}

// statusView is GET /v1/status.
type statusView struct {
	Status string
	Corpus struct {
		Version string
		Images  int
		Replica struct {
			Applied, Head, Snapshot string
			LagEntries              int64 `json:"lag_entries"`
		}
	}
}

type corpusState struct {
	Version string
	Images  int
}

func (d *deployment) fullStatus(n *node) statusView {
	d.t.Helper()
	resp, err := http.Get("http://" + n.addr + "/v1/status")
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	var v statusView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		d.t.Fatal(err)
	}
	return v
}

func (d *deployment) status(n *node) corpusState {
	v := d.fullStatus(n)
	return corpusState{v.Corpus.Version, v.Corpus.Images}
}

// converged waits until every node has applied the log's head and they
// report one corpus version, and returns it.
func (d *deployment) converged(ns ...*node) corpusState {
	d.t.Helper()
	var last []statusView
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		last = last[:0]
		ok := true
		for _, n := range ns {
			v := d.fullStatus(n)
			last = append(last, v)
			r := v.Corpus.Replica
			ok = ok && r.Applied == r.Head && v.Corpus.Version == last[0].Corpus.Version
		}
		if ok {
			return corpusState{last[0].Corpus.Version, last[0].Corpus.Images}
		}
	}
	d.t.Fatalf("no convergence in 30 s: %+v", last)
	return corpusState{}
}

func encodePNG(t *testing.T, c color.Color) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 48, 32))
	for y := range 32 {
		for x := range 48 {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func uploadBody(t *testing.T, id string, tags []string, c color.Color) string {
	b, _ := json.Marshal(map[string]any{"id": id, "tags": tags, "image_base64": base64.StdEncoding.EncodeToString(encodePNG(t, c))})
	return string(b)
}

func (d *deployment) upload(n *node, id string, tags []string, c color.Color) {
	if code, body := d.do(n, "POST", "/v1/images", []byte(uploadBody(d.t, id, tags, c))); code != 200 {
		d.t.Errorf("upload %s on %s: %d %v", id, n.name, code, body)
	}
}

// originalBlobs counts the originals in the Redis blob store.
func (d *deployment) originalBlobs(t *testing.T) int {
	t.Helper()
	o, err := cache.ParseRedisURL(d.redis)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewUniversalClient(o)
	defer rc.Close()
	originals := 0
	err = blob.NewRedis(rc, blob.DefaultPrefix, 0, 0).Walk(t.Context(), func(name string) error {
		if blob.Original(name) == name {
			originals++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return originals
}

// demoCorpus writes the first n demo records with their images and
// returns the directory and the number of distinct images.
func demoCorpus(t *testing.T, n int) (string, int) {
	t.Helper()
	dir := t.TempDir()
	jsonl, err := demo.ExtractFirst(dir, n)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(b)), "\n")
	distinct := map[string]bool{}
	for _, l := range lines {
		var rec struct{ Image string }
		json.Unmarshal([]byte(l), &rec)
		raw, err := os.ReadFile(filepath.Join(dir, rec.Image))
		if err != nil {
			t.Fatal(err)
		}
		distinct[blob.Ref(raw)] = true
	}
	return dir, len(distinct)
}
