package recommend_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/cache"

	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/internal/socialtest"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

// realData loads a real data set of ../shared/data/social (skipping when
// it is absent).
func realData(b *testing.B, name string) *social.Dataset {
	b.Helper()
	return socialtest.Load(b, name, social.ImportOptions{})
}

// realModel trains the default recommender on a real data set.
func realModel(b *testing.B, name string) *recommend.Model {
	b.Helper()
	ds := realData(b, name)
	m, err := recommend.Train(context.Background(), ds, ds.FullView(), recommend.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkTrain is the default training of a server (kernels, weights,
// strength model and the choice of the scorers, in one pass) on the real
// data sets, in wall and CPU time (cpu-s/op: the process's, which other
// work on a shared machine inflates far less); run it with -benchtime 1x.
func BenchmarkTrain(b *testing.B) {
	for _, name := range []string{"ego-facebook", "blogcatalog", "youtube"} {
		b.Run(name, func(b *testing.B) {
			ds := realData(b, name)
			cpu := cputime.Process()
			for b.Loop() {
				if _, err := recommend.Train(context.Background(), ds, ds.FullView(), recommend.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cputime.Process()-cpu).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkServe is the serving cost of one request: the top 10 friends
// or groups of one user with their explanations, users in turn.
func BenchmarkServe(b *testing.B) {
	for _, name := range []string{"ego-facebook", "blogcatalog"} {
		b.Run(name, func(b *testing.B) {
			m := realModel(b, name)
			n := m.Dataset().N()
			b.Run("friends", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := m.RecommendFriends((i*7919)%n, 10); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("groups", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := m.RecommendGroups((i*7919)%n, 10); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkStart is the start-up of a server's recommender: "train" on an
// empty store (train, precompute the top-k, write, publish) against "load"
// from a store holding the published model (rebuild the kernels and the
// strength model's features, read the top-k). It logs the size of each
// stored part.
func BenchmarkStart(b *testing.B) {
	root, ok := dataset.DataDir()
	if !ok {
		b.Skip("../shared/data not found (set KERNELRANK_SHARED_DATA): the real social data sets are needed")
	}
	for _, name := range []string{"ego-facebook", "blogcatalog"} {
		b.Run(name, func(b *testing.B) {
			src := recommend.DirSource{Dir: filepath.Join(root, "social", name)}
			// start starts a service and waits for its model; the service
			// stops (its watcher) when the benchmark ends.
			start := func(b *testing.B, store cache.Store) *recommend.Service {
				life, stop := context.WithCancel(context.Background())
				b.Cleanup(stop)
				s, err := recommend.NewService(life, src, store, recommend.ServiceOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Start(); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Model(context.Background(), ""); err != nil {
					b.Fatal(err)
				}
				return s
			}
			newStore := func(b *testing.B) cache.Store {
				st, err := cache.NewDirStore(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				return st
			}
			published := newStore(b)
			b.Run("train", func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					store := newStore(b)
					b.StartTimer()
					if c := start(b, store).Counts(); c.Trained != 1 || c.Published != 1 {
						b.Fatalf("counts %+v", c)
					}
				}
			})
			s := start(b, published)
			m, err := s.Model(context.Background(), "")
			if err != nil {
				b.Fatal(err)
			}
			parts, err := m.Encode()
			if err != nil {
				b.Fatal(err)
			}
			total := 0
			for _, p := range slices.Sorted(maps.Keys(parts)) {
				b.Logf("%s: part %s %d bytes", name, p, len(parts[p]))
				total += len(parts[p])
			}
			b.Logf("%s: %d parts, %d bytes", name, len(parts), total)
			b.Run("load", func(b *testing.B) {
				for b.Loop() {
					if c := start(b, published).Counts(); c.Trained != 0 || c.Loaded != 1 {
						b.Fatalf("counts %+v", c)
					}
				}
				b.ReportMetric(float64(total), "stored-bytes")
			})
		})
	}
}
