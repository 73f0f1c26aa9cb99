package simplenpkl_test

import (
	"path/filepath"
	"testing"

	"github.com/kernelrank/kernelrank/internal/dataset"
	"gonum.org/v1/gonum/mat"
)

// dataDir returns the shared data directory, skipping when it is absent.
func dataDir(tb testing.TB) string {
	tb.Helper()
	dir, ok := dataset.DataDir()
	if !ok {
		tb.Skip("shared data not found (../shared/data or $KERNELRANK_SHARED_DATA): skipping the real-data test")
	}
	return dir
}

// labelled turns rows and numeric labels into a matrix and class indices
// (in order of first appearance), with the number of classes.
func labelled(rows [][]float64, y []float64) (*mat.Dense, []int, int) {
	x := mat.NewDense(len(rows), len(rows[0]), nil)
	for i, r := range rows {
		x.SetRow(i, r)
	}
	class := map[float64]int{}
	labels := make([]int, len(y))
	for i, v := range y {
		if _, ok := class[v]; !ok {
			class[v] = len(class)
		}
		labels[i] = class[v]
	}
	return x, labels, len(class)
}

// loadUCI returns the raw features and classes of a PMLB table.
func loadUCI(tb testing.TB, name string) (*mat.Dense, []int, int) {
	tb.Helper()
	rows, y, _, err := dataset.LoadPMLB(filepath.Join(dataDir(tb), "uci", "pmlb", name+".tsv.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	return labelled(rows, y)
}

// loadA1a returns the LIBSVM a1a set (1,605 x 123, dense CSV copy).
func loadA1a(tb testing.TB) (*mat.Dense, []int, int) {
	tb.Helper()
	rows, y, err := dataset.LoadDenseCSV(filepath.Join(dataDir(tb), "uci", "libsvm", "a1a.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	return labelled(rows, y)
}
