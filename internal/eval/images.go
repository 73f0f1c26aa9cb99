// Package eval runs the products' quality protocols on real data and prints
// their tables beside the papers' numbers.
package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/hsicnpk"
	"github.com/kernelrank/kernelrank/rerank"
	"github.com/kernelrank/kernelrank/search"
	"github.com/kernelrank/kernelrank/search/decision"
)

// ImagesConfig configures the image re-ranking protocol.
type ImagesConfig struct {
	// Data is a Mulan multi-label ARFF (its XML beside it, same stem) or a
	// JSONL corpus whose lines carry "labels"; empty means Corel5k in ../shared/data.
	Data       string
	Seed       int64
	Keep, Swap float64 // noisy-tag probabilities
	// NoisyJSONL makes a JSONL corpus's tags the seeded noisy copy of its
	// labels (Keep, Swap), as for a Mulan corpus; otherwise its own tags
	// are used as given.
	NoisyJSONL bool
	// Subset, when positive, keeps a seeded sample of that many images;
	// MaxTags, when positive, keeps a seeded choice of at most that many
	// tags an image. Both build harder corpora from one (few tags an
	// image, small windows).
	Subset, MaxTags int
	Window          int  // candidates per query (200)
	MinImages       int  // a label is a query when it has at least this many true images (40)
	Workers         int  // queries evaluated in parallel
	Quick           bool // one configuration per method (no validation grid): for tests
	// ServedOnly measures only the served rows (the text order, the
	// single served choice and the per-query decision), not every method.
	ServedOnly bool
	Progress   io.Writer
}

// Cutoffs are the N of the Top-N accuracy (Table 6.3).
var Cutoffs = []int{3, 5, 10, 20, 50, 100}

// Row is one number of the report.
type Row struct {
	Method  string  `json:"method"`
	Variant string  `json:"variant"`
	Metric  string  `json:"metric"`
	Value   float64 `json:"value"`
}

// ImagesReport is the outcome of the protocol.
type ImagesReport struct {
	Images, Validation, Tests int
	// MeanWindow is the mean number of candidates a query re-ranks.
	MeanWindow float64
	// Test and Val hold the mean Top-N accuracy of each method/variant on
	// the test and validation halves, with the configuration chosen on validation.
	Test, Val []Row
	Chosen    map[string]string // method/variant -> chosen parameters
	// Served is the served re-ranker's choice on the validation queries,
	// Decision the per-query decision fitted beside it.
	Served   search.Selection
	Decision *decision.Rule
	// Tags says where the tags came from: the noisy copy of the labels,
	// or a JSONL corpus's own.
	Tags string
}

// config is one kernel to evaluate: a strategy with parameters.
type config struct {
	method   string // reported name
	strategy string
	params   string
	variants []variant
}

// variantName names a variant as in the JSON rows: "clip/uniform-prior",
// with "full/" or "low-rank/" in front for the learned kernels.
func (c config) variantName(v variant) string {
	name := v.affinity + "/" + v.prior + "-prior"
	switch c.method {
	case "npk":
		name = "full/" + name
	case "npk-lowrank", "npk-lowrank-laplacian":
		name = "low-rank/" + name
	}
	return name
}

type variant struct{ prior, affinity string }

func variants(affinities ...string) []variant {
	var vs []variant
	for _, a := range affinities {
		for _, p := range rerank.Priors {
			vs = append(vs, variant{p, a})
		}
	}
	return vs
}

