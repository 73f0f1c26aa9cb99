package hsicnpk

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/learners"
)

// BenchmarkFit200 times one fit over a re-ranking window of n = 200
// candidates: the Corel5k images tagged "sky" (or, without the data, a
// synthetic window with the same structure), full rank and low rank, at the
// server's setting (the defaults: budget 1, where 17% of the kNN pairs bind
// on this window) and at a slack one (budget 0.1: 2 of 940 bind), low rank
// over the Laplacian and the tag basis, each with
// the solver as it is (new) and as it was before the speed-ups (legacy:
// gonum's Dsytrd and Dormqr, the unit first step), so that one run gives
// both. cpu-ms/op is the process CPU time a fit took, which other work on a
// shared machine inflates far less than the wall time.
func BenchmarkFit200(b *testing.B) {
	x, kt, src := window(b, 200)
	in := &learners.Input{Features: x, Target: kt}
	for _, budget := range []float64{1, 0.1} {
		for _, rank := range []int{0, 10, 30} {
			for _, basis := range []string{"laplacian", "tags"} {
				for _, legacy := range []bool{false, true} {
					if rank == 0 && basis == "tags" || legacy && basis == "tags" {
						continue // full rank has no basis; the legacy solver predates the tag basis
					}
					solver := "new"
					if legacy {
						solver = "legacy"
					}
					name := fmt.Sprintf("%s/budget=%g/rank=%d/%s", src, budget, rank, solver)
					if rank > 0 {
						name = fmt.Sprintf("%s/budget=%g/rank=%d-%s/%s", src, budget, rank, basis, solver)
					}
					b.Run(name, func(b *testing.B) {
						l := &Learner{cfg: config{k: 5, c: 10, budget: budget, rank: rank, basis: basis, tol: 1e-4, maxIter: 500, legacy: legacy}}
						b.ReportAllocs()
						var it int
						cpu := cpuTime()
						for i := 0; i < b.N; i++ {
							out, err := l.Fit(context.Background(), in)
							if err != nil {
								b.Fatal(err)
							}
							it = out.Stats.Iterations
						}
						b.ReportMetric(float64(it), "iters")
						b.ReportMetric(float64(cpuTime()-cpu)/1e6/float64(b.N), "cpu-ms/op")
					})
				}
			}
		}
	}
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // cannot fail for RUSAGE_SELF
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
