package learners

import (
	"math"
	"testing"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

func TestInputValidate(t *testing.T) {
	k := identity(3)
	bad := identity(3)
	bad.SetSym(0, 1, math.NaN())
	nanDiag := identity(3)
	nanDiag.SetSym(2, 2, math.NaN())
	cases := map[string]struct {
		in    Input
		needs Needs
	}{
		"empty":             {Input{}, NeedKernels},
		"missing kernels":   {Input{Target: k}, NeedKernels},
		"NaN kernel":        {Input{Kernels: []*mat.SymDense{bad}}, NeedKernels},
		"size mismatch":     {Input{Kernels: []*mat.SymDense{k, identity(4)}}, NeedKernels},
		"missing target":    {Input{Kernels: []*mat.SymDense{k}}, NeedTarget},
		"features rows":     {Input{Kernels: []*mat.SymDense{k}, Features: mat.NewDense(2, 1, nil)}, 0},
		"Inf feature":       {Input{Features: mat.NewDense(1, 1, []float64{math.Inf(1)})}, NeedFeatures},
		"labels length":     {Input{Kernels: []*mat.SymDense{k}, Labels: []int{0, 1}}, NeedLabels},
		"all unlabeled":     {Input{Kernels: []*mat.SymDense{k}, Labels: []int{-1, -1, -1}}, NeedLabels},
		"pair out of range": {Input{Kernels: []*mat.SymDense{k}, MustLink: []Pair{{I: 0, J: 3}}}, NeedPairs},
		"self pair":         {Input{Kernels: []*mat.SymDense{k}, CannotLink: []Pair{{I: 1, J: 1}}}, NeedPairs},
		"no pairs":          {Input{Kernels: []*mat.SymDense{k}}, NeedPairs},
	}
	for name, c := range cases {
		if err := c.in.Validate(c.needs); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ok := Input{Kernels: []*mat.SymDense{k}, Labels: []int{0, -1, 1}, MustLink: []Pair{{I: 0, J: 2}}}
	if err := ok.Validate(NeedKernels | NeedLabels | NeedPairs); err != nil {
		t.Errorf("valid input rejected: %v", err)
	}
	if got := ok.BaseKernels(); len(got) != 1 || got[0].At(1, 1) != 1 || ok.TargetKernel() != nil {
		t.Errorf("BaseKernels/TargetKernel of a dense input: %v, %v", got, ok.TargetKernel())
	}
	implicit := Input{Matrices: []kernelmath.KernelMatrix{kernelmath.DenseKernel{K: k}}, TargetMatrix: kernelmath.DenseKernel{K: k}, Labels: []int{0, 1, 1}}
	if err := implicit.Validate(NeedKernels | NeedTarget | NeedLabels | AcceptImplicit); err != nil || implicit.N() != 3 {
		t.Errorf("valid implicit input rejected: %v (n = %d)", err, implicit.N())
	}
	// A link target stands for labels only for a learner that takes one.
	linked := Input{Kernels: []*mat.SymDense{k}, Target: k}
	if err := linked.Validate(NeedKernels | NeedLabels); err == nil {
		t.Error("a target accepted in place of labels without AcceptLinkTarget")
	}
	if err := linked.Validate(NeedKernels | NeedLabels | AcceptLinkTarget); err != nil {
		t.Errorf("a link target in place of labels rejected: %v", err)
	}
	linked.Labels = []int{0, 1}
	if err := linked.Validate(NeedKernels | NeedLabels | AcceptLinkTarget); err == nil {
		t.Error("labels of the wrong length accepted beside a link target")
	}
	needs := NeedKernels | NeedLabels | AcceptImplicit | AcceptLinkTarget
	if needs.Required() != NeedKernels|NeedLabels || needs.GivenLinkTarget() != NeedKernels || (NeedLabels).GivenLinkTarget() != NeedLabels {
		t.Errorf("Required %v, GivenLinkTarget %v", needs.Required().Names(), needs.GivenLinkTarget().Names())
	}
}

// PSDPart agrees with ProjectPSD (a full decomposition) whichever side of
// zero it builds from: mostly positive, mostly negative, already PSD.

func identity(n int) *mat.SymDense {
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		k.SetSym(i, i, 1)
	}
	return k
}
