package cache

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
)

// Status says where a value came from: the cache (hit), a computation
// (miss), or a computation with no cache configured (off).
type Status string

// The statuses.
const (
	Hit  Status = "hit"
	Miss Status = "miss"
	Off  Status = "off"
)

// Loader reads values through a Cache, computing and storing them on a
// miss. Concurrent misses on one key compute once in the process
// (singleflight) and, on a shared backend, once across processes: the
// first takes a short lock, the others wait for its value (up to the lock's
// TTL, then compute themselves). A value that fails Decode is deleted,
// counted and treated as a miss; a backend error is counted, marks the
// loader degraded and is treated as a miss; for Backoff after it the
// loader does not call the backend at all (a Redis that is gone costs a
// request a failed dial, about 8 ms, not every request), then tries again.
// A nil *Loader is "off".
type Loader struct {
	c       Cache
	m       *Metrics
	sf      singleflight.Group
	LockTTL time.Duration // cross-process compute lock (default 30 s)
	Poll    time.Duration // how often a waiter looks for the value (default 25 ms)
	Backoff time.Duration // how long a backend error keeps the backend unused (default 1 s)

	mu      sync.Mutex
	lastErr error
	errAt   time.Time
}

// NewLoader returns a loader over c. m may be nil (no metrics).
func NewLoader(c Cache, m *Metrics) *Loader {
	return &Loader{c: c, m: m, LockTTL: 30 * time.Second, Poll: 25 * time.Millisecond, Backoff: time.Second}
}

// Cache returns the backend (nil for a nil loader).
func (l *Loader) Cache() Cache {
	if l == nil {
		return nil
	}
	return l.c
}

// Fetch returns the value of key, computing it with compute on a miss and
// storing it for ttl. The value returned on a miss is the stored one
// (encoded and decoded), so a hit and a miss give the same answer.
func (l *Loader) Fetch(ctx context.Context, key Key, ttl time.Duration, compute func(context.Context) (Value, error)) (Value, Status, error) {
	if l == nil || l.c == nil {
		v, err := compute(ctx)
		return v, Off, err
	}
	if l.backingOff() {
		l.m.result(key.Kind, "skipped")
		v, err := compute(ctx)
		if err != nil {
			return Value{}, Miss, err
		}
		return roundTrip(v)
	}
	ks := key.String()
	if v, ok := l.get(ctx, key.Kind, ks); ok {
		return v, Hit, nil
	}
	ch := l.sf.DoChan(ks, func() (any, error) { return l.fill(ctx, key.Kind, ks, ttl, compute) })
	select {
	case r := <-ch:
		if r.Err != nil {
			// The leader's request may have been cancelled, or have run
			// out of time, while ours was not: compute for ourselves.
			leaderGone := errors.Is(r.Err, context.Canceled) || errors.Is(r.Err, context.DeadlineExceeded)
			if leaderGone && ctx.Err() == nil {
				v, err := compute(ctx)
				if err != nil {
					return Value{}, Miss, err
				}
				return roundTrip(v)
			}
			return Value{}, Miss, r.Err
		}
		f := r.Val.(filled)
		return f.v, f.status, nil
	case <-ctx.Done():
		return Value{}, Miss, ctx.Err()
	}
}

type filled struct {
	v      Value
	status Status
}

func roundTrip(v Value) (Value, Status, error) {
	b, err := Encode(v)
	if err != nil {
		return Value{}, Miss, err
	}
	v, err = Decode(b)
	return v, Miss, err
}

// fill computes key under the cross-process lock, or waits for the holder.
func (l *Loader) fill(ctx context.Context, kind, ks string, ttl time.Duration, compute func(context.Context) (Value, error)) (filled, error) {
	unlock, ok, err := l.c.Lock(ctx, ks, l.LockTTL)
	if err != nil {
		l.fail("lock", err)
		ok = true // the backend is down: compute without it
	}
	if !ok {
		deadline := time.Now().Add(l.LockTTL)
		t := time.NewTicker(l.Poll)
		defer t.Stop()
		for time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return filled{}, ctx.Err()
			case <-t.C:
			}
			if v, ok := l.get(ctx, kind, ks); ok {
				return filled{v, Hit}, nil
			}
		}
	}
	if unlock != nil {
		defer unlock()
		if v, ok := l.get(ctx, kind, ks); ok { // filled while we took the lock
			return filled{v, Hit}, nil
		}
	}
	start := time.Now()
	v, err := compute(ctx)
	if err != nil {
		return filled{}, err
	}
	l.m.observeCompute(kind, time.Since(start))
	b, err := Encode(v)
	if err != nil {
		return filled{}, err
	}
	if err := l.c.Set(ctx, ks, b, ttl); err != nil {
		l.fail("set", err)
	} else {
		l.m.bytes(kind, len(b))
	}
	v, err = Decode(b)
	return filled{v, Miss}, err
}

