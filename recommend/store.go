package recommend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/mklr"
	"github.com/kernelrank/kernelrank/social"
)

// A stored model is a version of a cache.Store model named by StoreName,
// in parts: "meta", a small JSON document (the settings, the data version,
// the kernel weights, the offset, the strength model's scalars and stats,
// the chosen friend and group scorers, the creation time), and numeric arrays as cache values: the imports
// (int32, |S| x 2), their coefficients and the base kernels' terms
// (float64), and with WithTop the precomputed top-k (int32 indices,
// float64 scores, n x k). The n x n kernels are not stored: Load rebuilds
// them from the data set, as Train builds them (deterministic given the
// seed), and the strength model's features from their rows.
const (
	partMeta            = "meta"
	partImports         = "imports"
	partAlpha           = "alpha"
	partBaseWeights     = "base_weights"
	partTopFriends      = "top_friends"
	partTopFriendScores = "top_friend_scores"
	partTopGroups       = "top_groups"
	partTopGroupScores  = "top_group_scores"
	layoutVersion       = 2 // 2: GroupLearned's weights multiply the signals as they are
	checkPairs          = 8 // imports whose scores meta records and Load compares
	checkTol            = 1e-9
)

// ErrDataVersion is returned by Load for a model trained on other data
// than the data set given.
var ErrDataVersion = errors.New("the model was trained on another version of the data")

// settings are the options that make a model: StoreName hashes them and
// the meta part records them. Options.Log and DenseMax make no model and
// are left out.
type settings struct {
	Learner   string               `json:"learner"`
	Params    json.RawMessage      `json:"params,omitempty"`
	Target    Target               `json:"target"`
	Kernels   social.KernelOptions `json:"kernels"`
	MKLR      mklrSettings         `json:"mklr"`
	Negatives mklr.NegativeOptions `json:"negatives"`
	Pairs     int                  `json:"strength_pairs"`
	Select    SelectOptions        `json:"select"`
	Seed      uint64               `json:"seed"`
}

// mklrSettings are mklr.Options without Base.
type mklrSettings struct {
	Pair        mklr.PairKernel `json:"pair"`
	C           float64         `json:"c"`
	MaxImport   int             `json:"max_import"`
	Candidates  int             `json:"candidates"`
	Tol         float64         `json:"tol"`
	NoIntercept bool            `json:"no_intercept"`
	KernelTerm  bool            `json:"kernel_term"`
	Seed        uint64          `json:"seed"`
}

// settingsOf returns the settings of opts, defaults applied.
func settingsOf(opts Options) (settings, error) {
	opts.defaults()
	mo, err := mklrOptions(opts)
	if err != nil {
		return settings{}, err
	}
	st := settings{Learner: opts.Learner, Target: opts.Target, Kernels: opts.Kernels, Negatives: opts.Negatives, Pairs: opts.StrengthPairs, Select: opts.Select, Seed: opts.Seed,
		MKLR: mklrSettings{mo.Pair, mo.C, mo.MaxImport, mo.Candidates, mo.Tol, mo.NoIntercept, mo.KernelTerm, mo.Seed}}
	if len(opts.Params) > 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, opts.Params); err != nil {
			return st, fmt.Errorf("%w: parameters of %s: %w", ErrLearner, opts.Learner, err)
		}
		st.Params = b.Bytes()
	}
	return st, nil
}

// StoreName returns the name under which the models trained with opts are
// stored: "social/<learner>/<hash of the settings>". Models of one name
// differ only in the data they were trained on and when.
func StoreName(opts Options) (string, error) {
	st, err := settingsOf(opts)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	return "social/" + st.Learner + "/" + cache.Hash(b), nil
}

