// Package socialtest loads the real social data sets of ../shared/data
// for tests and benchmarks: a test skips with a message saying what is
// missing when the shared data are absent (a user running the tests
// without ../shared), and fails when a present data set does not load.
package socialtest

import (
	"path/filepath"
	"testing"

	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/social"
)

// Load returns the data set ../shared/data/social/NAME (ego-facebook,
// blogcatalog, youtube, ...) loaded with opts.
func Load(tb testing.TB, name string, opts social.ImportOptions) *social.Dataset {
	tb.Helper()
	root, ok := dataset.DataDir()
	if !ok {
		tb.Skipf("../shared/data not found (set %s): the real social data set %s is needed", dataset.EnvDataDir, name)
	}
	ds, _, err := social.LoadDir(filepath.Join(root, "social", name), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}