// grid lists every configuration; methods with several configurations get the
// one that is best on the validation half (by P@10), per variant.
func grid(quick bool) []config {
	parametric := variants("clip")
	learned := variants(rerank.Affinities...)
	cs := []config{
		{method: "text", strategy: "text", variants: parametric},
		{method: "linear", strategy: "linear", variants: parametric},
		{method: "intersection", strategy: "intersection", variants: parametric},
	}
	// The served re-ranker's settings (search.SelectSettings), so that it can reach these rows' choices.
	polys, rbfs := search.SelectSettings["poly"], search.SelectSettings["rbf"]
	var npks, lowranks []string
	for _, b := range []string{"0.1", "0.01", "0.03", "0.3", "1", "10"} {
		for _, c := range []string{"10", "1", "100"} {
			npks = append(npks, fmt.Sprintf(`{"budget":%s,"C":%s}`, b, c))
		}
		for _, m := range []string{"20", "10", "30"} {
			lowranks = append(lowranks, fmt.Sprintf(`{"rank":%s,"budget":%s}`, m, b))
		}
	}
	var fused, fusedLowRanks []string
	for _, v := range []string{"poly", "intersection"} {
		for _, b := range []string{"1", "0.1"} { // the defaults first: the quick grid's one
			for _, c := range []string{"1", "0.25", "4"} {
				fused = append(fused, fmt.Sprintf(`{"visual":%q,"budget":%s,"offset":%s}`, v, b, c))
			}
		}
	}
	var laplacians, fusedLaplacians []string // the thesis' low-rank basis (section 6.3.4)
	for _, m := range []string{"10", "20"} {
		fusedLowRanks = append(fusedLowRanks, fmt.Sprintf(`{"rank":%s}`, m))
		fusedLaplacians = append(fusedLaplacians, fmt.Sprintf(`{"rank":%s,"basis":"laplacian"}`, m))
		for _, b := range []string{"1", "0.1"} {
			laplacians = append(laplacians, fmt.Sprintf(`{"rank":%s,"budget":%s,"basis":"laplacian"}`, m, b))
		}
	}
	if quick {
		polys, rbfs, npks, lowranks, fused, fusedLowRanks = polys[:1], rbfs[:1], npks[:1], lowranks[:1], fused[:1], fusedLowRanks[:1]
		laplacians, fusedLaplacians = laplacians[:1], fusedLaplacians[:1]
	}
	for _, p := range polys {
		cs = append(cs, config{method: "poly", strategy: "poly", params: p, variants: parametric})
	}
	for _, p := range rbfs {
		cs = append(cs, config{method: "rbf", strategy: "rbf", params: p, variants: parametric})
	}
	for _, p := range npks {
		cs = append(cs, config{method: "npk", strategy: "npk", params: p, variants: learned})
	}
	for _, p := range lowranks {
		cs = append(cs, config{method: "npk-lowrank", strategy: "npk", params: p, variants: learned})
	}
	for _, p := range laplacians {
		cs = append(cs, config{method: "npk-lowrank-laplacian", strategy: "npk", params: p, variants: learned})
	}
	for _, p := range fused {
		cs = append(cs, config{method: hsicnpk.FusedName, strategy: hsicnpk.FusedName, params: p, variants: parametric})
	}
	for _, p := range fusedLowRanks {
		cs = append(cs, config{method: hsicnpk.FusedName + "-lowrank", strategy: hsicnpk.FusedName, params: p, variants: parametric})
	}
	for _, p := range fusedLaplacians {
		cs = append(cs, config{method: hsicnpk.FusedName + "-lowrank-laplacian", strategy: hsicnpk.FusedName, params: p, variants: parametric})
	}
	// Every other registered learner (the fixed strategies are above) that can learn a kernel from what a
	// query has (visual features, the tag kernel, base kernels), with its defaults.
	const has = learners.NeedFeatures | learners.NeedTarget | learners.NeedKernels
	for _, s := range learners.Specs() {
		if !s.Fixed && s.Name != hsicnpk.Name && s.Name != hsicnpk.FusedName && s.Needs&^has == 0 && (s.Kind == learners.KindKernel || s.Kind == learners.KindWeights) {
			cs = append(cs, config{method: s.Name, strategy: s.Name, variants: learned})
		}
	}
	return cs
}

// item is one image of the evaluation corpus.
type item struct {
	doc   index.Doc
	truth map[string]bool
}

