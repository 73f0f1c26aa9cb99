package live

import (
	"fmt"
	"testing"

	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/internal/socialtest"
	"github.com/kernelrank/kernelrank/social"
)

// BenchmarkWriteBlogCatalog: one write (a friendship added, then removed)
// to a store holding BlogCatalog, without Redis: apply, fsync, and the new
// data set (built and hashed), which is most of it.
func BenchmarkWriteBlogCatalog(b *testing.B) {
	ds := socialtest.Load(b, "blogcatalog", social.ImportOptions{})
	s, err := OpenDir(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Import(b.Context(), ds); err != nil {
		b.Fatal(err)
	}
	u, v := ds.Users[0].ID, ds.Users[len(ds.Users)-1].ID
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			i, cpu := 0, cputime.Process()
			for b.Loop() {
				ops := make([]Op, batch)
				for k := range ops {
					ops[k] = Op{Op: PutMember, User: u, Group: fmt.Sprintf("bench-%d-%d", i, k)}
				}
				if i%2 == 1 {
					ops = []Op{{Op: PutFriend, User: u, Friend: v}}
					if _, ok := s.st.friends[u][v]; ok {
						ops[0].Op = DeleteFriend
					}
				}
				if _, err := s.Write(b.Context(), ops); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((cputime.Process()-cpu).Microseconds())/1000/float64(i), "cpu-ms/op")
		})
	}
}
