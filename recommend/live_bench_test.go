package recommend_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

// BenchmarkApplyFoldIn is a write plus the next recommendation for the
// user written, as the social store drives the service: Apply with the
// whole new data set (one friendship of a user removed or put back) and
// that user's top 10 friends, folded into the model served. Besides
// ns/op it reports the wall-time p50 and p99 and the process CPU time an
// operation; run it with -cpu 1 -benchtime 200x.
func BenchmarkApplyFoldIn(b *testing.B) {
	full := realData(b, "blogcatalog")
	life, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, err := cache.NewDirStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s, err := recommend.NewService(life, dataSource{full}, store, recommend.ServiceOptions{})
	if err != nil {
		b.Fatal(err)
	}
	m, err := s.Model(context.Background(), "")
	if err != nil {
		b.Fatal(err)
	}
	// 16 users, each with one friendship removed: the data set before
	// and after a write.
	type write struct {
		ds      *social.Dataset
		changed []string
	}
	var writes []write
	for w := range 16 {
		drop, back := full.Friends[w*len(full.Friends)/16], full.Friends[(w+15)%16*len(full.Friends)/16]
		ds := full.Filter(func(int) bool { return true }, func(i, j int) bool { return [2]int{i, j} != drop })
		// The friendship the write before removed is back.
		writes = append(writes, write{ds, []string{full.Users[drop[0]].ID, full.Users[drop[1]].ID, full.Users[back[0]].ID, full.Users[back[1]].ID}})
	}
	took := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	cpu := cputime.Process()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		w := writes[i%len(writes)]
		start := time.Now()
		if err := s.Apply(context.Background(), w.ds, w.changed); err != nil {
			b.Fatal(err)
		}
		r, folded, err := s.FriendsFor("", m, w.changed[0], 10)
		if err != nil || !folded || len(r.Items) != 10 {
			b.Fatalf("folded %v, %v, %v", folded, r, err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(len(took)), "cpu-ns/op")
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2]), "p50-ns")
	b.ReportMetric(float64(took[len(took)*99/100]), "p99-ns")
}