// meta is the JSON part of a stored model.
type meta struct {
	Layout      int             `json:"layout"`
	Settings    settings        `json:"settings"`
	DataVersion string          `json:"data_version"`
	Users       int             `json:"users"`
	Groups      int             `json:"groups"`
	Stats       Stats           `json:"stats"` // Stats.Weights: the kernel weights, in order
	Offset      float64         `json:"offset"`
	Pair        mklr.PairKernel `json:"pair"`
	Bias        float64         `json:"bias"`
	KernelTerm  bool            `json:"kernel_term"`
	Gamma       float64         `json:"gamma"`
	Strength    mklr.Stats      `json:"strength_stats"`
	// Scorer ranks friends (Scorers); a model stored before the choice
	// existed has none and ranks by mklr.
	Scorer string `json:"scorer,omitempty"`
	// GroupScorer ranks groups (GroupScorers), with GroupWeights for
	// GroupLearned; a model stored before the choice existed has none and
	// ranks by mklr.
	GroupScorer  string    `json:"group_scorer,omitempty"`
	GroupWeights []float64 `json:"group_weights,omitempty"`
	GroupPerUser bool      `json:"group_per_user,omitempty"`
	// Check holds f at the first imports; Load compares the rebuilt
	// model's scores with them.
	Check []float64 `json:"check"`
	TopK  int       `json:"top_k"` // 0: no precomputed top-k
	// Shards, in a staged model (StagedName), is how its lists are to be
	// precomputed.
	Shards  *shardPlan `json:"shards,omitempty"`
	Created time.Time  `json:"created"`
}

// DataVersion returns the version (social.Dataset.Version) of the data
// set the model was trained on.
func (m *Model) DataVersion() string { return m.dataVersion }

// Version returns the store version the model was published (or loaded)
// as; "" for a model that was not stored.
func (m *Model) Version() string { return m.version }

// Encode returns the parts of the model for cache.Store.Write. Only a
// model trained on all of its data set's relations (FullView) can be
// stored: Load rebuilds it from the data set.
func (m *Model) Encode() (map[string][]byte, error) { return m.encode(nil) }

// encode is Encode, recording plan (may be nil) in the meta part.
func (m *Model) encode(plan *shardPlan) (map[string][]byte, error) {
	if !m.full {
		return nil, errors.New("recommend: only a model trained on the full view of its data set can be stored")
	}
	st := m.strength.State()
	md := meta{Layout: layoutVersion, Settings: m.settings, DataVersion: m.DataVersion(), Users: m.ds.N(), Groups: len(m.ds.Groups),
		Stats: m.stats, Offset: m.offset, Pair: st.Pair, Bias: st.Bias, KernelTerm: st.KernelTerm, Gamma: st.Gamma,
		Strength: st.Stats, Scorer: m.scorer, GroupScorer: m.groupScorer, GroupWeights: m.groupWeights, GroupPerUser: m.groupPerUser, Shards: plan, Created: time.Now().UTC()}
	for _, p := range st.Imports[:min(len(st.Imports), checkPairs)] {
		md.Check = append(md.Check, m.Score(p.I, p.J))
	}
	imports := make([]int32, 0, 2*len(st.Imports))
	for _, p := range st.Imports {
		imports = append(imports, int32(p.I), int32(p.J))
	}
	values := map[string]cache.Value{
		partImports:     {Kind: cache.Int32, Shape: []int{len(st.Imports), 2}, I32: imports},
		partAlpha:       {Kind: cache.Float64, Shape: []int{len(st.Alpha)}, F64: st.Alpha},
		partBaseWeights: {Kind: cache.Float64, Shape: []int{len(st.BaseWeights)}, F64: st.BaseWeights},
	}
	if m.top != nil {
		md.TopK = m.top.friends.k
		m.top.values(values, m.ds.N())
	}
	if err := metaValue(values, md); err != nil {
		return nil, err
	}
	return encodeValues(values)
}

// metaValue adds the meta part md to values.
func metaValue(values map[string]cache.Value, md meta) error {
	js, err := json.Marshal(md)
	if err != nil {
		return err
	}
	values[partMeta] = cache.Value{Kind: cache.Bytes, Shape: []int{len(js)}, Bytes: js}
	return nil
}

// values adds the lists' parts to values: rows x k arrays.
func (p *precomputed) values(values map[string]cache.Value, rows int) {
	for name, l := range map[[2]string]*topList{{partTopFriends, partTopFriendScores}: &p.friends, {partTopGroups, partTopGroupScores}: &p.groups} {
		values[name[0]] = cache.Value{Kind: cache.Int32, Shape: []int{rows, l.k}, I32: l.items}
		values[name[1]] = cache.Value{Kind: cache.Float64, Shape: []int{rows, l.k}, F64: l.scores}
	}
}

