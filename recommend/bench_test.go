package recommend_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

// realModel trains the default recommender on a real data set of
// ../shared/data/social (skipping when it is absent).
func realModel(b *testing.B, name string) *recommend.Model {
	b.Helper()
	root, ok := dataset.DataDir()
	if !ok {
		b.Skip("../shared/data not found (set KERNELRANK_DATA): the real social data sets are needed")
	}
	ds, _, err := social.LoadDir(filepath.Join(root, "social", name), social.ImportOptions{})
	if err != nil {
		b.Fatal(err)
	}
	m, err := recommend.Train(context.Background(), ds, ds.FullView(), recommend.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return m
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
