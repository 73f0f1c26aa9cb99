package feedback

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/internal/redistest"
)

// batch is a request of n events as the search page sends it.
func batch(n int) []Event {
	out := make([]Event, n)
	for i := range out {
		out[i] = searchEvent(i)
		out[i].Session = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"
	}
	return out
}

// benchAppend appends batches of 20 events (a page of results) to l,
// reporting CPU time an event (this process's: Redis' own is not in it).
func benchAppend(b *testing.B, l Log) {
	events := batch(20)
	ctx := context.Background()
	start := cputime.Process()
	for b.Loop() {
		if err := l.Append(ctx, events); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cputime.Process()-start).Nanoseconds())/float64(b.N*len(events)), "cpu-ns/event")
}

func BenchmarkAppendFile(b *testing.B) {
	l, err := OpenFileLog(b.TempDir(), Retention{MaxEvents: 100000, MaxAge: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	benchAppend(b, l)
}

func BenchmarkAppendRedis(b *testing.B) {
	r, err := cache.OpenRedis(context.Background(), redistest.Start(b).URL, "")
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	l, err := NewRedisLog(r.Client(), "", Retention{MaxEvents: 100000, MaxAge: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	benchAppend(b, l)
}

// BenchmarkDecode decodes a request of 100 events.
func BenchmarkDecode(b *testing.B) {
	events := batch(100)
	for i := range events {
		events[i].ServerTime = time.Time{}
	}
	body, err := json.Marshal(map[string]any{"events": events})
	if err != nil {
		b.Fatal(err)
	}
	body = bytes.ReplaceAll(body, []byte(`,"server_time":"0001-01-01T00:00:00Z"`), nil)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Decode(bytes.NewReader(body), t0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJudgments fits the click model to 10,000 simulated sessions
// (100,000 impressions).
func BenchmarkJudgments(b *testing.B) {
	sim, err := Simulate(SimOptions{Rankers: []SimRanker{{"a", 0.1}, {"b", 0.4}, {"c", 5}}, Queries: 20, Items: 30, K: 10,
		Sessions: 10000, Relevant: 0.3, High: 0.8, Low: 0.1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Judgments(Collect(sim.Events).Lists(Search), JudgeOptions{})
	}
}
