package recommend

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/alignf"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/mklr"
	"github.com/kernelrank/kernelrank/social"
)

// DefaultLearner is the kernel-combination learner of the thesis.
const DefaultLearner = alignf.Name

// Target is what the combination learner aligns the kernels with.
type Target string

// The targets.
const (
	// TargetFriends aligns with the friendships (the friend task of the
	// thesis; every base kernel takes part). The default.
	TargetFriends Target = "friends"
	// TargetGroups aligns with the groups kernel (the group task of spec
	// B.2), which is then not a base kernel.
	TargetGroups Target = "groups"
)

// Options configures Train. The zero value is the default.
type Options struct {
	// Learner is the registered kernel-combination learner (kind weights)
	// and Params its JSON parameters; "" means DefaultLearner.
	Learner string
	Params  json.RawMessage
	Target  Target // "" means TargetFriends
	// Kernels configures the base kernels. When Kernels.Kernels is empty,
	// every kernel the data has but the regularised Laplacian: its rows
	// cost a linear solve each, and it holds the training friendships
	// themselves, so as a term of the strength model it separates them
	// perfectly (the logistic loss has no finite optimum).
	Kernels social.KernelOptions
	// DenseMax is the largest number of users for which the kernels are
	// stored densely for a learner that does not take implicit kernels
	// (8 n^2 bytes each; default 2000: 32 MB a kernel).
	DenseMax int
	// MKLR are the strength model's parameters, as the registry's mklr
	// spec declares them (GET /v1/learners; nil: its defaults, the seed
	// Seed), and Negatives configure its negative training pairs (the seed
	// defaults to Seed). Each base kernel is an unpenalised term of the
	// strength model (mklr's Base).
	MKLR      json.RawMessage
	Negatives mklr.NegativeOptions
	// StrengthPairs caps the training pairs the strength model is fitted
	// on (default 600,000): above it, a seeded uniform sample of the
	// friendships and of the negatives, in proportion. mklr's cost grows
	// with the pairs times its imports; the prior correction (Strength)
	// counts every friendship. The default fits ego-Facebook's 167k and
	// BlogCatalog's 540k pairs whole: capped at 200k, BlogCatalog's
	// alignf+mklr friend MAP fell from .102 to .095 (eval social --seed 1),
	// so the sample is only for larger networks (YouTube: 1.7M pairs).
	StrengthPairs int
	// Select configures the choice of the friend and group scorers on
	// held-out training friendships and memberships (on by default;
	// Select.Scorer and Select.GroupScorer fix them).
	Select SelectOptions
	// Seed seeds the negatives, the import candidates, the kernels' random
	// features, the validation friendships and the order among equal
	// scores (default 1).
	Seed uint64
	// Log receives the progress of training (nil: none).
	Log *slog.Logger
	// Progress (nil: none) gets each stage of training (Stages) as it
	// starts, with 0, and the fraction of it done where a stage can tell.
	Progress func(stage string, fraction float64)
}

// The stages of training, in order, as Options.Progress names them.
const (
	StageKernels    = "building kernels"
	StageWeights    = "learning kernel weights"
	StageNegatives  = "sampling negatives"
	StageStrength   = "training the strength model"
	StageFriendsVal = "validating the friend scorers"
	StageGroupsVal  = "validating the group scorers"
	StageApply      = "applying the fit to the whole view"
)

// Stages lists the stages of training in order.
var Stages = []string{StageKernels, StageWeights, StageNegatives, StageStrength, StageFriendsVal, StageGroupsVal, StageApply}

// report passes a stage's progress to o.Progress.
func (o *Options) report(stage string, fraction float64) {
	if o.Progress != nil {
		o.Progress(stage, fraction)
	}
}

// ErrLearner wraps the errors of a learner that cannot combine the kernels
// here: unknown, not a weights learner, needing inputs the recommender
// does not have, or bad parameters. It is the caller's mistake.
var ErrLearner = errors.New("unusable kernel-combination learner")

