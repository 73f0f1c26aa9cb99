package all

import (
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/learnertest"
)

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
