package search

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/dataset"
	_ "github.com/kernelrank/kernelrank/learners/kit/all"
)

// corelIndex builds a real index of Corel5k in a temporary directory: 5,000
// images "img00000"... tagged with their keywords, with their 499 visual
// features. It skips without ../shared/data.
func corelIndex(tb testing.TB) *index.Index {
	tb.Helper()
	dir, ok := dataset.DataDir()
	if !ok {
		tb.Skip("../shared/data not found (set KERNELRANK_SHARED_DATA): skipping the Corel5k search tests")
	}
	ml, err := dataset.LoadCorel5k(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return indexCorel(tb, ml, 1)
}

// indexCorel indexes Corel5k's images, each copies times, in a temporary
// directory: copy c of image i is "img%05d" (c = 0) or "img%05d-c", with
// its original's keywords and features.
func indexCorel(tb testing.TB, ml *dataset.MultiLabel, copies int) *index.Index {
	tb.Helper()
	docs := make([]index.Doc, 0, copies*len(ml.X))
	for c := 0; c < copies; c++ {
		for i := range ml.X {
			d := index.Doc{ID: fmt.Sprintf("img%05d", i), Features: make([]float32, len(ml.X[i]))}
			if c > 0 {
				d.ID += fmt.Sprintf("-%d", c)
			}
			for _, l := range ml.Y[i] {
				d.Tags = append(d.Tags, ml.LabelNames[l])
			}
			for j, x := range ml.X[i] {
				d.Features[j] = float32(x)
			}
			docs = append(docs, d)
		}
	}
	return indexDocs(tb, docs)
}

// indexDocs indexes docs in a temporary directory, closed after the test.
func indexDocs(tb testing.TB, docs []index.Doc) *index.Index {
	tb.Helper()
	ix, err := index.Open(filepath.Join(tb.TempDir(), "index"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	if err := ix.Add(docs); err != nil {
		tb.Fatal(err)
	}
	return ix
}
