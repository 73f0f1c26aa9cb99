package learnertest

import (
	"context"

	"github.com/kernelrank/kernelrank/learners"
)

// PanickingName is the learner RegisterPanicking registers.
const PanickingName = "test-panic"

type panicking struct{}

func (panicking) Fit(context.Context, *learners.Input) (*learners.Output, error) {
	panic("lapack: insufficient length of a")
}

// RegisterPanicking registers a kernel learner whose fit panics, as
// HSIC-NPK's eigensolver did on C = 1e200: for the tests of
// what contains a panic. Call it once, from a test package's init.
func RegisterPanicking() {
	learners.Register(learners.Spec{Name: PanickingName, Kind: learners.KindKernel, Needs: learners.NeedFeatures,
		New: func(learners.Values) (learners.Learner, error) { return panicking{}, nil }})
}
