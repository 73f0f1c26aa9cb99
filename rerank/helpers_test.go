package rerank

import "context"

// rerankAll runs a search's stages on cands with opt, as search does: the
// plan, the split, the kernel of the ranked candidates when they vote,
// the ranking.
func rerankAll(ctx context.Context, cands []Candidate, opt Options) ([]Result, Info, error) {
	p, err := NewPlan(opt)
	if err != nil {
		return nil, Info{}, err
	}
	return p.rerankAll(ctx, cands)
}

func (p *Plan) rerankAll(ctx context.Context, cands []Candidate) ([]Result, Info, error) {
	o := p.Options()
	info := Info{Strategy: o.Strategy, Prior: o.Prior, Affinity: o.Affinity}
	w := p.Split(cands)
	if !p.Votes(w) {
		res, _ := p.Rank(nil, w)
		return res, info, nil
	}
	k, stats, err := p.Kernel(ctx, w)
	if err != nil {
		return nil, info, err
	}
	res, iter := p.Rank(k, w)
	info.Learner, info.Iterations, info.Warning = stats, iter, p.Warning(stats)
	return res, info, nil
}
