package rerank

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kernelrank/kernelrank/features"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/hsicnpk"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// Candidate is one image returned by the text stage.
type Candidate struct {
	ID        string
	TextScore float64
	Visual    []float64          // visual feature vector; nil when the image has none
	Tags      features.TagVector // normalised tf-idf tag vector
	// ImageHash identifies the image's bytes (index.Doc.ImageSHA256);
	// empty when unknown. Candidates with one hash are near-duplicates.
	ImageHash string
}

// Options selects how to re-rank. The zero value re-ranks with the defaults.
type Options struct {
	// Strategy names, or is an alias of, a plug-in of the learners registry
	// that can re-rank a search: a fixed strategy (raw, text, linear, poly,
	// rbf, intersection) or a learner that outputs a kernel, such as npk
	// (hsicnpk) or npk-fused (default DefaultStrategy).
	Strategy string
	// Params are the kernel's or learner's parameters as a JSON object.
	Params json.RawMessage
	// Prior is the VisualRank teleport distribution: uniform or text
	// (proportional to the text score). Default DefaultPrior.
	Prior string
	// Affinity turns a kernel into non-negative VisualRank affinities: clip
	// (max(K, 0)), shift (K - min K) or gauss (exp(-d_K^2 / mean d_K^2)).
	// Default clip.
	Affinity string
	// Damping is VisualRank's d (default 0.85).
	Damping float64
	// Voters is how many top voters to report per result (0: none).
	Voters int
	// FitEachCopy makes a learner fit every candidate, near-duplicates
	// too, as it did before a cluster was fitted as one point
	// (duplicates.go): VisualRank still counts a cluster once. It costs
	// more where features repeat and exists to measure that
	// (search.BenchmarkWindowCost's before column).
	FitEachCopy bool
}

// Defaults, chosen on the validation queries of `kernelrank eval images`
// (Corel5k and harder corpora built from it; the tables are in
// docs/evaluation.md). The default strategy is npk-fused, HSIC-NPK fused
// with the degree-2 polynomial kernel (learners/hsicnpk): its defaults
// work on features of any sign (histogram intersection needs non-negative
// ones). The prior is uniform although spec A.2 suggests the text prior:
// the uniform prior ranked better with every kernel. A deployment's
// labelled validation queries (search.SelectDefault, `kernelrank serve
// --validation`) may set another default and its parameters. This package
// imports hsicnpk, so that its default is registered wherever it is used.
const (
	DefaultStrategy = hsicnpk.FusedName
	DefaultPrior    = "uniform"
	DefaultAffinity = "clip"
	DefaultDamping  = 0.85
)

// Priors and Affinities are the accepted values of Options.Prior and Options.Affinity.
var (
	Priors     = []string{"uniform", "text"}
	Affinities = []string{"clip", "shift", "gauss"}
)

// Vote is one neighbour's contribution to a result's VisualRank score.
type Vote struct {
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
}

// Result is one re-ranked candidate with its explanation.
type Result struct {
	ID         string  `json:"id"`
	TextScore  float64 `json:"text_score"`
	VisualRank float64 `json:"visualrank"`
	// Voters are the neighbours whose votes raised this image most.
	Voters []Vote `json:"voters,omitempty"`
	// NearDuplicates is how many other candidates of the window are its
	// near-duplicates (the same image bytes, or visual features within
	// NearDuplicateDistance): they count as one voter and share one score.
	NearDuplicates int `json:"near_duplicates,omitempty"`
	// NoFeatures marks an image without a visual vector: it keeps its text
	// order after the re-ranked ones.
	NoFeatures bool `json:"no_features,omitempty"`
}

// Info describes how a re-ranking was computed.
type Info struct {
	Strategy   string          `json:"strategy"`
	Prior      string          `json:"prior"`
	Affinity   string          `json:"affinity"`
	Iterations int             `json:"visualrank_iterations"`
	Learner    *learners.Stats `json:"learner,omitempty"`
	// Warning is set when the learner stopped short of its convergence
	// criterion and the ranking uses the best kernel it reached (see
	// Plan.Warning), or the search fell back to a low rank.
	Warning string `json:"warning,omitempty"`
}

// minRerank is the fewest candidates worth re-ranking: with two, VisualRank
// gives both the same score whatever the kernel.
const minRerank = 3

// ErrOptions wraps every error caused by bad options, for mapping to a client error.
var ErrOptions = errors.New("bad re-rank options")

func optErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrOptions, fmt.Sprintf(format, args...))
}