// Stats reports how training went.
type Stats struct {
	Learner string
	Target  Target
	Users   int
	// Weights are the learned kernel weights, by kernel name.
	Weights []KernelWeight
	// Objective is the learner's Stats.Objective (alignf: the centred
	// alignment reached).
	Objective float64
	// Positive and Negative count the strength model's training pairs;
	// Imports its import set.
	Positive, Negative, Imports int
	// Kernels, Combine, Negatives, Strength time the stages.
	Kernels, Combine, Negatives, Strength time.Duration
	// Warnings says what stopped short (a learner or a refit that did not
	// converge: its last iterate is used).
	Warnings []string
	// Selection says which scorer ranks friends and how it was chosen;
	// GroupSelection the same of groups.
	Selection      Selection
	GroupSelection GroupSelection
}

// KernelWeight is one learned weight.
type KernelWeight struct {
	Kernel string  `json:"kernel"`
	Weight float64 `json:"weight"`
}

// Model is a trained recommender over one data set. It is safe for
// concurrent use.
type Model struct {
	ds       *social.Dataset
	kernels  []social.NamedKernel // the base kernels, in weight order
	weights  []float64
	combined kernelmath.KernelMatrix
	strength *mklr.Model
	scorer   string // what ranks friends: one of Scorers
	// regLap is the regularised Laplacian of the view's friendships (not
	// a base kernel: Options.Kernels); groupScorer ranks groups (one of
	// GroupScorers), with groupWeights for GroupLearned.
	regLap       kernelmath.KernelMatrix
	groupScorer  string
	groupWeights []float64
	// groupPerUser: GroupLearned's signals are divided by their largest
	// magnitude over the groups u is not in (GroupSelection.PerUser).
	groupPerUser bool
	relations           // the view's
	noData       []bool // users with no relation and no content at all
	userTie      []int  // rank among equal scores: seeded permutations
	groupTie     []int
	offset       float64 // prior correction of f: see priorOffset
	stats        Stats
	top          *precomputed  // nil: every request ranks from scratch
	cached       *onDemand     // nil: rankings computed on demand are not kept
	candidates   *candidates   // nil: rankings on demand score every user
	regLapGroups *regLapGroups // see regLapSums
	large        *largeGroups  // see largeSums
	rowSums      *rowSums      // see kernelSums

	// What storing needs (store.go): the settings trained with, whether
	// the view was the data set's full view,
	// the data version and the store version.
	settings             settings
	full                 bool
	dataVersion, version string
}

// priorOffset is the prior correction of a logistic model fitted on a
// sample with pos friend pairs and neg non-friend pairs, about as many,
// for the population of n(n-1)/2 user pairs of which friends are friends
// (King & Zeng 2001, case-control sampling): P(friends) =
// sigmoid(f - offset), offset = ln(pos/neg) + ln((pairs - friends)/friends).
// The hard negatives are not a uniform sample of the non-friends, so the
// correction is approximate; it changes no ranking of one user's
// candidates, only how strengths add up over a group.
func priorOffset(n, friends, pos, neg int) float64 {
	pairs := float64(n) * float64(n-1) / 2
	return math.Log(float64(pos)/float64(neg)) + math.Log((pairs-float64(friends))/float64(friends))
}

