// Package redistest gives tests a real Redis: the standalone server and
// the Redis Cluster that .ci/run starts (their addresses in
// KERNELRANK_TEST_REDIS and KERNELRANK_TEST_REDIS_CLUSTER), or a private
// redis-server a test may stop and restart. Without Redis a test skips
// with a message; under CI (CI=true) it fails, so nothing passes vacuously.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Environment variables naming the servers .ci/run starts.
const (
	EnvRedis   = "KERNELRANK_TEST_REDIS"         // redis://127.0.0.1:PORT/0
	EnvCluster = "KERNELRANK_TEST_REDIS_CLUSTER" // redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3
)

func missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: required under CI (CI=true); .ci/run starts it", what)
	}
	t.Skipf("%s: not available, skipping (run .ci/run, or set it)", what)
}

// URL returns the shared standalone Redis, or skips.
func URL(t testing.TB) string {
	t.Helper()
	return fromEnv(t, EnvRedis)
}

// ClusterURL returns the shared Redis Cluster, or skips.
func ClusterURL(t testing.TB) string {
	t.Helper()
	return fromEnv(t, EnvCluster)
}

func fromEnv(t testing.TB, env string) string {
	t.Helper()
	u := os.Getenv(env)
	if u == "" {
		missing(t, env)
	}
	return u
}

// EachServer runs f in a subtest for the shared standalone Redis
// ("redis") and for the shared cluster ("cluster"), each skipped (or
// failed under CI) when absent.
func EachServer(t *testing.T, f func(t *testing.T, url string)) {
	for _, s := range []struct {
		name string
		url  func(testing.TB) string
	}{{"redis", URL}, {"cluster", ClusterURL}} {
		t.Run(s.name, func(t *testing.T) { f(t, s.url(t)) })
	}
}

// Prefix returns a key prefix no other test uses, for tests sharing a server.
func Prefix(t testing.TB) string {
	var b [6]byte
	rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:]) + ":"
}

// Server is a private redis-server on a loopback port.
type Server struct {
	Addr string // 127.0.0.1:PORT
	URL  string // redis://127.0.0.1:PORT/0
	dir  string
	cmd  *exec.Cmd
	t    testing.TB
	aof  bool
	node bool // a cluster node: its cluster configuration is kept in dir
}

// Start runs a private redis-server (no persistence) until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, false)
}

// StartAOF is Start with the append-only file on, synced on every write,
// so that a Restart after a Stop keeps every write the server answered.
func StartAOF(t testing.TB) *Server {
	t.Helper()
	return start(t, true)
}

func start(t testing.TB, aof bool) *Server {
	t.Helper()
	s := newServer(t, aof)
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// newServer returns a server on a free loopback port, not started.
func newServer(t testing.TB, aof bool) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		missing(t, "redis-server")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), dir: t.TempDir(), t: t, aof: aof}
	s.URL = "redis://" + s.Addr + "/0"
	return s
}

// Stop kills the server (as a crash would). Safe to call twice.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server again on its port, empty (with what its
// append-only file holds, for StartAOF), and waits until it answers.
func (s *Server) Restart() {
	s.t.Helper()
	if s.cmd != nil {
		return
	}
	_, port, _ := net.SplitHostPort(s.Addr)
	persist := []string{"--appendonly", "no"}
	if s.aof {
		persist = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	if s.node {
		persist = append(persist, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(s.dir, "nodes.conf"))
	}
	cmd := exec.Command("redis-server", append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "",
		"--dir", s.dir, "--logfile", filepath.Join(s.dir, "redis.log")}, persist...)...)
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("redis-server: %v", err)
	}
	s.cmd = cmd
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if c, err := net.DialTimeout("tcp", s.Addr, 100*time.Millisecond); err == nil {
			fmt.Fprint(c, "PING\r\n")
			buf := make([]byte, 16)
			c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			n, _ := c.Read(buf)
			c.Close()
			if string(buf[:n]) == "+PONG\r\n" {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("redis-server on %s did not answer in 10 s", s.Addr)
}

// Cluster is a private three-master Redis Cluster on loopback ports.
type Cluster struct {
	URL   string // redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3
	Nodes []*Server
	t     testing.TB
}

// StartCluster runs a private three-master cluster, with its append-only
// files on when aof, until the test ends.
func StartCluster(t testing.TB, aof bool) *Cluster {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		missing(t, "redis-cli")
	}
	c := &Cluster{t: t}
	args := []string{"--cluster", "create"}
	for range 3 {
		s := newServer(t, aof)
		s.node = true
		s.Restart()
		t.Cleanup(s.Stop)
		c.Nodes = append(c.Nodes, s)
		args = append(args, s.Addr)
	}
	if out, err := exec.Command("redis-cli", append(args, "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.URL = "redis+cluster://" + c.Nodes[0].Addr + "," + c.Nodes[1].Addr + "," + c.Nodes[2].Addr
	c.waitOK()
	return c
}

// Restart kills every node (as a crash would) and starts them again from
// what they kept (their cluster configuration, and their append-only files
// for StartCluster(t, true)), and waits until the cluster is ok.
func (c *Cluster) Restart() {
	c.t.Helper()
	for _, s := range c.Nodes {
		s.Stop()
	}
	for _, s := range c.Nodes {
		s.Restart()
	}
	c.waitOK()
}

func (c *Cluster) waitOK() {
	c.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ok := true
		for _, s := range c.Nodes {
			_, port, _ := net.SplitHostPort(s.Addr)
			out, err := exec.Command("redis-cli", "-p", port, "cluster", "info").Output()
			ok = ok && err == nil && strings.Contains(string(out), "cluster_state:ok")
		}
		if ok {
			return
		}
	}
	c.t.Fatal("the private Redis Cluster is not ok after 20 s")
}