// get reads and decodes key; a corrupt value is deleted and counted.
func (l *Loader) get(ctx context.Context, kind, ks string) (Value, bool) {
	b, err := l.c.Get(ctx, ks)
	switch {
	case errors.Is(err, ErrMiss):
		l.m.result(kind, "miss")
		return Value{}, false
	case err != nil:
		l.fail("get", err)
		l.m.result(kind, "error")
		return Value{}, false
	}
	v, err := Decode(b)
	if err != nil {
		l.m.result(kind, "corrupt")
		if err := l.c.Delete(ctx, ks); err != nil {
			l.fail("delete", err)
		}
		return Value{}, false
	}
	l.ok()
	l.m.result(kind, "hit")
	return v, true
}

func (l *Loader) fail(op string, err error) {
	l.m.backendError(op)
	l.mu.Lock()
	l.lastErr, l.errAt = err, time.Now()
	l.mu.Unlock()
}

// backingOff says whether a recent backend error keeps the backend unused.
func (l *Loader) backingOff() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr != nil && time.Since(l.errAt) < l.Backoff
}

// Err returns the backend's last error, nil once it answers again (a get
// that succeeds, or Health).
func (l *Loader) Err() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr
}

func (l *Loader) ok() {
	l.mu.Lock()
	l.lastErr = nil
	l.mu.Unlock()
}

// Health pings the backend: nil when it answers. It also updates the
// backend-up metric.
func (l *Loader) Health(ctx context.Context) error {
	if l == nil || l.c == nil {
		return nil
	}
	err := l.c.Ping(ctx)
	l.m.up(err == nil)
	if err != nil {
		l.fail("ping", err)
	} else {
		l.ok()
	}
	return err
}

// Metrics are the cache's Prometheus metrics.
type Metrics struct {
	results *prometheus.CounterVec
	errors  *prometheus.CounterVec
	compute *prometheus.HistogramVec
	size    *prometheus.HistogramVec
	upG     prometheus.Gauge
}

// NewMetrics registers the cache metrics with reg.
func NewMetrics(reg prometheus.Registerer, backend string) *Metrics {
	m := &Metrics{
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kernelrank_cache_lookups_total", Help: "Cache lookups by kind of value and result (hit, miss, corrupt, error; skipped: not asked while the backend backs off after an error).",
		}, []string{"kind", "result"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kernelrank_cache_backend_errors_total", Help: "Cache backend failures by operation.",
		}, []string{"op"}),
		compute: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kernelrank_cache_compute_seconds", Help: "Time to compute a missed value, by kind.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
		}, []string{"kind"}),
		size: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kernelrank_cache_value_bytes", Help: "Size of the values stored, by kind.",
			Buckets: prometheus.ExponentialBuckets(64, 4, 12),
		}, []string{"kind"}),
		upG: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kernelrank_cache_backend_up", Help: "1 when the cache backend answered its last ping.",
			ConstLabels: prometheus.Labels{"backend": backend},
		}),
	}
	m.upG.Set(1)
	reg.MustRegister(m.results, m.errors, m.compute, m.size, m.upG)
	return m
}

func (m *Metrics) result(kind, r string) {
	if m != nil {
		m.results.WithLabelValues(kind, r).Inc()
	}
}

func (m *Metrics) backendError(op string) {
	if m != nil {
		m.errors.WithLabelValues(op).Inc()
		m.upG.Set(0)
	}
}

func (m *Metrics) observeCompute(kind string, d time.Duration) {
	if m != nil {
		m.compute.WithLabelValues(kind).Observe(d.Seconds())
	}
}

func (m *Metrics) bytes(kind string, n int) {
	if m != nil {
		m.size.WithLabelValues(kind).Observe(float64(n))
	}
}

func (m *Metrics) up(ok bool) {
	if m != nil {
		m.upG.Set(map[bool]float64{true: 1, false: 0}[ok])
	}
}
