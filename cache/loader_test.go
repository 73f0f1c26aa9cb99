package cache

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

var testKey = Key{Kind: "kernel", Learner: "npk", Params: HashStrings(`{"rank":20}`), Input: HashStrings("a", "b", "c")}

// kernel is a value computed in float64 and stored as float32, with the
// awkward floats besides.
func kernel() Value {
	v := Value{Kind: Float32, Shape: []int{3, 3}}
	for _, x := range []float64{math.Sqrt(2), 1.0 / 3, math.Pi, -math.E, 1e-40, math.NaN(), math.Inf(1), math.Copysign(0, -1), 0.1} {
		v.F32 = append(v.F32, float32(x))
	}
	return v
}

// counted returns a compute that counts its calls and returns v.
func counted(n *atomic.Int32, v Value) func(context.Context) (Value, error) {
	return func(context.Context) (Value, error) {
		n.Add(1)
		return v, nil
	}
}

func fetch(t *testing.T, l *Loader, compute func(context.Context) (Value, error), want Value, status Status) {
	t.Helper()
	got, st, err := l.Fetch(context.Background(), testKey, time.Hour, compute)
	if err != nil || st != status || !sameValue(got, want) {
		t.Fatalf("fetch: %v, %+v, %v; want %v, %+v", st, got, err, status, want)
	}
}

func lookups(m *Metrics, result string) float64 {
	return testutil.ToFloat64(m.results.WithLabelValues(testKey.Kind, result))
}

func TestLoaderOff(t *testing.T) {
	var n atomic.Int32
	for _, l := range []*Loader{nil, NewLoader(nil, nil)} {
		fetch(t, l, counted(&n, kernel()), kernel(), Off)
		if err := l.Health(context.Background()); err != nil || l.Cache() != nil {
			t.Errorf("health %v, cache %v", err, l.Cache())
		}
	}
	if n.Load() != 2 {
		t.Errorf("%d computations, want 2", n.Load())
	}
}

// TestLoaderHitIsMiss: a miss returns what a hit returns later, bit for
// bit, on every backend.
func TestLoaderHitIsMiss(t *testing.T) {
	f64 := Value{Kind: Float64, Shape: []int{2}, F64: []float64{math.Nextafter(1, 2), math.NaN()}}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			l := NewLoader(b.open(t), nil)
			var n atomic.Int32
			fetch(t, l, counted(&n, kernel()), kernel(), Miss)
			fetch(t, l, counted(&n, kernel()), kernel(), Hit)
			k := testKey
			k.Kind = "f64"
			for _, st := range []Status{Miss, Hit} {
				got, gotSt, err := l.Fetch(context.Background(), k, time.Hour, counted(&n, f64))
				if err != nil || gotSt != st || !sameValue(got, f64) {
					t.Fatalf("float64: %v, %+v, %v", gotSt, got, err)
				}
			}
			if n.Load() != 2 {
				t.Errorf("%d computations, want 2", n.Load())
			}
		})
	}
}

// TestLoaderSingleflight: concurrent misses on one key in a process
// compute once.
func TestLoaderSingleflight(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			l := NewLoader(b.open(t), nil)
			var n atomic.Int32
			slow := func(ctx context.Context) (Value, error) {
				n.Add(1)
				time.Sleep(50 * time.Millisecond) // the others pile up meanwhile
				return kernel(), nil
			}
			start := make(chan struct{})
			var wg sync.WaitGroup
			for range 32 {
				wg.Go(func() {
					<-start
					// The callers sharing the computation get Miss, the
					// later ones Hit.
					got, st, err := l.Fetch(context.Background(), testKey, time.Hour, slow)
					if err != nil || (st != Miss && st != Hit) || !sameValue(got, kernel()) {
						t.Errorf("fetch: %v, %+v, %v", st, got, err)
					}
				})
			}
			close(start)
			wg.Wait()
			if n.Load() != 1 {
				t.Errorf("%d computations, want 1", n.Load())
			}
		})
	}
}

// TestLoaderAcrossProcesses: two servers (two clients of one Redis) miss
// one key; the second waits for the first's computation instead of
// computing it again.
func TestLoaderAcrossProcesses(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, u string) {
		prefix := redistest.Prefix(t)
		m1, m2 := NewMetrics(prometheus.NewRegistry(), "redis"), NewMetrics(prometheus.NewRegistry(), "redis")
		l1, l2 := NewLoader(openRedisPrefix(t, u, prefix), m1), NewLoader(openRedisPrefix(t, u, prefix), m2)
		l2.Poll = 5 * time.Millisecond
		var n1, n2 atomic.Int32
		started, release := make(chan struct{}), make(chan struct{})
		first := make(chan error, 1)
		go func() {
			_, st, err := l1.Fetch(context.Background(), testKey, time.Hour, func(ctx context.Context) (Value, error) {
				n1.Add(1)
				close(started)
				<-release
				return kernel(), nil
			})
			if err == nil && st != Miss {
				err = errors.New("first server: status " + string(st))
			}
			first <- err
		}()
		<-started
		second := make(chan Status, 1)
		go func() {
			v, st, err := l2.Fetch(context.Background(), testKey, time.Hour, counted(&n2, kernel()))
			if err != nil || !sameValue(v, kernel()) {
				t.Errorf("second server: %+v, %v", v, err)
			}
			second <- st
		}()
		// The second server has missed twice: its lookup, then a poll
		// while the first holds the lock.
		eventually(t, "the second server waits", func() bool { return lookups(m2, "miss") >= 2 })
		close(release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		if st := <-second; st != Hit {
			t.Errorf("second server: status %v, want hit", st)
		}
		if n1.Load() != 1 || n2.Load() != 0 {
			t.Errorf("computations: %d by the first server, %d by the second; want 1, 0", n1.Load(), n2.Load())
		}
	})
}

