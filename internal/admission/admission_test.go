package admission

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestGate(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	g := NewGate(2, 20*time.Millisecond, m)
	ctx := context.Background()
	r1, err1 := g.Acquire(ctx)
	r2, err2 := g.Acquire(ctx)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, err := g.Acquire(ctx); !errors.Is(err, ErrBusy) {
		t.Fatalf("third acquire with two slots: %v, want ErrBusy", err)
	}
	// A slot freed while a patient caller waits (longer than the gate's
	// wait) is taken.
	go func() { time.Sleep(50 * time.Millisecond); r1() }()
	r3, err := g.Acquire(Patient(ctx))
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.Acquire(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	r2()
	r3()
	want := `
		# HELP kernelrank_admission_total Admission decisions by gate (expensive: the slots of expensive re-ranks; rate: the per-client rate limit) and result (admitted, waited, rejected).
		# TYPE kernelrank_admission_total counter
		kernelrank_admission_total{gate="expensive",result="admitted"} 2
		kernelrank_admission_total{gate="expensive",result="rejected"} 1
		kernelrank_admission_total{gate="expensive",result="waited"} 1
	`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	var none *Gate
	if rel, err := none.Acquire(ctx); err != nil || rel == nil {
		t.Error("a nil gate must admit")
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimiter(0.5, 3, nil) // a token every 2 s
	for i := 0; i < 3; i++ {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("request %d within the burst refused", i)
		}
	}
	ok, after := l.Allow("a")
	if ok || after != 2*time.Second {
		t.Fatalf("over the burst: ok %v, retry after %v, want refused for 2 s", ok, after)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("another client is limited by a's requests")
	}
	// A client whose bucket has refilled is dropped at the next sweep.
	fast := NewLimiter(1000, 1, nil)
	fast.Allow("x")
	time.Sleep(5 * time.Millisecond)
	fast.swept = time.Time{}
	fast.Allow("y")
	if _, kept := fast.clients["x"]; kept || len(fast.clients) != 1 {
		t.Fatalf("buckets %v, want only y's", fast.clients)
	}
	if NewLimiter(0, 1, nil) != nil {
		t.Fatal("rate 0 must disable the limiter")
	}
	var none *Limiter
	if ok, _ := none.Allow("x"); !ok {
		t.Fatal("a nil limiter must allow")
	}
}
