package mklr

import (
	"context"
	"errors"
	"math"

	"github.com/kernelrank/kernelrank/learners"
)

// Name is the registry name of the pair scorer.
const Name = "mklr"

func init() {
	learners.Register(learners.Spec{
		Name: Name,
		Kind: learners.KindScorer,
		Doc: "Kernel logistic regression on pairs of points (Zhuang thesis section 7.4), trained as an import vector machine: " +
			"scores how likely two points are to be linked. The first kernel is K_u, the kernel the pair kernel is built from " +
			"(the combined user kernel); each further kernel adds an unpenalised term gamma_t K^t(i, j). " +
			"MustLink pairs are the positives (friends), CannotLink the negatives.",
		Needs:  learners.NeedKernels | learners.NeedPairs | learners.AcceptImplicit,
		Params: params(),
		New:    func(v learners.Values) (learners.Learner, error) { return scorer{OptionsOf(v)}, nil },
	})
}

// params declares every field of Options but Base (an input): the one
// surface of mklr's settings, for the registry and for the recommender,
// which resolves its Options through it (OptionsOf).
func params() []learners.Param {
	return []learners.Param{
		learners.Enum("pair", PairTensor.String(), []string{PairTensor.String(), PairSquared.String(), PairDifference.String()},
			"pair kernel: tensor (a learned bilinear similarity), squared (a learned metric) or difference (the thesis' D)"),
		learners.Float("c", 1e-5, 1e-12, 1e6, "weight C of the regulariser (C/2) alpha' P alpha against the mean logistic loss"),
		learners.Int("max_import", 100, 1, 10000, "largest import set"),
		learners.Int("candidates", 40, 1, 10000, "pairs drawn and scored each round"),
		learners.Float("tol", 1e-3, 0, 1, "stop growing when a round lowers the loss by less than this, relative"),
		learners.Bool("intercept", true, "fit an intercept b"),
		learners.Bool("kernel_term", false, "add gamma K_u(i, j), gamma unpenalised, to the score"),
		learners.Int("seed", 1, 0, math.MaxInt32, "seed of the candidate draws"),
	}
}

// OptionsOf returns the Options of validated values of mklr's parameters
// (a learners.Resolved's Values), Base left nil.
func OptionsOf(v learners.Values) Options {
	o := Options{
		C: v.Float("c"), MaxImport: v.Int("max_import"), Candidates: v.Int("candidates"), Tol: v.Float("tol"),
		NoIntercept: !v.Bool("intercept"), KernelTerm: v.Bool("kernel_term"), Seed: uint64(v.Int("seed")),
	}
	switch v.String("pair") {
	case PairSquared.String():
		o.Pair = PairSquared
	case PairDifference.String():
		o.Pair = PairDifference
	}
	if o.Tol == 0 {
		o.Tol = -1 // 0 means the default to Train: here it means never stop early
	}
	return o
}

// scorer is mklr behind the learner contract.
type scorer struct{ opts Options }

var _ learners.Learner = (*scorer)(nil)

func (s scorer) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	base := in.BaseKernels()
	o := s.opts
	o.Base = base[1:]
	if len(o.Base) == 0 {
		o.Base = nil
	}
	m, err := Train(ctx, base[0], in.MustLink, in.CannotLink, o)
	if m == nil {
		return nil, err
	}
	st := m.Stats()
	out := &learners.Output{Scorer: m, Stats: learners.Stats{
		Iterations: len(st.Losses) - 1, Objective: st.Loss, Converged: !errors.Is(err, learners.ErrNotConverged),
	}}
	return out, err
}