// encodeValues encodes every value of a stored model's parts.
func encodeValues(values map[string]cache.Value) (map[string][]byte, error) {
	parts := make(map[string][]byte, len(values))
	for name, v := range values {
		var err error
		if parts[name], err = cache.Encode(v); err != nil {
			return nil, fmt.Errorf("recommend: part %s: %w", name, err)
		}
	}
	return parts, nil
}

// Load reads version of the stored model name and rebuilds it over ds,
// whose Version is dataVersion: the base kernels as Train built them, the
// combined kernel and the strength model, then checks the rebuilt scores
// against the stored ones. Errors: ErrDataVersion (trained on other data),
// cache.ErrMiss (a part is missing), cache.ErrCorrupt (a part fails its
// checksum or is truncated), or a part that does not fit the data set;
// each says which part.
func Load(ctx context.Context, store cache.Store, name, version string, ds *social.Dataset, dataVersion string) (*Model, error) {
	where := fmt.Sprintf("recommend: %s version %s", name, version)
	read := func(part string, kind cache.Kind, dims ...int) (cache.Value, error) {
		return readPart(ctx, store, name, version, part, kind, dims...)
	}
	md, err := readMeta(ctx, store, name, version)
	if err != nil {
		return nil, err
	}
	switch {
	case md.Layout != layoutVersion:
		return nil, fmt.Errorf("%s: layout %d, want %d", where, md.Layout, layoutVersion)
	case md.DataVersion != dataVersion:
		return nil, fmt.Errorf("%s: %w: trained on data version %s, the data set is version %s", where, ErrDataVersion, md.DataVersion, dataVersion)
	case md.Users != ds.N() || md.Groups != len(ds.Groups):
		return nil, fmt.Errorf("%s: %d users and %d groups, the data set has %d and %d", where, md.Users, md.Groups, ds.N(), len(ds.Groups))
	}
	imp, err := read(partImports, cache.Int32, -1, 2)
	if err != nil {
		return nil, err
	}
	alpha, err := read(partAlpha, cache.Float64, imp.Shape[0])
	if err != nil {
		return nil, err
	}
	baseW, err := read(partBaseWeights, cache.Float64, len(md.Stats.Weights))
	if err != nil {
		return nil, err
	}
	m := &Model{ds: ds, settings: md.Settings, stats: md.Stats, offset: md.Offset, full: true, dataVersion: dataVersion, version: version}
	if m.scorer, err = checkScorer(md.Scorer); err != nil {
		return nil, fmt.Errorf("%s: part meta: %w", where, err)
	}
	if m.groupScorer, err = checkGroupScorer(md.GroupScorer, md.GroupWeights); err != nil {
		return nil, fmt.Errorf("%s: part meta: %w", where, err)
	}
	m.groupWeights, m.groupPerUser = md.GroupWeights, md.GroupPerUser
	if err := m.rebuildKernels(ctx, ds.FullView()); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	st := mklr.State{Pair: md.Pair, Alpha: alpha.F64, Bias: md.Bias, KernelTerm: md.KernelTerm, Gamma: md.Gamma, Stats: md.Strength}
	if len(baseW.F64) > 0 {
		st.BaseWeights = baseW.F64
	}
	for s := range imp.Shape[0] {
		st.Imports = append(st.Imports, learners.Pair{I: int(imp.I32[2*s]), J: int(imp.I32[2*s+1])})
	}
	if m.strength, err = mklr.FromState(st, m.combined, m.baseKernels()); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	for s, want := range md.Check {
		p := st.Imports[s]
		if got := m.Score(p.I, p.J); !(math.Abs(got-want) <= checkTol*math.Max(1, math.Abs(want))) {
			return nil, fmt.Errorf("%s: the rebuilt model scores import (%d, %d) %v, the trained one %v: the kernels were not rebuilt as trained", where, p.I, p.J, got, want)
		}
	}
	m.index(ds.FullView(), md.Settings.Seed)
	if md.TopK > 0 {
		m.top = &precomputed{}
		for _, l := range []struct {
			items, scores string
			k             int
			dst           *topList
			limit         int
		}{{partTopFriends, partTopFriendScores, md.TopK, &m.top.friends, ds.N()}, {partTopGroups, partTopGroupScores, min(md.TopK, len(ds.Groups)), &m.top.groups, len(ds.Groups)}} {
			iv, err := read(l.items, cache.Int32, ds.N(), l.k)
			if err != nil {
				return nil, err
			}
			sv, err := read(l.scores, cache.Float64, ds.N(), l.k)
			if err != nil {
				return nil, err
			}
			if i := slices.IndexFunc(iv.I32, func(x int32) bool { return x < -1 || int(x) >= l.limit }); i >= 0 {
				return nil, fmt.Errorf("%s: part %s holds %d at %d, outside [-1, %d)", where, l.items, iv.I32[i], i, l.limit)
			}
			*l.dst = topList{k: l.k, items: iv.I32, scores: sv.F64}
		}
	}
	return m, nil
}

