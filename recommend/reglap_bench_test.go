package recommend

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/internal/socialtest"
	"github.com/kernelrank/kernelrank/social"
)

// BenchmarkRegLaplacianPush is the pushed regularised-Laplacian group
// signal on YouTube (77,381 users, 30,087 groups; users times groups far
// above RegLaplacianMaxEntries) at several eps: the CPU time of one
// user's signal over every group (push and spread; mean and largest),
// and its top 10
// groups against those of the exact sums (a CG row, tolerance 1e-8) for
// 300 users in turn: top10-overlap is the mean share of the exact top 10
// in the pushed one, top10-same the share of users whose top 10 is the
// same in the same order. Run it with -benchtime 1x -cpu 1.
func BenchmarkRegLaplacianPush(b *testing.B) {
	ds := youtube(b)
	kernels, err := social.BuildKernels(context.Background(), ds, ds.FullView(), social.KernelOptions{Kernels: []string{social.KernelRegLaplacian}})
	if err != nil {
		b.Fatal(err)
	}
	m := &Model{ds: ds, relations: newRelations(ds, ds.FullView()), regLap: kernels[0].K}
	n, ng := ds.N(), len(m.members)
	const users, k = 300, 10
	top := func(u int, s []float64) []int {
		var gs []int
		for g := range ng {
			if !contains(m.groups[u], g) {
				gs = append(gs, g)
			}
		}
		slices.SortFunc(gs, func(a, c int) int { return cmp.Or(cmp.Compare(s[c], s[a]), cmp.Compare(a, c)) })
		return gs[:k]
	}
	exact := make([][]int, users)
	row, sum := make([]float64, n), make([]float64, ng)
	for i := range users {
		u := (i * 7919) % n
		m.regLap.Row(u, row)
		clear(sum)
		for v, x := range row {
			for _, g := range m.groups[v] {
				sum[g] += x
			}
		}
		exact[i] = top(u, sum)
	}
	for _, c := range []struct {
		name string
		eps  float64
	}{{"1e-4", 1e-4}, {"1e-5", 1e-5}, {"3e-6", 3e-6}, {"1e-6", 1e-6}, {"3e-7", 3e-7}} {
		b.Run("eps="+c.name, func(b *testing.B) {
			var overlap, same float64
			var cpu, worst float64
			for b.Loop() {
				overlap, same, cpu, worst = 0, 0, 0, 0
				for i := range users {
					u := (i * 7919) % n
					start := cputime.Process()
					clear(sum)
					m.regLapPushed([]int{u}, []float64{1}, c.eps)(func(g int, x float64) { sum[g] += x })
					took := (cputime.Process() - start).Seconds()
					cpu, worst = cpu+took, max(worst, took)
					got := top(u, sum)
					for _, g := range got {
						if slices.Contains(exact[i], g) {
							overlap++
						}
					}
					if slices.Equal(got, exact[i]) {
						same++
					}
				}
			}
			b.ReportMetric(overlap/(k*users), "top10-overlap")
			b.ReportMetric(same/users, "top10-same")
			b.ReportMetric(cpu/users*1e3, "cpu-ms/user")
			b.ReportMetric(worst*1e3, "max-cpu-ms")
		})
	}
}

// BenchmarkGroupRankingYouTube is the CPU of one group ranking on demand
// on YouTube, as a server ranks a user without a precomputed list: the
// candidate groups scored by the group scorer the default training chose
// ("served=NAME"), by the learned combination with its fitted weights
// (every signal, the pushed regularised Laplacian's among them) and by
// mklr, top 10, users in turn, nothing cached. Run it with -benchtime
// 200x -cpu 1; it trains YouTube first (minutes).
func BenchmarkGroupRankingYouTube(b *testing.B) {
	ds := youtube(b)
	trained, err := Train(context.Background(), ds, ds.FullView(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	trained = trained.WithCandidates()
	if !trained.regLapGroups.push || trained.cached != nil || trained.top != nil {
		b.Fatal("YouTube should push the regularised Laplacian and rank on demand, uncached")
	}
	n := ds.N()
	for _, name := range []string{"served=" + trained.groupScorer, GroupLearned, GroupMKLR} {
		b.Run(name, func(b *testing.B) {
			m := *trained
			if name == GroupLearned {
				m.groupScorer, m.groupWeights = GroupLearned, trained.stats.GroupSelection.learnedWeights()
			} else if name == GroupMKLR {
				m.groupScorer = GroupMKLR
			}
			cpu := cputime.Process()
			for i := 0; b.Loop(); i++ {
				if top, _ := m.topGroups((i*7919)%n, 10); len(top) != 10 {
					b.Fatalf("%d groups", len(top))
				}
			}
			b.ReportMetric((cputime.Process()-cpu).Seconds()/float64(b.N)*1e3, "cpu-ms/op")
		})
	}
}

// youtube loads ../shared/data/social/youtube (skipping when absent).
func youtube(b *testing.B) *social.Dataset {
	b.Helper()
	return socialtest.Load(b, "youtube", social.ImportOptions{})
}
