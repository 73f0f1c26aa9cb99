package all

import (
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
)

// TestEveryLearnerRegistered pins what importing this package registers:
// the contract suite below runs once for each of them, so a learner that
// failed to register would otherwise go untested without a sign.
func TestEveryLearnerRegistered(t *testing.T) {
	want := []string{"alignf", "cmvu", "coreg-spectral", "cotrain-spectral", "hsicnpk", "influence-mkl", "intersection",
		"linear", "lpmkl", "mkl-level", "mklr", "mve", "npk-fused", "pfskl", "poly", "raw", "rbf", "simplenpkl", "spe",
		"spectral", "text", "tlk", "tsmkl", "tsmkl-poly", "tsmkl-rf", "twolayer", "twolayer-inf", "umkl", "uniform"}
	var got []string
	for _, s := range learners.Specs() {
		got = append(got, s.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("registered %v, want %v", got, want)
	}
}

// TestContract runs the contract suite against every registered learner.
func TestContract(t *testing.T) {
	specs := learners.Specs()
	if len(specs) == 0 {
		t.Fatal("no learner is registered")
	}
	for _, s := range specs {
		t.Run(s.Name, func(t *testing.T) { learnertest.Run(t, s) })
	}
}
