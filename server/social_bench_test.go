package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/kernelrank/kernelrank/internal/socialtest"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
	"github.com/kernelrank/kernelrank/social/live"
	"github.com/redis/go-redis/v9"
)

// storeSource serves a social store's data to a recommend.Service.
type storeSource struct{ s *live.Store }

func (s storeSource) Load(context.Context, string) (*social.Dataset, error) {
	return s.s.Dataset(), nil
}

// BenchmarkSocialWritesBlogCatalog writes group memberships through the
// HTTP API of a server whose social store holds BlogCatalog (10,312 users,
// 333,983 friendships), without Redis (file) and with it (redis), one
// operation a request or 100 (batch), from 1 or 4 clients at once. It
// reports changes a second, the latency of a write (p50, p99) and the CPU
// time of the process per request. Run with -benchtime 200x.
func BenchmarkSocialWritesBlogCatalog(b *testing.B) {
	ds := socialtest.Load(b, "blogcatalog", social.ImportOptions{})
	for _, backend := range []string{"file", "redis"} {
		b.Run(backend, func(b *testing.B) {
			store := benchStore(b, backend)
			if _, err := store.Import(b.Context(), ds); err != nil {
				b.Fatal(err)
			}
			models, err := cache.NewDirStore(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			svc, err := recommend.NewService(b.Context(), storeSource{store}, models, recommend.ServiceOptions{})
			if err != nil {
				b.Fatal(err)
			}
			store.SetOnChange(svc.Apply)
			ix, err := index.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			srv := httptest.NewServer(New(ix, Config{AdminToken: token, Social: svc, SocialStore: store}, slog.New(slog.DiscardHandler)).Handler())
			defer srv.Close()
			for _, batch := range []int{1, 100} {
				for _, clients := range []int{1, 4} {
					b.Run(fmt.Sprintf("ops=%d/clients=%d", batch, clients), func(b *testing.B) {
						benchWrites(b, srv.URL, ds, batch, clients)
					})
				}
			}
		})
	}
}

// benchStore is an empty social store on backend.
func benchStore(b *testing.B, backend string) *live.Store {
	if backend == "file" {
		s, err := live.OpenDir(b.TempDir(), live.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.Close)
		return s
	}
	o, err := cache.ParseRedisURL(redistest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	rc := redis.NewUniversalClient(o)
	s, err := live.OpenRedis(b.Context(), rc, redistest.Prefix(b), live.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		s.Drop(context.Background())
		s.Close()
		rc.Close()
	})
	return s
}

var benchRun int

func benchWrites(b *testing.B, url string, ds *social.Dataset, batch, clients int) {
	benchRun++
	var mu sync.Mutex
	var took []time.Duration
	next := 0
	cpu, start := cputime.Process(), time.Now()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= b.N {
					return
				}
				method, path, body := "PUT", fmt.Sprintf("/v1/users/%s/groups/bench-%d-%d", ds.Users[i%ds.N()].ID, benchRun, i), []byte(nil)
				if batch > 1 {
					var buf bytes.Buffer
					buf.WriteString(`{"ops":[`)
					for k := range batch {
						if k > 0 {
							buf.WriteByte(',')
						}
						fmt.Fprintf(&buf, `{"op":"put_member","user":%q,"group":"bench-%d-%d"}`, ds.Users[(i*batch+k)%ds.N()].ID, benchRun, i)
					}
					buf.WriteString("]}")
					method, path, body = "POST", "/v1/social/batch", buf.Bytes()
				}
				req, _ := http.NewRequest(method, url+path, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				t0 := time.Now()
				resp, err := http.DefaultClient.Do(req)
				d := time.Since(t0)
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("%s %s: %d", method, path, resp.StatusCode)
					return
				}
				mu.Lock()
				took = append(took, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	wall, used := time.Since(start), cputime.Process()-cpu
	b.StopTimer()
	slices.Sort(took)
	if len(took) == 0 {
		return
	}
	q := func(p float64) float64 { return float64(took[int(p*float64(len(took)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(len(took)*batch)/wall.Seconds(), "changes/s")
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(float64(used.Microseconds())/1000/float64(len(took)), "cpu-ms/req")
}