// Strength returns P(u and v are friends) = sigmoid(f(u, v) - offset),
// the strength model's probability corrected to the population's rate of
// friendship (priorOffset).
func (m *Model) Strength(u, v int) float64 { return sigmoid(m.Score(u, v) - m.offset) }

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// Train builds the kernels of ds over view, learns their weights with the
// learner and trains the strength model on view's friendships. Unless
// opts.Select.Scorer fixes one, it chooses the friend scorer (Scorers: mklr, the
// combined kernel alone or Adamic-Adar) on validation friendships held out
// of view: the same pipeline trained on the rest ranks them for their ends,
// and the scorer with the best mean average precision ranks friends in the
// model trained on all of view (whose mklr still gives the strengths).
// Likewise, unless opts.Select.GroupScorer fixes one, it chooses the group
// scorer (GroupScorers) on memberships held out of view (by the same
// validation model), fitting GroupLearned's weights on them. Errors wrap
// ErrLearner (the learner cannot be used here), learners.ErrInput (the
// data cannot give what is needed: no friendships, a listed kernel the
// data has not; an unknown scorer, or learned fixed), or are ctx's.
//
// One training, not two: when a validation model is trained, the served
// model is that model's fit (kernel weights, strength model) applied to
// the kernels and relations of the whole view (onView, what loading a
// stored model does), so the pipeline is trained once on the view without
// the held-out part and never again on all of it. A learner or refit that
// stops short is not an error: its last iterate is used and
// Stats.Warnings says so.
func Train(ctx context.Context, ds *social.Dataset, view social.View, opts Options) (*Model, error) {
	opts.defaults()
	if opts.Select.Scorer != "" && !slices.Contains(Scorers, opts.Select.Scorer) {
		return nil, fmt.Errorf("%w: unknown friend scorer %q (%s)", learners.ErrInput, opts.Select.Scorer, strings.Join(Scorers, ", "))
	}
	if opts.Select.GroupScorer == GroupLearned || opts.Select.GroupScorer != "" && !slices.Contains(GroupScorers, opts.Select.GroupScorer) {
		return nil, fmt.Errorf("%w: group scorer %q cannot be fixed (%s; %s is fitted when chosen)", learners.ErrInput, opts.Select.GroupScorer, strings.Join(GroupScorers[:len(GroupScorers)-1], ", "), GroupLearned)
	}
	logf := func(msg string, args ...any) { opts.Log.Info(msg, append([]any{"learner", opts.Learner}, args...)...) }
	sel, gsel, vm, err := selectScorers(ctx, ds, view, opts, logf)
	if err != nil {
		return nil, err
	}
	var m *Model
	if vm != nil {
		logf("applying the validation model's fit to every friendship and membership")
		opts.report(StageApply, 0)
		m, err = vm.onView(ctx, view, opts.Seed)
	} else {
		m, err = trainPipeline(ctx, ds, view, opts, logf)
	}
	if err != nil {
		return nil, err
	}
	if opts.Select.Scorer == "" {
		args := []any{"scorer", sel.Scorer, "validation_edges", sel.Edges, "validation_users", sel.Users, "took", sel.Took.Round(time.Millisecond)}
		for _, c := range sel.Candidates {
			args = append(args, c.Scorer, fmt.Sprintf("MAP %.4f P@10 %.4f", c.MAP, c.P10))
		}
		if sel.Reason != "" {
			args = append(args, "reason", sel.Reason)
		}
		logf("friend scorer chosen", args...)
	}
	if opts.Select.GroupScorer == "" {
		args := []any{"scorer", gsel.Scorer, "validation_memberships", gsel.Memberships, "validation_users", gsel.Users, "took", gsel.Took.Round(time.Millisecond)}
		for _, c := range gsel.Candidates {
			args = append(args, c.Scorer, fmt.Sprintf("MAP %.4f P@1 %.4f", c.MAP, c.P1))
		}
		if len(gsel.Weights) > 0 {
			args = append(args, "learned_weights", gsel.Weights)
		}
		if gsel.Reason != "" {
			args = append(args, "reason", gsel.Reason)
		}
		logf("group scorer chosen", args...)
	}
	if gsel.Scorer == GroupLearned {
		m.groupWeights = gsel.learnedWeights()
	}
	m.groupPerUser = gsel.PerUser
	m.scorer, m.stats.Selection = sel.Scorer, sel
	m.groupScorer, m.stats.GroupSelection = gsel.Scorer, gsel
	return m, nil
}