// TestLoaderCorrupt: a value that fails its checks is never served, is
// deleted and is counted.
func TestLoaderCorrupt(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			c := b.open(t)
			m := NewMetrics(prometheus.NewRegistry(), c.Backend())
			l := NewLoader(c, m)
			ks := testKey.String()

			mustSet(t, c, ks, []byte("garbage"), time.Hour)
			boom := errors.New("boom")
			if v, st, err := l.Fetch(context.Background(), testKey, time.Hour, func(context.Context) (Value, error) { return Value{}, boom }); !errors.Is(err, boom) {
				t.Fatalf("fetch over garbage: %v, %+v, %v; want the computation's error", st, v, err)
			}
			mustMiss(t, c, ks) // deleted
			if got := lookups(m, "corrupt"); got != 1 {
				t.Errorf("corrupt lookups: %v, want 1", got)
			}

			// A real value, truncated.
			var n atomic.Int32
			fetch(t, l, counted(&n, kernel()), kernel(), Miss)
			stored := mustGet(t, c, ks)
			mustSet(t, c, ks, stored[:len(stored)-1], time.Hour)
			other := Value{Kind: Int32, Shape: []int{1}, I32: []int32{7}}
			fetch(t, l, counted(&n, other), other, Miss)
			fetch(t, l, counted(&n, other), other, Hit)
			if got := lookups(m, "corrupt"); got != 2 {
				t.Errorf("corrupt lookups: %v, want 2", got)
			}
			if n.Load() != 2 {
				t.Errorf("%d computations, want 2", n.Load())
			}
		})
	}
}

// backendUp is the exposition of the backend-up gauge at value up.
func backendUp(up string) string {
	return `
# HELP kernelrank_cache_backend_up 1 when the cache backend answered its last ping.
# TYPE kernelrank_cache_backend_up gauge
kernelrank_cache_backend_up{backend="redis"} ` + up + "\n"
}

// TestLoaderRedisDown: without Redis the loader computes; it says so in
// Health and the backend-up gauge; it recovers when Redis is back.
func TestLoaderRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	reg := prometheus.NewRegistry()
	l := NewLoader(openRedis(t, srv.URL), NewMetrics(reg, "redis"))
	ctx := context.Background()
	var n atomic.Int32
	fetch(t, l, counted(&n, kernel()), kernel(), Miss)
	fetch(t, l, counted(&n, kernel()), kernel(), Hit)

	srv.Stop()
	fetch(t, l, counted(&n, kernel()), kernel(), Miss)
	// Within Backoff the backend is not asked again: no new error.
	gets := testutil.ToFloat64(l.m.errors.WithLabelValues("get"))
	fetch(t, l, counted(&n, kernel()), kernel(), Miss)
	if got := testutil.ToFloat64(l.m.errors.WithLabelValues("get")); got != gets || gets == 0 {
		t.Errorf("get errors %v then %v: want one, then none while backing off", gets, got)
	}
	if got := testutil.ToFloat64(l.m.results.WithLabelValues(testKey.Kind, "skipped")); got != 1 {
		t.Errorf("%v lookups skipped while backing off, want 1", got)
	}
	if err := l.Health(ctx); err == nil {
		t.Error("health: nil with Redis stopped")
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(backendUp("0")), "kernelrank_cache_backend_up"); err != nil {
		t.Error(err)
	}

	srv.Restart() // empty
	eventually(t, "health after the restart", func() bool { return l.Health(ctx) == nil })
	if err := testutil.GatherAndCompare(reg, strings.NewReader(backendUp("1")), "kernelrank_cache_backend_up"); err != nil {
		t.Error(err)
	}
	fetch(t, l, counted(&n, kernel()), kernel(), Miss)
	fetch(t, l, counted(&n, kernel()), kernel(), Hit)
	if n.Load() != 4 {
		t.Errorf("%d computations, want 4 (first, twice with Redis down, Redis emptied)", n.Load())
	}
}

// TestLoaderLeaderTimesOut: a request that shares the computation of one
// whose deadline passes computes for itself instead of failing.
func TestLoaderLeaderTimesOut(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry(), "memory")
	l := NewLoader(newMemory(t, 1<<20), m)
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	leader := make(chan error, 1)
	go func() {
		// The leader, its ctx being alive, computes again after its first
		// computation ran out of time; it runs out again.
		_, _, err := l.Fetch(context.Background(), testKey, time.Hour, func(context.Context) (Value, error) {
			once.Do(func() { close(started) })
			<-release
			return Value{}, context.DeadlineExceeded // as if its deadline passed
		})
		leader <- err
	}()
	<-started
	follower := make(chan error, 1)
	var n atomic.Int32
	go func() {
		v, st, err := l.Fetch(context.Background(), testKey, time.Hour, counted(&n, kernel()))
		if err == nil && (st != Miss || !sameValue(v, kernel())) {
			err = errors.New("follower: status " + string(st))
		}
		follower <- err
	}()
	// The follower has missed (after the leader's two misses): it joins the
	// leader's computation.
	eventually(t, "the follower misses", func() bool { return lookups(m, "miss") >= 3 })
	close(release)
	if err := <-leader; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("leader: %v, want its deadline", err)
	}
	if err := <-follower; err != nil || n.Load() != 1 {
		t.Errorf("follower: %v after %d computations of its own, want the value after 1", err, n.Load())
	}
}
