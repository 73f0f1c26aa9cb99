package recommend

import (
	"testing"

	"github.com/kernelrank/kernelrank/internal/cputime"
)

// BenchmarkFriendAnswer is a friend answer on demand, the top 10 with
// their explanations, on a generated network of YouTube's shape as
// served above PrecomputeMaxUsers (ranked over the candidates): uncached
// (ranked now) and cached (the ranking kept), each with the typical
// candidate from the model's row sums ("sums", as served) and from u's
// rows ("rows": as before the sums, and as a folded-in user still pays).
// 1,000 users in turn; cpu-ms/op is the process's CPU time a request.
// KERNELRANK_BENCH_USERS sets the network's size (default 100,000); run
// with -cpu 1.
func BenchmarkFriendAnswer(b *testing.B) {
	n := envInt(b, "KERNELRANK_BENCH_USERS", 100_000)
	ds := generatedData(b, n)
	m, err := Train(b.Context(), ds, ds.FullView(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	m = m.WithCandidates()
	const k, users = 10, 1000
	cached, err := m.WithCache(1<<30, k)
	if err != nil {
		b.Fatal(err)
	}
	user := func(i int) int { return (i * 7919) % n }
	for i := range users {
		cached.topFriends(user(i), k) // the rankings kept
	}
	m.kernelSums() // once a model, shared by its copies
	for _, c := range []struct {
		name string
		m    *Model
	}{{"uncached", m}, {"cached", cached}} {
		for _, rows := range []bool{false, true} {
			name := c.name + "/sums"
			if rows {
				name = c.name + "/rows"
			}
			b.Run(name, func(b *testing.B) {
				cpu := cputime.Process()
				for i := 0; b.Loop(); i++ {
					u := user(i % users)
					src := c.m.pairsOf(u)
					src.own = !rows
					a := c.m.friendsAnswer("", false, src, func() ([]int, []float64) { return c.m.topFriends(u, k) })
					if len(a.Items) == 0 {
						b.Fatalf("user %d: no friends recommended", u)
					}
				}
				b.ReportMetric(float64((cputime.Process()-cpu).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