// Images runs the protocol: noisy tags, a real bleve index, queries split into
// validation and test halves, every method's Top-N accuracy.
func Images(ctx context.Context, cfg ImagesConfig) (*ImagesReport, error) {
	if cfg.Window <= 0 {
		cfg.Window = 200
	}
	if cfg.MinImages <= 0 {
		cfg.MinImages = 40
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	items, labels, tags, err := loadLabelled(cfg)
	if err != nil {
		return nil, err
	}
	items, tags = reshape(items, tags, cfg)
	tmp, err := os.MkdirTemp("", "kernelrank-eval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	ix, err := index.Open(filepath.Join(tmp, "index"))
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	docs := make([]index.Doc, len(items))
	for i, it := range items {
		docs[i] = it.doc
	}
	fmt.Fprintf(progress, "indexing %d images\n", len(docs))
	if err := ix.Add(docs); err != nil {
		return nil, err
	}
	truthIdx := make([][]int, len(items))
	for i, it := range items {
		for l, name := range labels {
			if it.truth[name] {
				truthIdx[i] = append(truthIdx[i], l)
			}
		}
	}
	val, test := dataset.QuerySplit(truthIdx, len(labels), cfg.MinImages, cfg.Seed)
	if len(val)+len(test) == 0 {
		return nil, fmt.Errorf("no label has %d or more true images: nothing to query", cfg.MinImages)
	}
	truth := make(map[string]map[string]bool, len(items))
	for _, it := range items {
		truth[it.doc.ID] = it.truth
	}
	engine := search.New(ix, nil, search.Options{Window: cfg.Window})
	// The served row is the engine as a deployment runs it: its default
	// re-ranker chosen on the validation queries alone.
	fmt.Fprintf(progress, "choosing the served re-ranker on %d validation queries\n", len(val))
	valQueries := make([]search.LabelledQuery, len(val))
	for i, l := range val {
		valQueries[i] = search.LabelledQuery{Query: labels[l], Relevant: map[string]bool{}, Seed: cfg.Seed}
		for _, it := range items {
			if it.truth[labels[l]] {
				valQueries[i].Relevant[it.doc.ID] = true
			}
		}
	}
	selection, err := engine.SelectDefault(ctx, valQueries)
	if err != nil {
		return nil, fmt.Errorf("choosing the served re-ranker: %w", err)
	}
	var configs []config
	if !cfg.ServedOnly {
		configs = grid(cfg.Quick)
	}
	queries := append(append([]int(nil), val...), test...)
	// scores[q][config][variant] holds P@N for each cutoff.
	scores := make([][][][]float64, len(queries))
	unconverged := make([]int, len(configs))
	failed := make([]int, len(configs))
	random := make([][]float64, len(queries))
	raw := make([][]float64, len(queries))
	served := make([][]float64, len(queries))
	perQuery := make([][]float64, len(queries))
	ruled := make([][]float64, len(queries))
	jobs := make(chan int)
	errc := make(chan error, cfg.Workers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, windows := 0, 0
	for w := 0; w < cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for qi := range jobs {
				r, err := evalQuery(ctx, engine, labels[queries[qi]], truth, configs, cfg, int64(qi))
				if err != nil {
					errc <- fmt.Errorf("query %q: %w", labels[queries[qi]], err)
					return
				}
				scores[qi], random[qi], raw[qi], served[qi], perQuery[qi], ruled[qi] = r.byConfig, r.random, r.raw, r.served, r.perQuery, r.ruled
				mu.Lock()
				windows += r.window
				for ci := range configs {
					if r.unconverged[ci] {
						unconverged[ci]++
					}
					if r.failed[ci] {
						failed[ci]++
					}
				}
				done++
				fmt.Fprintf(progress, "\rqueries %d/%d", done, len(queries))
				mu.Unlock()
			}
		}()
	}
feed:
	for qi := range queries {
		select {
		case jobs <- qi:
		case err := <-errc:
			close(jobs)
			wg.Wait()
			return nil, err
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	fmt.Fprintln(progress)
	select {
	case err := <-errc:
		return nil, err
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := &ImagesReport{Images: len(items), Validation: len(val), Tests: len(test), Chosen: map[string]string{}, Tags: tags, Served: selection, Decision: engine.Decision(),
		MeanWindow: float64(windows) / float64(len(queries))}
	halves := func(per [][]float64) (v, t []float64) {
		return meanAt(per[:len(val)]), meanAt(per[len(val):])
	}
	addRows := func(method, variant string, v, t []float64) {
		for c, n := range Cutoffs {
			m := fmt.Sprintf("P@%d", n)
			rep.Val = append(rep.Val, Row{method, variant, m, v[c]})
			rep.Test = append(rep.Test, Row{method, variant, m, t[c]})
		}
	}
	v, t := halves(random)
	addRows("random", "window order shuffled", v, t)
	v, t = halves(raw)
	addRows("text order", "raw: not re-ranked", v, t)
	v, t = halves(served)
	addRows("served", fmt.Sprintf("chosen: %s%s/%s-prior", selection.Strategy, selection.Params, rerank.DefaultPrior), v, t)
	v, t = halves(perQuery)
	addRows("served, per-query", perQueryVariant(engine.Decision()), v, t)
	if d := engine.Decision(); d != nil && d.Alternative != nil {
		// What the adoption test kept out (or let in): the fitted rule
		// followed on every query whether adopted or not.
		v, t = halves(ruled)
		addRows("rule, if adopted", d.Text, v, t)
	}
	// Per method and variant, the configuration best on validation P@10.
	type key struct{ method, variant string }
	best := map[key]struct {
		val, test []float64
		params    string
	}{}
	var order []key
	for ci, c := range configs {
		for vi, vr := range c.variants {
			per := make([][]float64, len(queries))
			for qi := range queries {
				per[qi] = scores[qi][ci][vi]
			}
			v, t := halves(per)
			k := key{c.method, c.variantName(vr)}
			b, seen := best[k]
			if !seen {
				order = append(order, k)
			}
			if !seen || v[2] > b.val[2] {
				best[k] = struct {
					val, test []float64
					params    string
				}{v, t, describe(c.params, unconverged[ci], failed[ci], len(queries))}
			}
		}
	}
	for _, k := range order {
		b := best[k]
		addRows(k.method, k.variant, b.val, b.test)
		if b.params != "" {
			rep.Chosen[k.method+" "+k.variant] = b.params
		}
	}
	return rep, nil
}

type queryResult struct {
	byConfig    [][][]float64
	unconverged []bool // per config: the learner stopped short of its tolerance
	failed      []bool // per config: the learner rejected this query's input (ranked in text order)
	random, raw []float64
	served      []float64 // the server's single choice (SelectDefault's) with its default settings
	perQuery    []float64 // the server's answer to q alone: the per-query decision's re-ranker
	ruled       []float64 // the re-ranker the per-query rule picks, adopted or not
	window      int       // candidates re-ranked
}

func evalQuery(ctx context.Context, engine *search.Engine, label string, truth map[string]map[string]bool, configs []config, cfg ImagesConfig, qi int64) (*queryResult, error) {
	w, err := engine.Candidates(ctx, label, cfg.Window, cfg.Seed)
	if err != nil {
		return nil, err
	}
	cands := w.Candidates
	if len(cands) == 0 {
		// The text stage found nothing: every method scores 0 on this query.
		zero := make([]float64, len(Cutoffs))
		r := &queryResult{random: zero, raw: zero, served: zero, perQuery: zero, ruled: zero, byConfig: make([][][]float64, len(configs)),
			unconverged: make([]bool, len(configs)), failed: make([]bool, len(configs))}
		for ci, c := range configs {
			r.byConfig[ci] = make([][]float64, len(c.variants))
			for vi := range c.variants {
				r.byConfig[ci][vi] = zero
			}
		}
		return r, nil
	}
	rel := make([]bool, len(cands))
	pos := make(map[string]int, len(cands))
	for i, c := range cands {
		if c.Visual == nil {
			return nil, fmt.Errorf("image %s has no visual features", c.ID)
		}
		rel[i] = truth[c.ID][label]
		pos[c.ID] = i
	}
	at := func(order []int) []float64 {
		ranked := make([]bool, len(order))
		for i, o := range order {
			ranked[i] = rel[o]
		}
		out := make([]float64, len(Cutoffs))
		for c, n := range Cutoffs {
			out[c] = metrics.PrecisionAt(ranked, n)
		}
		return out
	}
	identity := make([]int, len(cands))
	for i := range identity {
		identity[i] = i
	}
	r := &queryResult{raw: at(identity), window: len(cands)}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(qi)+1))
	r.random = at(rng.Perm(len(cands)))
	// What the server answers to q with its defaults, over the same window:
	// its single choice, named, and the request that names none, which the
	// per-query decision answers when it is adopted.
	servedAt := func(named *decision.Choice) ([]float64, error) {
		req := search.DefaultRequest(label)
		req.K, req.Window, req.Seed = cfg.Window, cfg.Window, cfg.Seed
		if named != nil {
			req.Rerank.Strategy, req.Rerank.Params = named.Strategy, named.Params
		}
		resp, err := engine.Search(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("served: %w", err)
		}
		order := make([]int, len(resp.Results))
		for i, h := range resp.Results {
			order[i] = pos[h.ID]
		}
		return at(order), nil
	}
	var single *decision.Choice
	if sel := engine.Selection(); sel != nil {
		single = &decision.Choice{Strategy: sel.Strategy, Params: sel.Params}
	}
	if r.served, err = servedAt(single); err != nil {
		return nil, err
	}
	if r.perQuery, err = servedAt(nil); err != nil {
		return nil, err
	}
	r.ruled = r.served
	if rule := engine.Decision(); rule != nil && rule.Alternative != nil {
		forced := *rule
		forced.Adopted = true
		if d := forced.Decide(decision.Measure(cands)); d.Choice.String() != rule.Served.String() {
			if r.ruled, err = servedAt(&d.Choice); err != nil {
				return nil, err
			}
		}
	}
	r.byConfig = make([][][]float64, len(configs))
	r.unconverged = make([]bool, len(configs))
	r.failed = make([]bool, len(configs))
	for ci, c := range configs {
		var params json.RawMessage
		if c.params != "" {
			params = json.RawMessage(c.params)
		}
		// A learner that stops short still yields its best kernel (with
		// stats.Converged false): counted and reported, not fatal.
		k, stats, err := rerank.Kernel(ctx, cands, c.strategy, params)
		r.byConfig[ci] = make([][]float64, len(c.variants))
		if errors.Is(err, learners.ErrInput) {
			// This window is degenerate for the learner: the text order stands.
			r.failed[ci] = true
			for vi := range c.variants {
				r.byConfig[ci][vi] = r.raw
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", c.method, c.params, err)
		}
		r.unconverged[ci] = stats != nil && !stats.Converged
		for vi, v := range c.variants {
			vr, _, _ := rerank.Scores(k, cands, v.prior, v.affinity, rerank.DefaultDamping)
			order := append([]int(nil), identity...)
			sort.SliceStable(order, func(a, b int) bool { return vr[order[a]] > vr[order[b]] })
			r.byConfig[ci][vi] = at(order)
		}
	}
	return r, nil
}

// perQueryVariant describes the per-query decision's row: its rule, or
// that it was not adopted.
func perQueryVariant(r *decision.Rule) string {
	switch {
	case r == nil:
		return "no decision fitted"
	case !r.Adopted:
		return "not adopted: the single choice"
	default:
		return r.Text
	}
}

// describe names a configuration for the report, with how many of its fits
// did not converge or rejected their window.
func describe(params string, unconverged, failed, fits int) string {
	if unconverged > 0 {
		params += fmt.Sprintf(" (%d/%d fits unconverged)", unconverged, fits)
	}
	if failed > 0 {
		params += fmt.Sprintf(" (%d/%d windows rejected: text order)", failed, fits)
	}
	return params
}

func meanAt(per [][]float64) []float64 {
	out := make([]float64, len(Cutoffs))
	for c := range Cutoffs {
		xs := make([]float64, len(per))
		for q := range per {
			xs[q] = per[q][c]
		}
		out[c] = metrics.Mean(xs)
	}
	return out
}

// loadLabelled loads the corpus and its ground truth; for a Mulan corpus
// (and a JSONL one with NoisyJSONL) the tags are the seeded noisy copy of
// the true keywords.
func loadLabelled(cfg ImagesConfig) (items []item, labels []string, tags string, err error) {
	noisy := fmt.Sprintf("the noisy copy of the labels (keep %.2f, swap %.2f)", cfg.Keep, cfg.Swap)
	path := cfg.Data
	if path == "" {
		dir, ok := dataset.DataDir()
		if !ok {
			return nil, nil, "", errors.New("no --data given and ../shared/data not found (set KERNELRANK_SHARED_DATA)")
		}
		ml, err := dataset.LoadCorel5k(dir)
		if err != nil {
			return nil, nil, "", err
		}
		return fromMulan(ml, cfg), ml.LabelNames, noisy, nil
	}
	if strings.HasSuffix(path, ".arff") {
		xml := strings.TrimSuffix(path, ".arff") + ".xml"
		if strings.HasSuffix(path, "-sparse.arff") {
			xml = strings.TrimSuffix(path, "-sparse.arff") + ".xml"
		}
		ml, err := dataset.LoadMulan(path, xml)
		if err != nil {
			return nil, nil, "", err
		}
		return fromMulan(ml, cfg), ml.LabelNames, noisy, nil
	}
	if items, labels, err = loadJSONL(path); err != nil || !cfg.NoisyJSONL {
		return items, labels, "the corpus's own", err
	}
	noisyTags(items, labels, cfg)
	return items, labels, noisy, nil
}

// reshape applies cfg.Subset and cfg.MaxTags, seeded by cfg.Seed, and says
// so in the description of the tags.
func reshape(items []item, tags string, cfg ImagesConfig) ([]item, string) {
	if cfg.Subset > 0 && cfg.Subset < len(items) {
		rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5b5e7))
		keep := rng.Perm(len(items))[:cfg.Subset]
		sort.Ints(keep)
		sub := make([]item, len(keep))
		for i, k := range keep {
			sub[i] = items[k]
		}
		items = sub
		tags += fmt.Sprintf(", a sample of %d images", cfg.Subset)
	}
	if cfg.MaxTags > 0 {
		rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x7a95))
		for i := range items {
			t := items[i].doc.Tags
			if len(t) > cfg.MaxTags {
				rng.Shuffle(len(t), func(a, b int) { t[a], t[b] = t[b], t[a] })
				items[i].doc.Tags = t[:cfg.MaxTags]
			}
		}
		tags += fmt.Sprintf(", at most %d an image", cfg.MaxTags)
	}
	return items, tags
}