// onView returns the model with vm's kernel weights and strength model over
// the kernels of view (built as Train builds them) and view's relations:
// the fit of vm, made on part of view, serves all of it. The strength
// model keeps vm's prior correction (its training pairs' counts).
func (vm *Model) onView(ctx context.Context, view social.View, seed uint64) (*Model, error) {
	m := &Model{ds: vm.ds, stats: vm.stats, settings: vm.settings, offset: vm.offset, scorer: vm.scorer, groupScorer: vm.groupScorer,
		full:        slices.Equal(view.Friends, vm.ds.Friends) && slices.Equal(view.Memberships, vm.ds.Memberships),
		dataVersion: vm.dataVersion}
	if err := m.rebuildKernels(ctx, view); err != nil {
		return nil, err
	}
	var err error
	if m.strength, err = mklr.FromState(vm.strength.State(), m.combined, m.baseKernels()); err != nil {
		return nil, err
	}
	m.index(view, seed)
	return m, nil
}

// trainPipeline is Train without the choice of the scorer: it ranks by mklr.
func trainPipeline(ctx context.Context, ds *social.Dataset, view social.View, opts Options, logf func(string, ...any)) (*Model, error) {
	spec, err := usable(opts.Learner, opts.Target)
	if err != nil {
		return nil, err
	}
	learner, _, err := learners.New(opts.Learner, opts.Params)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLearner, err)
	}
	n := ds.N()
	if len(view.Friends) == 0 {
		return nil, fmt.Errorf("%w: no friendships to learn from", learners.ErrInput)
	}
	if spec.Needs&learners.AcceptImplicit == 0 && n > opts.DenseMax {
		return nil, fmt.Errorf("%w: %s needs stored kernels and %d users exceed the dense limit of %d (DenseMax)",
			ErrLearner, opts.Learner, n, opts.DenseMax)
	}
	st, err := settingsOf(opts)
	if err != nil {
		return nil, err
	}
	m := &Model{ds: ds, stats: Stats{Learner: opts.Learner, Target: opts.Target, Users: n}, settings: st, scorer: ScorerMKLR, groupScorer: GroupMKLR,
		full:        slices.Equal(view.Friends, ds.Friends) && slices.Equal(view.Memberships, ds.Memberships),
		dataVersion: ds.Version()}

	start := time.Now()
	opts.report(StageKernels, 0)
	logf("building kernels", "users", n, "friendships", len(view.Friends), "mode", cmp.Or(opts.Kernels.Mode, social.ModeDefault))
	kernels, err := social.BuildKernels(ctx, ds, view, opts.Kernels)
	if err != nil {
		return nil, err
	}
	base, target, regLap, err := split(kernels, view, n, opts.Target)
	if err != nil {
		return nil, err
	}
	m.kernels, m.regLap = base, regLap
	m.stats.Kernels = time.Since(start)

	start = time.Now()
	opts.report(StageWeights, 0)
	logf("learning kernel weights", "kernels", len(base))
	if err := m.combine(ctx, learner, spec, target); err != nil {
		return nil, err
	}
	m.stats.Combine = time.Since(start)
	logf("kernel weights learned", "weights", m.stats.Weights, "objective", m.stats.Objective, "took", m.stats.Combine.Round(time.Millisecond))

	if err := m.trainStrength(ctx, view, opts, logf); err != nil {
		return nil, err
	}
	m.index(view, opts.Seed)
	return m, nil
}

// mklrOptions resolves opts.MKLR through the registry's mklr spec, the
// seed defaulting to opts.Seed (defaults applied).
func mklrOptions(opts Options) (mklr.Options, error) {
	r, err := learners.Resolve(mklr.Name, opts.MKLR)
	if err != nil {
		return mklr.Options{}, fmt.Errorf("%w: %w", ErrLearner, err)
	}
	o := mklr.OptionsOf(r.Values)
	if !r.Given("seed") {
		o.Seed = opts.Seed
	}
	return o, nil
}