// readPart reads and decodes part of version of the stored model name,
// checking its kind and dimensions (-1: any); its errors say which part.
func readPart(ctx context.Context, store cache.Store, name, version, part string, kind cache.Kind, dims ...int) (cache.Value, error) {
	where := fmt.Sprintf("recommend: %s version %s: part %s", name, version, part)
	b, err := store.Read(ctx, name, version, part)
	if err != nil {
		return cache.Value{}, fmt.Errorf("%s: %w", where, err)
	}
	v, err := cache.Decode(b)
	if err != nil {
		return cache.Value{}, fmt.Errorf("%s: %w", where, err)
	}
	if v.Kind != kind || len(v.Shape) != len(dims) {
		return cache.Value{}, fmt.Errorf("%s holds %v of shape %v, want %v of %d dimensions", where, v.Kind, v.Shape, kind, len(dims))
	}
	for i, d := range dims {
		if d >= 0 && v.Shape[i] != d {
			return cache.Value{}, fmt.Errorf("%s has shape %v, want %v (-1: any)", where, v.Shape, dims)
		}
	}
	return v, nil
}

// readMeta reads the meta part of a stored model's version.
func readMeta(ctx context.Context, store cache.Store, name, version string) (meta, error) {
	var md meta
	mv, err := readPart(ctx, store, name, version, partMeta, cache.Bytes, -1)
	if err != nil {
		return md, err
	}
	if err := json.Unmarshal(mv.Bytes, &md); err != nil {
		return md, fmt.Errorf("recommend: %s version %s: part meta: %w", name, version, err)
	}
	return md, nil
}

// rebuildKernels builds the base kernels over view as Train did and
// combines them with the weights m.stats.Weights, checking that the same
// kernels came out.
func (m *Model) rebuildKernels(ctx context.Context, view social.View) error {
	kernels, err := social.BuildKernels(ctx, m.ds, view, m.settings.Kernels)
	if err != nil {
		return err
	}
	base, _, regLap, err := split(kernels, view, m.ds.N(), m.settings.Target)
	if err != nil {
		return err
	}
	m.regLap = regLap
	if len(base) != len(m.stats.Weights) {
		return fmt.Errorf("the data gives %d base kernels, the model has %d weights", len(base), len(m.stats.Weights))
	}
	m.kernels, m.weights = base, make([]float64, len(base))
	for t, w := range m.stats.Weights {
		if base[t].Name != w.Kernel {
			return fmt.Errorf("kernel %d is %s, the model's is %s", t, base[t].Name, w.Kernel)
		}
		m.weights[t] = w.Weight
	}
	m.combined, err = kernelmath.NewKernelSum(m.weights, m.baseKernels())
	return err
}

// baseKernels returns the base kernels' matrices, in weight order.
func (m *Model) baseKernels() []kernelmath.KernelMatrix {
	ks := make([]kernelmath.KernelMatrix, len(m.kernels))
	for t, k := range m.kernels {
		ks[t] = k.K
	}
	return ks
}