// noisyTags replaces the items' tags by the seeded noisy copy of their
// labels (sorted label names), as fromMulan does.
func noisyTags(items []item, labels []string, cfg ImagesConfig) {
	index := make(map[string]int, len(labels))
	for i, l := range labels {
		index[l] = i
	}
	truth := make([][]int, len(items))
	for i, it := range items {
		for _, l := range it.doc.Labels {
			truth[i] = append(truth[i], index[l])
		}
		sort.Ints(truth[i])
		truth[i] = slices.Compact(truth[i])
	}
	for i, tags := range dataset.NoisyTags(truth, cfg.Keep, cfg.Swap, cfg.Seed) {
		items[i].doc.Tags = items[i].doc.Tags[:0]
		for _, l := range tags {
			items[i].doc.Tags = append(items[i].doc.Tags, labels[l])
		}
	}
}

func fromMulan(ml *dataset.MultiLabel, cfg ImagesConfig) []item {
	noisy := dataset.NoisyTags(ml.Y, cfg.Keep, cfg.Swap, cfg.Seed)
	items := make([]item, len(ml.X))
	for i := range ml.X {
		it := item{truth: map[string]bool{}}
		it.doc.ID = fmt.Sprintf("img%05d", i)
		for _, l := range ml.Y[i] {
			it.truth[ml.LabelNames[l]] = true
		}
		for _, l := range noisy[i] {
			it.doc.Tags = append(it.doc.Tags, ml.LabelNames[l])
		}
		it.doc.Features = make([]float32, len(ml.X[i]))
		for j, v := range ml.X[i] {
			it.doc.Features[j] = float32(v)
		}
		items[i] = it
	}
	return items
}

