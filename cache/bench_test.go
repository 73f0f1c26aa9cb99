package cache

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/internal/redistest"
)

// kernel200 is a learned kernel of a window of 200 candidates.
func kernel200() Value {
	v := Value{Kind: Float32, Shape: []int{200, 200}, F32: make([]float32, 200*200)}
	for i := range v.F32 {
		v.F32[i] = float32(math.Sin(float64(i)))
	}
	return v
}

func BenchmarkEncode(b *testing.B) {
	v := kernel200()
	var enc []byte
	for b.Loop() {
		var err error
		if enc, err = Encode(v); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(enc)))
	b.ReportMetric(float64(len(enc)), "encoded-bytes")
}

func BenchmarkDecode(b *testing.B) {
	enc, err := Encode(kernel200())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(enc)))
	b.ReportMetric(float64(len(enc)), "encoded-bytes")
}

// BenchmarkFetchHit: a cached kernel, read and decoded, on each backend.
func BenchmarkFetchHit(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			l := NewLoader(be.open(b), nil)
			ctx, v := context.Background(), kernel200()
			compute := func(context.Context) (Value, error) { return v, nil }
			if _, st, err := l.Fetch(ctx, testKey, time.Hour, compute); err != nil || st != Miss {
				b.Fatalf("first fetch: %v, %v", st, err)
			}
			for b.Loop() {
				if _, st, err := l.Fetch(ctx, testKey, time.Hour, compute); err != nil || st != Hit {
					b.Fatalf("fetch: %v, %v", st, err)
				}
			}
		})
	}
}

// BenchmarkFetchRedisDown: what a lookup costs when Redis has gone away
// (the computation itself is free here).
func BenchmarkFetchRedisDown(b *testing.B) {
	srv := redistest.Start(b)
	l := NewLoader(openRedis(b, srv.URL), nil)
	srv.Stop()
	ctx, v := context.Background(), Value{Kind: Int32, Shape: []int{1}, I32: []int32{1}}
	compute := func(context.Context) (Value, error) { return v, nil }
	for b.Loop() {
		if _, st, err := l.Fetch(ctx, testKey, time.Hour, compute); err != nil || st != Miss {
			b.Fatalf("fetch: %v, %v", st, err)
		}
	}
}