func (o *Options) defaults() {
	if o.Learner == "" {
		o.Learner = DefaultLearner
	}
	if o.Target == "" {
		o.Target = TargetFriends
	}
	if o.StrengthPairs <= 0 {
		o.StrengthPairs = 600000
	}
	if o.DenseMax <= 0 {
		o.DenseMax = 2000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Kernels.Seed == 0 {
		o.Kernels.Seed = o.Seed
	}
	if o.Negatives.Seed == 0 {
		o.Negatives.Seed = o.Seed
	}
	o.Select.defaults()
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
}

// usable checks that the named learner can combine the base kernels with
// no more than a target: a registered weights learner needing nothing else.
func usable(name string, target Target) (learners.Spec, error) {
	if target != TargetFriends && target != TargetGroups {
		return learners.Spec{}, fmt.Errorf("%w: unknown target %q (friends or groups)", learners.ErrInput, target)
	}
	spec, ok := learners.Lookup(name)
	if !ok {
		return spec, fmt.Errorf("%w: unknown learner %q (usable: %s)", ErrLearner, name, strings.Join(Learners(), ", "))
	}
	if err := fits(spec); err != nil {
		return spec, fmt.Errorf("%w: %w (usable: %s)", ErrLearner, err, strings.Join(Learners(), ", "))
	}
	return spec, nil
}

// fits says why a learner cannot combine the kernels (nil when it can).
// The target (friendships, or common groups) is a link relation, so a
// learner that takes a link target in place of labels (TS-MKL) fits.
func fits(spec learners.Spec) error {
	if spec.Kind != learners.KindWeights {
		return fmt.Errorf("%s learns a %s, not kernel weights", spec.Name, spec.Kind)
	}
	if extra := spec.Needs.GivenLinkTarget() &^ (learners.NeedKernels | learners.NeedTarget); extra != 0 {
		return fmt.Errorf("%s needs %s, which the recommender does not have", spec.Name, strings.Join(extra.Names(), " and "))
	}
	return nil
}

// Learners lists the registered learners the recommender can use, sorted.
func Learners() []string {
	var out []string
	for _, s := range learners.Specs() {
		if fits(s) == nil {
			out = append(out, s.Name)
		}
	}
	return out
}

// RegLaplacianMaxEntries bounds users times groups for the exact
// regularised-Laplacian group signal (GroupRegLaplacian, and its signal in
// GroupLearned): the kernel applied to every group's membership
// indicator, one conjugate-gradient solve a group, kept user-major (8
// bytes an entry: 64 MiB; regLapSums). Above it (a generated network of
// 10,000 users and 3,900 groups; YouTube) a solve a user would be too slow
// to validate on thousands of users or to rank a user's groups on demand,
// so each user's row is pushed locally instead, within regLapPushEps
// (regLapPushed), on demand and in nothing users times groups.
const RegLaplacianMaxEntries = 8 << 20

// split separates the learned base kernels from the target (the
// friendship matrix, or the groups kernel for TargetGroups) and from the
// regularised Laplacian (nil when not built), which only scores groups.
func split(kernels []social.NamedKernel, view social.View, n int, target Target) (base []social.NamedKernel, y, regLap kernelmath.KernelMatrix, err error) {
	for _, k := range kernels {
		switch {
		case k.Name == social.KernelRegLaplacian:
			regLap = k.K
		case target == TargetGroups && k.Name == social.KernelGroups:
			y = k.K
		default:
			base = append(base, k)
		}
	}
	if target == TargetFriends {
		y, err = social.FriendMatrix(n, view.Friends)
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if y == nil {
		return nil, nil, nil, fmt.Errorf("%w: the group target needs memberships, and the data has none", learners.ErrInput)
	}
	if len(base) == 0 {
		return nil, nil, nil, fmt.Errorf("%w: the data gives no base kernel to combine", learners.ErrInput)
	}
	return base, y, regLap, nil
}

// combine fits the learner and forms the combined kernel sum_t theta_t K_t.
func (m *Model) combine(ctx context.Context, l learners.Learner, spec learners.Spec, target kernelmath.KernelMatrix) error {
	in := &learners.Input{}
	if spec.Needs&learners.AcceptImplicit != 0 {
		for _, k := range m.kernels {
			in.Matrices = append(in.Matrices, k.K)
		}
		in.TargetMatrix = target
	} else {
		for _, k := range m.kernels {
			in.Kernels = append(in.Kernels, kernelmath.KernelDense(k.K))
		}
		in.Target = kernelmath.KernelDense(target)
	}
	out, err := l.Fit(ctx, in)
	switch {
	case errors.Is(err, learners.ErrNotConverged) && out != nil:
		m.stats.Warnings = append(m.stats.Warnings, fmt.Sprintf("%s: %v; its last iterate is used", spec.Name, err))
	case errors.Is(err, learners.ErrInput):
		return fmt.Errorf("%w: %w", ErrLearner, err)
	case err != nil:
		return err
	}
	if len(out.Weights) != len(m.kernels) {
		return fmt.Errorf("%s returned %d weights for %d kernels", spec.Name, len(out.Weights), len(m.kernels))
	}
	if !slices.ContainsFunc(out.Weights, func(w float64) bool { return w != 0 }) {
		return fmt.Errorf("%w: %s gave every kernel weight 0", learners.ErrInput, spec.Name)
	}
	m.weights = out.Weights
	m.stats.Objective = out.Stats.Objective
	for t, k := range m.kernels {
		m.stats.Weights = append(m.stats.Weights, KernelWeight{k.Name, out.Weights[t]})
	}
	m.combined, err = kernelmath.NewKernelSum(m.weights, m.baseKernels())
	return err
}

// trainStrength samples the negatives of section 7.4.2 and trains MKLR on
// the combined kernel.
func (m *Model) trainStrength(ctx context.Context, view social.View, opts Options, logf func(string, ...any)) error {
	start := time.Now()
	pos := make([]learners.Pair, len(view.Friends))
	for i, e := range view.Friends {
		pos[i] = learners.Pair{I: e[0], J: e[1]}
	}
	base := m.baseKernels()
	opts.report(StageNegatives, 0)
	neg, err := mklr.SampleNegatives(ctx, base, pos, opts.Negatives)
	if err != nil {
		return err
	}
	m.stats.Negatives = time.Since(start)
	friends := len(pos)
	pos, neg = samplePairs(pos, neg, opts.StrengthPairs, opts.Seed)
	m.stats.Positive, m.stats.Negative = len(pos), len(neg)
	m.offset = priorOffset(m.ds.N(), friends, len(pos), len(neg))

	start = time.Now()
	opts.report(StageStrength, 0)
	logf("training the strength model (mklr)", "positive", len(pos), "negative", len(neg))
	mo, err := mklrOptions(opts)
	if err != nil {
		return err
	}
	mo.Base = base // each base kernel an unpenalised term of f (mklr's default use, see its doc)
	m.strength, err = mklr.Train(ctx, m.combined, pos, neg, mo)
	switch {
	case errors.Is(err, learners.ErrNotConverged) && m.strength != nil:
		m.stats.Warnings = append(m.stats.Warnings, fmt.Sprintf("mklr: %v; the last refit is used", err))
	case err != nil:
		return fmt.Errorf("mklr: %w", err)
	}
	m.stats.Strength = time.Since(start)
	m.stats.Imports = len(m.strength.Imports())
	logf("strength model trained", "imports", m.stats.Imports, "took", m.stats.Strength.Round(time.Millisecond))
	return nil
}

// samplePairs returns pos and neg when they hold at most limit pairs in
// all, else a seeded uniform sample of each, in proportion, limit in all.
func samplePairs(pos, neg []learners.Pair, limit int, seed uint64) ([]learners.Pair, []learners.Pair) {
	total := len(pos) + len(neg)
	if total <= limit {
		return pos, neg
	}
	rng := rand.New(rand.NewPCG(seed, 0x9a125))
	sample := func(p []learners.Pair) []learners.Pair {
		k := max(1, int(math.Round(float64(len(p))*float64(limit)/float64(total))))
		out := slices.Clone(p)
		for i := 0; i < k; i++ {
			j := i + rng.IntN(len(out)-i)
			out[i], out[j] = out[j], out[i]
		}
		return out[:k]
	}
	return sample(pos), sample(neg)
}

// relations are the friendships and memberships of a view, as lists.
type relations struct {
	friends [][]int // friends of each user, sorted
	groups  [][]int // groups of each user, sorted
	members [][]int // members of each group, sorted
}

func newRelations(ds *social.Dataset, view social.View) relations {
	r := relations{friends: make([][]int, ds.N()), groups: make([][]int, ds.N()), members: make([][]int, len(ds.Groups))}
	for _, e := range view.Friends {
		r.friends[e[0]] = append(r.friends[e[0]], e[1])
		r.friends[e[1]] = append(r.friends[e[1]], e[0])
	}
	for _, e := range view.Memberships {
		r.groups[e[0]] = append(r.groups[e[0]], e[1])
		r.members[e[1]] = append(r.members[e[1]], e[0])
	}
	for _, lists := range [][][]int{r.friends, r.groups, r.members} {
		for i, l := range lists {
			slices.Sort(l)
			lists[i] = slices.Compact(l)
		}
	}
	return r
}

// index records the visible relations and who has no data at all.
func (m *Model) index(view social.View, seed uint64) {
	n, ds := m.ds.N(), m.ds
	m.relations = newRelations(ds, view)
	m.regLapGroups = &regLapGroups{push: n*len(m.members) > RegLaplacianMaxEntries}
	m.large = &largeGroups{min: LargeGroupMembers}
	m.rowSums = &rowSums{}
	commented := make([]bool, n)
	for _, c := range ds.Comments {
		commented[c.Author], commented[c.Owner] = true, true
	}
	m.noData = make([]bool, n)
	for u := range m.noData {
		usr := &ds.Users[u]
		m.noData[u] = len(m.friends[u]) == 0 && len(m.groups[u]) == 0 && !commented[u] &&
			len(usr.Photos) == 0 && len(usr.Tags) == 0 && len(usr.Places) == 0 && len(usr.Faves) == 0
	}
	rng := rand.New(rand.NewPCG(seed, 0x7e1e))
	m.userTie, m.groupTie = rng.Perm(n), rng.Perm(len(ds.Groups))
}

// Stats returns how training went.
func (m *Model) Stats() Stats { return m.stats }

// Dataset returns the data set the model was trained on.
func (m *Model) Dataset() *social.Dataset { return m.ds }

// Score returns the social strength score f(u, v), the log-odds that u
// and v are friends on the balanced training sample (Strength corrects it
// to the population's rate). Scores of all users of u: ScoreAll.
func (m *Model) Score(u, v int) float64 { return m.strength.Score(u, v) }

// ScoreAll sets dst[v] = f(u, v) for every user v (dst of length N()).
func (m *Model) ScoreAll(u int, dst []float64) { m.strength.ScoreAll(u, dst) }

// StrengthModel returns the mklr model of f.
func (m *Model) StrengthModel() *mklr.Model { return m.strength }

// Combined returns the combined kernel sum_t theta_t K^t.
func (m *Model) Combined() kernelmath.KernelMatrix { return m.combined }

// FriendsOf returns u's visible friends, sorted.
func (m *Model) FriendsOf(u int) []int { return m.friends[u] }

// GroupsOf returns the groups u is visibly in, sorted.
func (m *Model) GroupsOf(u int) []int { return m.groups[u] }