// loadJSONL reads a corpus in the ingest format whose lines carry "labels"
// and "features" (run `kernelrank ingest` first to compute features from images).
func loadJSONL(path string) ([]item, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var items []item
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var d index.Doc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if len(d.Labels) == 0 || len(d.Features) == 0 {
			return nil, nil, fmt.Errorf("%s:%d: the evaluation needs \"labels\" and \"features\" on every line", path, line)
		}
		it := item{doc: d, truth: map[string]bool{}}
		for _, l := range d.Labels {
			it.truth[l] = true
			seen[l] = true
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	labels := make([]string, 0, len(seen))
	for l := range seen {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	return items, labels, nil
}

// PrintImages writes the report as the paper's table: Top-N accuracy in %,
// test half, with the reference points of the protocol for comparison.
func PrintImages(w io.Writer, rep *ImagesReport, cfg ImagesConfig) {
	fmt.Fprintf(w, "Image re-ranking, Top-N accuracy (%%), test half: %d images, %d validation / %d test queries, window %d (%.1f candidates a query on average), seed %d, tags: %s\n\n",
		rep.Images, rep.Validation, rep.Tests, cfg.Window, rep.MeanWindow, cfg.Seed, rep.Tags)
	fmt.Fprintf(w, "%-17s %-33s", "method", "variant")
	for _, n := range Cutoffs {
		fmt.Fprintf(w, " %6s", fmt.Sprintf("Top%d", n))
	}
	fmt.Fprintf(w, "  %8s  %s\n", "valTop10", "chosen on validation")
	for i := 0; i < len(rep.Test); i += len(Cutoffs) {
		r := rep.Test[i]
		fmt.Fprintf(w, "%-17s %-33s", r.Method, r.Variant)
		for c := range Cutoffs {
			fmt.Fprintf(w, " %6.1f", 100*rep.Test[i+c].Value)
		}
		fmt.Fprintf(w, "  %8.1f  %s\n", 100*rep.Val[i+2].Value, rep.Chosen[r.Method+" "+r.Variant])
	}
	fmt.Fprintf(w, "\nserved: %s%s (each re-ranker at its setting of highest validation P@%d; the first unless another gains more than %d standard errors over it; the text order unless the choice gains as much over it), validation P@%d (gain over the first):",
		rep.Served.Strategy, rep.Served.Params, search.SelectCutoff, search.SelectMargin, search.SelectCutoff)
	for i, s := range rep.Served.Settings {
		if i > 0 {
			fmt.Fprint(w, ",")
		}
		fmt.Fprintf(w, " %s%s %.1f (%+.1f ± %.1f)", s.Strategy, s.Params, 100*s.Precision, 100*s.Gain, 100*s.GainSE)
	}
	for _, name := range search.SelectCandidates {
		if why, ok := rep.Served.Skipped[name]; ok {
			fmt.Fprintf(w, "; %s skipped: %s", name, why)
		}
	}
	fmt.Fprintln(w)
	if d := rep.Decision; d != nil {
		fmt.Fprintf(w, "\nper-query decision: %s; %s\n", d.Text, d.Reason)
	}
	fmt.Fprint(w, "\nThesis Table 6.3 (Flickr, 20 queries), Top10: raw 46.0, text 59.0, linear 47.0, poly 52.0, rbf 58.5, npk 63.0.\n"+
		"Reference implementation of this protocol (Corel5k, seeds 1 / 7919, P@10, uniform prior): raw 53/54, text 64/62,\n"+
		"rbf 77/76, linear 92/91, intersection 93/95, npk clip 94/90, npk gauss 73/68, npk low rank clip 89/85.\n")
}