// Strategies lists the fixed re-rank strategies (the registry's Fixed
// plug-ins that can re-rank a search: raw, text, linear, poly, rbf,
// intersection); the learners that can re-rank are accepted too.
func Strategies() []string {
	var names []string
	for _, s := range learners.Specs() {
		if s.Fixed && LearnerApplicability(s, true).Rerank {
			names = append(names, s.Name)
		}
	}
	return names
}

func (o *Options) fill() error {
	if o.Strategy == "" {
		o.Strategy = DefaultStrategy
	}
	if o.Prior == "" {
		o.Prior = DefaultPrior
	}
	if o.Affinity == "" {
		o.Affinity = DefaultAffinity
	}
	if o.Damping == 0 {
		o.Damping = DefaultDamping
	}
	if !contains(Priors, o.Prior) {
		return optErr("unknown prior %q (use %s)", o.Prior, strings.Join(Priors, " or "))
	}
	if !contains(Affinities, o.Affinity) {
		return optErr("unknown affinity %q (use %s)", o.Affinity, strings.Join(Affinities, ", "))
	}
	if !(o.Damping > 0 && o.Damping < 1) {
		return optErr("damping must be in (0, 1), got %g", o.Damping)
	}
	if o.Voters < 0 || o.Voters > 20 {
		return optErr("voters must be in [0, 20], got %d", o.Voters)
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// Plan is a validated re-ranking: the options with their defaults filled
// in and the strategy resolved once (learners.Resolve). NewPlan checks all
// that can be checked without candidates, so a caller rejects bad options,
// and keys a cache by the canonical ones, before doing any work. A search
// then runs its stages on it in turn, none calling back into another:
// Split, Kernel (or a cached kernel), Rank.
type Plan struct {
	opt Options
	r   *learners.Resolved
	// visual says the kernel is over the visual features, so a candidate
	// without them is left out of the ranking.
	visual bool
}

// NewPlan validates opt; its errors wrap ErrOptions.
func NewPlan(opt Options) (*Plan, error) {
	if err := opt.fill(); err != nil {
		return nil, err
	}
	r, err := resolve(opt.Strategy, opt.Params)
	if err != nil {
		return nil, err
	}
	return &Plan{opt: opt, r: r, visual: r.Needs&(learners.NeedFeatures|learners.NeedKernels) != 0}, nil
}

// Options returns the options with their defaults filled in.
func (p *Plan) Options() Options { return p.opt }

// Params returns the kernel's parameters in canonical form
// (learners.Resolved.Params): equivalent Options.Params give one string.
func (p *Plan) Params() string { return p.r.Params }

// Learner names the learner that fits the kernel (hsicnpk for npk), or is
// empty for raw and the fixed kernels (text, linear, poly, ...): a cache
// keeps only a learned kernel.
func (p *Plan) Learner() string {
	if !p.r.Learned() {
		return ""
	}
	return p.r.Spec.Name
}

// reranks reports whether the plan computes a kernel at all (false for raw,
// which keeps the text order).
func (p *Plan) reranks() bool { return p.r.Spec.Kind != learners.KindOrder }

// Window is a search's candidates as the stages after Split take them.
type Window struct {
	// Ranked are the candidates the kernel is over; Rest, for a visual
	// kernel, those without visual features, which keep their text order
	// after the ranked ones.
	Ranked, Rest []Candidate
	// dups are Ranked's near-duplicate clusters (duplicates.go), found
	// once by Split for both the learner, which fits one point a
	// cluster, and VisualRank, which counts a cluster's vote once.
	dups *nearDuplicates
}

// nearDuplicates are a window's near-duplicate clusters; some is false
// when every cluster has one member.
type nearDuplicates struct {
	cl   clusters
	some bool
}

// Points is how many points a learner fits over w's ranked candidates: one
// a cluster of near-duplicates. A learner's cost grows with it, not with
// the number of candidates.
func (w Window) Points() int {
	return len(w.clusters().cl.members)
}

// clusters returns w's near-duplicate clusters: Split's, or found now
// for a Window built by hand.
func (w Window) clusters() *nearDuplicates {
	if w.dups != nil {
		return w.dups
	}
	return findDuplicates(w.Ranked)
}

func findDuplicates(cands []Candidate) *nearDuplicates {
	cl, some := duplicates(cands)
	return &nearDuplicates{cl, some}
}

// Split returns the window: the candidates the kernel is over and the
// rest (see Window), with the near-duplicate clusters when the plan votes.
func (p *Plan) Split(cands []Candidate) Window {
	w := Window{Ranked: cands}
	if p.visual && slices.ContainsFunc(cands, func(c Candidate) bool { return len(c.Visual) == 0 }) {
		w.Ranked = nil
		for _, c := range cands {
			if len(c.Visual) > 0 {
				w.Ranked = append(w.Ranked, c)
			} else {
				w.Rest = append(w.Rest, c)
			}
		}
	}
	if p.Votes(w) {
		w.dups = findDuplicates(w.Ranked)
	}
	return w
}

// Votes reports whether Rank needs a kernel of w's ranked candidates: a
// re-ranking plan and at least three of them (with two, VisualRank gives
// both the same score whatever the kernel).
func (p *Plan) Votes(w Window) bool { return p.reranks() && len(w.Ranked) >= minRerank }

// Rank orders w's ranked candidates by VisualRank over kernel k with the
// plan's prior, affinity and damping, lists each result's top voters, and
// appends the rest in text order; with k nil (raw, or too few candidates
// to vote) the text order stands. It returns the results and VisualRank's
// iteration count.
func (p *Plan) Rank(k *mat.SymDense, w Window) ([]Result, int) {
	ranked, rest := w.Ranked, w.Rest
	results := make([]Result, 0, len(ranked)+len(rest))
	iter := 0
	switch {
	case !p.reranks():
		for _, c := range ranked {
			results = append(results, Result{ID: c.ID, TextScore: c.TextScore})
		}
	case k == nil:
		// Too few to vote: every score is equal, so the text order stands.
		for _, c := range ranked {
			results = append(results, Result{ID: c.ID, TextScore: c.TextScore, VisualRank: 1 / float64(len(ranked))})
		}
	default:
		v := scores(k, ranked, w.clusters(), p.opt.Prior, p.opt.Affinity, p.opt.Damping)
		results = explain(results, ranked, v, p.opt)
		kernelmath.Release(v.s.RawMatrix().Data)
		iter = v.iter
	}
	for _, c := range rest {
		results = append(results, Result{ID: c.ID, TextScore: c.TextScore, NoFeatures: true})
	}
	return results, iter
}

// Warning is what a ranking by a kernel with the learner's stats says: that
// the learner stopped short of its convergence criterion, or "".
func (p *Plan) Warning(stats *learners.Stats) string {
	if stats == nil || stats.Converged {
		return ""
	}
	return fmt.Sprintf("the %s learner stopped after %d iterations without reaching its tolerance (gap %.3g): ranked by the best kernel it reached", p.opt.Strategy, stats.Iterations, stats.Gap)
}

// Kernel computes the candidates' similarity matrix for a strategy (nil for
// raw, which does not re-rank). Every candidate must have visual features for
// the visual strategies.
func Kernel(ctx context.Context, cands []Candidate, strategy string, params json.RawMessage) (*mat.SymDense, *learners.Stats, error) {
	r, err := resolve(strategy, params)
	if err != nil || r.Spec.Kind == learners.KindOrder {
		return nil, nil, err
	}
	return kernel(ctx, r, Window{Ranked: cands}, false)
}

// Scores runs VisualRank over the affinities of kernel k with the given prior,
// near-duplicates counted once (duplicates.go), returning the candidates'
// scores, the column-stochastic matrix over the nodes (the candidates, or
// their clusters when some are near-duplicates) and the iteration count.
// The matrix is on kernelmath.Scratch storage: kernelmath.Release(s.RawMatrix().Data)
// hands it back when done.
func Scores(k *mat.SymDense, cands []Candidate, priorKind, affinity string, damping float64) ([]float64, *mat.Dense, int) {
	v := scores(k, cands, findDuplicates(cands), priorKind, affinity, damping)
	return v.vr, v.s, v.iter
}

// votes are what VisualRank computed over a window: the candidates'
// scores vr; the nodes it ran over (the candidates, or one a cluster of
// near-duplicates, cl), their column-stochastic matrix s and their scores.
type votes struct {
	vr     []float64
	nodes  []Candidate
	s      *mat.Dense
	nodeVR []float64
	cl     clusters // empty without near-duplicates: a node is a candidate
	iter   int
}

// scores runs VisualRank over kernel k of cands, whose near-duplicate
// clusters are dups.
func scores(k *mat.SymDense, cands []Candidate, dups *nearDuplicates, priorKind, affinity string, damping float64) votes {
	v := votes{nodes: cands}
	cl, dup := dups.cl, dups.some
	if dup {
		k, v.nodes = cl.collapse(k, cands)
		v.cl = cl
	}
	n := k.SymmetricDim()
	v.s = mat.NewDense(n, n, kernelmath.Scratch(n*n))
	if affinity == "shift" || affinity == "gauss" {
		stochastic(v.s, Affinity(k, affinity), false)
	} else { // clip, fused into the normalisation
		stochastic(v.s, k, true)
	}
	v.nodeVR, v.iter = VisualRank(v.s, prior(v.nodes, priorKind), damping)
	v.vr = v.nodeVR
	if dup {
		v.vr = cl.split(v.nodeVR)
	}
	return v
}

// node is candidate i's node in v and how many other candidates share it.
func (v votes) node(i int) (node, others int) {
	if v.cl.node == nil {
		return i, 0
	}
	return v.cl.node[i], len(v.cl.members[v.cl.node[i]]) - 1
}

func prior(cands []Candidate, kind string) []float64 {
	n := len(cands)
	p := make([]float64, n)
	total := 0.0
	if kind == "text" {
		for i, c := range cands {
			p[i] = math.Max(c.TextScore, 0)
			total += p[i]
		}
	}
	if total == 0 {
		for i := range p {
			p[i] = 1 / float64(n)
		}
		return p
	}
	for i := range p {
		p[i] /= total
	}
	return p
}

// explain appends the candidates' results to out, sorted by VisualRank
// (stable, so ties keep the text order), each with its strongest voters:
// d S_ij VR_j over the nodes j (a cluster of near-duplicates votes as one,
// named by its first member).
func explain(out []Result, cands []Candidate, v votes, opt Options) []Result {
	from := len(out)
	for i, c := range cands {
		node, others := v.node(i)
		r := Result{ID: c.ID, TextScore: c.TextScore, VisualRank: v.vr[i], NearDuplicates: others}
		if opt.Voters > 0 {
			r.Voters = topVotes(v.nodes, v.s.RawRowView(node), v.nodeVR, node, opt.Damping, opt.Voters)
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out[from:], func(a, b Result) int { return cmp.Compare(b.VisualRank, a.VisualRank) })
	return out
}

// topVotes returns the k largest votes d S_ij VR_j (j != i, vote > 0) for
// image i, largest first, earlier candidates first among equal votes. An
// insertion buffer of k keeps it O(n k) per image rather than a full sort.
func topVotes(cands []Candidate, row, vr []float64, i int, d float64, k int) []Vote {
	top := make([]Vote, 0, k)
	for j, sij := range row {
		w := d * sij * vr[j]
		if j == i || w <= 0 || (len(top) == k && w <= top[k-1].Weight) {
			continue
		}
		if len(top) < k {
			top = append(top, Vote{})
		}
		pos := len(top) - 1
		for pos > 0 && top[pos-1].Weight < w {
			top[pos] = top[pos-1]
			pos--
		}
		top[pos] = Vote{cands[j].ID, w}
	}
	return top
}

// Affinity turns a kernel into non-negative affinities (see Options.Affinity).
func Affinity(k *mat.SymDense, kind string) *mat.SymDense {
	n := k.SymmetricDim()
	switch kind {
	case "shift":
		out := mat.NewSymDense(n, nil)
		lo := math.Inf(1)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				lo = math.Min(lo, k.At(i, j))
			}
		}
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				out.SetSym(i, j, k.At(i, j)-lo)
			}
		}
		return out
	case "gauss":
		out := mat.NewSymDense(n, nil)
		d := kernelmath.KernelDistances(k)
		sigma := kernelmath.MeanOffDiagonal(d)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				v := 1.0
				if sigma > 0 {
					v = math.Exp(-d.At(i, j) / sigma)
				}
				out.SetSym(i, j, v)
			}
		}
		return out
	default: // clip
		return kernelmath.Clip(k)
	}
}

// NewCandidate builds a candidate from what the index stores: its tf-idf tag
// vector uses idf over the whole corpus (n images, docFreq images per tag).
func NewCandidate(id string, textScore float64, tags []string, visual []float32, n int, docFreq func(string) int) Candidate {
	c := Candidate{ID: id, TextScore: textScore, Tags: features.TFIDF(tags, n, docFreq)}
	if visual != nil {
		c.Visual = make([]float64, len(visual))
		for j, v := range visual {
			c.Visual[j] = float64(v)
		}
	}
	return c
}
