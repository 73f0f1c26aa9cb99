package search

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/rerank"
)

// benchQuery matches 988 Corel5k images: its window is the default 200.
const benchQuery = "sky"

func benchEngine(b *testing.B, cached bool) (*Engine, cache.Cache) {
	ix := corelIndex(b)
	if !cached {
		return New(ix, nil, Options{}), nil
	}
	mem, err := cache.NewMemory(0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mem.Close() })
	return New(ix, cache.NewLoader(mem, nil), Options{}), mem
}

// mustSearch runs req as the server does, to the JSON of the response.
func mustSearch(b *testing.B, e *Engine, req Request, want cache.Status) {
	r := mustSearchTyped(b, e, req, want)
	if _, err := json.Marshal(r); err != nil {
		b.Fatal(err)
	}
}

// mustSearchTyped runs req in process, to its typed Result.
func mustSearchTyped(b *testing.B, e *Engine, req Request, want cache.Status) Result {
	r, err := e.Search(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	if r.Trace.Cache != want {
		b.Fatalf("ranking cache %s, want %s", r.Trace.Cache, want)
	}
	return r
}

// BenchmarkSearch200 is a whole search (to the response's JSON, as the
// server runs it) of a 200-image Corel5k window with the default re-ranker
// (npk-fused) and full-rank npk: from the ranking cache (ranking-hit, and
// ranking-hit-typed: the in-process typed search, without the JSON), from
// the kernel cache only (kernel-hit: the ranking is
// deleted before each search; poly's kernel is never cached, so it is the
// uncached search plus a delete), and with no cache (uncached).
func BenchmarkSearch200(b *testing.B) {
	for _, strategy := range []string{rerank.DefaultStrategy, "npk"} {
		req := DefaultRequest(benchQuery)
		req.Rerank.Strategy = strategy
		for _, c := range []struct {
			name   string
			search func(*testing.B, *Engine, Request, cache.Status)
		}{
			{"/ranking-hit", mustSearch},
			{"/ranking-hit-typed", func(b *testing.B, e *Engine, req Request, want cache.Status) { mustSearchTyped(b, e, req, want) }},
		} {
			b.Run(strategy+c.name, func(b *testing.B) {
				e, _ := benchEngine(b, true)
				mustSearch(b, e, req, cache.Miss)
				b.ReportAllocs()
				for b.Loop() {
					c.search(b, e, req, cache.Hit)
				}
			})
		}
		b.Run(strategy+"/kernel-hit", func(b *testing.B) {
			e, c := benchEngine(b, true)
			mustSearch(b, e, req, cache.Miss)
			p, err := e.plan(req)
			if err != nil {
				b.Fatal(err)
			}
			key := p.rankingKey().String()
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Delete(context.Background(), key); err != nil {
					b.Fatal(err)
				}
				mustSearch(b, e, req, cache.Miss)
			}
		})
		b.Run(strategy+"/uncached", func(b *testing.B) {
			e, _ := benchEngine(b, false)
			b.ReportAllocs()
			for b.Loop() {
				mustSearch(b, e, req, cache.Off)
			}
		})
	}
}

// BenchmarkKernel200 weighs caching a fixed kernel: computing poly's kernel
// of a 200-image window against fetching a 200 x 200 kernel from the
// in-process cache (Get, checksum, decode, float64 matrix). The fetched
// value's size is reported as B/value.
func BenchmarkKernel200(b *testing.B) {
	e, _ := benchEngine(b, false)
	ctx := context.Background()
	w, err := e.Candidates(ctx, benchQuery, DefaultWindow, 0)
	if err != nil {
		b.Fatal(err)
	}
	p, err := rerank.NewPlan(rerank.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("poly-compute", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := p.Kernel(ctx, p.Split(w.Candidates)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fetch", func(b *testing.B) {
		k, _, err := p.Kernel(ctx, p.Split(w.Candidates))
		if err != nil {
			b.Fatal(err)
		}
		mem, err := cache.NewMemory(0)
		if err != nil {
			b.Fatal(err)
		}
		defer mem.Close()
		val, err := cache.Encode(kernelValue(k, &learners.Stats{}))
		if err != nil {
			b.Fatal(err)
		}
		if err := mem.Set(ctx, "k", val, 0); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			raw, err := mem.Get(ctx, "k")
			if err != nil {
				b.Fatal(err)
			}
			v, err := cache.Decode(raw)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := fromKernelValue(v, len(w.Candidates)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(val)), "B/value")
	})
}
