// Package admission keeps expensive or abusive requests from hurting the
// others: a Gate bounds how many expensive computations run at once (the
// rest wait briefly, then are refused), and a Limiter rate-limits each
// client with a token bucket. Both count what they admit and refuse.
// ParseNetworks reads the trusted proxies whose X-Forwarded-For names the
// client a Limiter sees.
package admission

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// ErrBusy is returned by Gate.Acquire when no slot freed up in time.
var ErrBusy = errors.New("admission: too many expensive requests running")

// Metrics counts the decisions: kernelrank_admission_total{gate, result}.
type Metrics struct{ decisions *prometheus.CounterVec }

// NewMetrics registers the admission metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kernelrank_admission_total",
		Help: "Admission decisions by gate (expensive: the slots of expensive re-ranks; rate: the per-client rate limit) and result (admitted, waited, rejected).",
	}, []string{"gate", "result"})}
	reg.MustRegister(m.decisions)
	return m
}

func (m *Metrics) count(gate, result string) {
	if m != nil {
		m.decisions.WithLabelValues(gate, result).Inc()
	}
}

// Gate bounds the expensive computations running at once. A nil *Gate
// admits everything.
type Gate struct {
	slots chan struct{}
	wait  time.Duration
	m     *Metrics
}

// NewGate admits up to n computations at once; one more waits up to wait
// for a slot. m may be nil.
func NewGate(n int, wait time.Duration, m *Metrics) *Gate {
	return &Gate{slots: make(chan struct{}, max(n, 1)), wait: wait, m: m}
}

// Acquire takes a slot, waiting up to the gate's wait (or ctx) for one, and
// returns its release. It fails with ErrBusy, or ctx's error.
func (g *Gate) Acquire(ctx context.Context) (release func(), err error) {
	if g == nil {
		return func() {}, nil
	}
	select {
	case g.slots <- struct{}{}:
		g.m.count("expensive", "admitted")
		return g.release, nil
	default:
	}
	wait := g.wait
	if ctx.Value(patientKey{}) != nil {
		wait = math.MaxInt64
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		g.m.count("expensive", "waited")
		return g.release, nil
	case <-t.C:
		g.m.count("expensive", "rejected")
		return nil, ErrBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *Gate) release() { <-g.slots }

type patientKey struct{}

// Patient returns ctx under which Gate.Acquire waits for a slot as long as
// ctx lives: background work (a job precomputing rankings) yields to
// requests rather than fail because they keep the slots busy.
func Patient(ctx context.Context) context.Context { return context.WithValue(ctx, patientKey{}, true) }

// Limiter is a token bucket per client: rate tokens a second, burst at most.
// A nil *Limiter allows everything.
type Limiter struct {
	rate  rate.Limit
	burst int
	m     *Metrics

	mu      sync.Mutex
	clients map[string]*rate.Limiter
	swept   time.Time
}

// NewLimiter returns a limiter of perSecond requests a second per client,
// with bursts of burst; nil when perSecond <= 0 (no limit). m may be nil.
func NewLimiter(perSecond float64, burst int, m *Metrics) *Limiter {
	if perSecond <= 0 {
		return nil
	}
	return &Limiter{rate: rate.Limit(perSecond), burst: max(burst, 1), m: m, clients: map[string]*rate.Limiter{}}
}

// sweepEvery is how often idle clients' buckets are dropped: a bucket that
// has refilled is the same as a new one, so the map holds only the clients
// of the last minute or so, however many addresses come by.
const sweepEvery = time.Minute

// Allow takes a token of client's bucket, or says how long until one is
// there.
func (l *Limiter) Allow(client string) (ok bool, retryAfter time.Duration) {
	if l == nil {
		return true, 0
	}
	now := time.Now()
	l.mu.Lock()
	if now.Sub(l.swept) > sweepEvery {
		for c, b := range l.clients {
			if b.TokensAt(now) >= float64(l.burst) {
				delete(l.clients, c)
			}
		}
		l.swept = now
	}
	b, found := l.clients[client]
	if !found {
		b = rate.NewLimiter(l.rate, l.burst)
		l.clients[client] = b
	}
	l.mu.Unlock()
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		l.m.count("rate", "rejected")
		return false, time.Duration(math.Ceil(d.Seconds())) * time.Second
	}
	l.m.count("rate", "admitted")
	return true, 0
}

// ParseNetworks parses a comma-separated list of CIDR prefixes or single
// addresses ("10.0.0.0/8,192.0.2.7"), as --trusted-proxies takes them.
func ParseNetworks(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for f := range strings.SplitSeq(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if addr, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.PrefixFrom(addr, addr.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR prefix such as 10.0.0.0/8", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
