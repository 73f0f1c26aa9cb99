package eval

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/simplenpkl"
)

// The learner protocols of Zhuang's thesis (shared/specs/zhuang-thesis-ch2-5.md
// 3.10, 4.5, 5.3; the UMKL paper's experiments, mao-pfskl-and-umkl.md B.9)
// on the data of ../shared/data, each table printed beside the published
// numbers. Methods are reached through the learner registry by name: one
// whose learner is not registered is reported as not available.

// LearnersConfig configures the learner protocols.
type LearnersConfig struct {
	Suite  string   // "zhuang", "mao" or "abbasnejad" (see Suites)
	Tables []string // table ids (see LearnerTables); empty runs them all
	Seed   int64
	// Reps overrides the spec's repetition counts when > 0.
	Reps int
	// Datasets are files (LIBSVM text, PMLB-style TSV with a "target"
	// column, or a CSV with the label first) that replace the default data
	// sets of the single-data-set protocols (every table but 3.7).
	Datasets []string
	// Methods restricts the columns to these methods (see LearnerMethods);
	// empty runs them all.
	Methods []string
	// Components says which sampled pairs join the connected components
	// that stop the pair sampling of Tables 3.2/3.3 (spec 3.10.1: all of
	// them, the zero value; the command's default is MustLinks).
	Components simplenpkl.Components
	// SimpleNPKLParams is a JSON object of SimpleNPKL parameters (all but
	// loss) for every fit of Tables 3.2/3.3, e.g. the thesis' values
	// {"B":1,"C":0.3,"graph_input":"features"}; empty keeps the learner's
	// defaults.
	SimpleNPKLParams string
	Workers          int // repetitions run in parallel (default 2)
	Progress         io.Writer
}

// LearnerRow is one number of the report. Accuracies are fractions in
// [0, 1]; Paper is the published number in the same unit, nil where the
// paper has none.
type LearnerRow struct {
	Table   string   `json:"table"`
	Dataset string   `json:"dataset"`
	Method  string   `json:"method"`
	Metric  string   `json:"metric"`
	Value   float64  `json:"value"`
	Std     float64  `json:"std"`
	Runs    int      `json:"runs"`
	Paper   *float64 `json:"paper"`
	// PaperStd is the published deviation where there is one (text output only).
	PaperStd float64 `json:"-"`
}

// Metrics of the rows.
const (
	metricAccuracy = "accuracy"      // pairwise accuracy (ch. 3) or test accuracy (ch. 4-5)
	metricSeconds  = "seconds"       // kernel-learning wall-clock time
	metricRank     = "rank"          // average rank over the data sets (1 is best)
	metricExponent = "time-exponent" // slope of log time on log N
)

// LearnersTable is the outcome of one table.
type LearnersTable struct {
	ID, Title string
	Reps      int
	Rows      []LearnerRow
	Notes     []string // methods not available, data sets missing, deviations met at run time
}

// LearnersReport is the outcome of the protocols.
type LearnersReport struct {
	Suite   string
	Seed    int64
	Workers int
	Tables  []*LearnersTable
}

// Rows returns the rows of every table in order.
func (r *LearnersReport) Rows() []LearnerRow {
	var out []LearnerRow
	for _, t := range r.Tables {
		out = append(out, t.Rows...)
	}
	return out
}

// protocol is a set of tables filled from the same runs.
type protocol struct {
	tables []tableInfo
	run    func(ctx context.Context, r *runner, out map[string]*LearnersTable) error
}

type tableInfo struct {
	id, title string
	reps      int // the spec's repetition count
}

var zhuangProtocols = []protocol{
	{tables: []tableInfo{
		{"3.2", "Table 3.2: clustering accuracy (pairwise, %) of kernel k-means on the learned kernel", 20},
		{"3.3", "Table 3.3: CPU time of kernel learning (s)", 20},
	}, run: runClustering},
	{tables: []tableInfo{
		{"3.7", "Table 3.7: scalability on Adult a1a (k = 50, B = N, C = 1): pairwise accuracy (%) and time (s) vs N", 20},
	}, run: runAdult},
	{tables: []tableInfo{
		{"4.2", "Table 4.2: test accuracy (%) of SVMs on learned kernels, 50/50 splits (rank among MKL methods, SVM excluded)", 20},
		{"5.2", "Table 5.2: test accuracy (%) of SVMs on learned kernels, 50/50 splits (UMKL learns without labels)", 20},
		{"5.3", "Table 5.3: 5-NN test accuracy (%) after KPCA to 2-D, 50/50 splits", 20},
	}, run: runMKL},
}

// suite is a set of protocols; methods and methodTables name its columns
// (for --method).
type suite struct {
	protocols    []protocol
	methods      func() []string
	methodTables func(method string) []string
}

// suites are the experiment suites by name: one per source document.
var suites = map[string]suite{
	"zhuang":     {zhuangProtocols, LearnerMethods, methodTables},
	"mao":        maoSuite,
	"abbasnejad": abbasnejadSuite,
}

// Suites lists the suite names.
func Suites() []string {
	names := make([]string, 0, len(suites))
	for name := range suites {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// tables lists the table ids of the suite in order (zhuang's also takes "a1a" for 3.7).
func (s suite) tables() []string {
	var ids []string
	for _, p := range s.protocols {
		for _, t := range p.tables {
			ids = append(ids, t.id)
		}
	}
	return ids
}

// LearnerTables lists the table ids in order (Learners also takes "a1a"
// for 3.7).
func LearnerTables() []string { return suites["zhuang"].tables() }

// SuiteTables lists the table ids of a suite in order (nil for an unknown one).
func SuiteTables(name string) []string { return suites[name].tables() }

// LearnerMethods lists the method (column) names of every table.
func LearnerMethods() []string {
	names := clusterMethods(clusterLosses)
	for _, ms := range [][]mklMethod{methods42, methods52, methods53} {
		for _, m := range ms {
			if !slices.Contains(names, m.name) {
				names = append(names, m.name)
			}
		}
	}
	return names
}

// methodTables returns the ids of the tables that have method as a column.
func methodTables(method string) []string {
	var ids []string
	if slices.Contains(clusterMethods(clusterLosses), method) {
		ids = append(ids, "3.2", "3.3")
	}
	if slices.Contains(clusterMethods(adultLosses), method) {
		ids = append(ids, "3.7")
	}
	for _, t := range []struct {
		id string
		ms []mklMethod
	}{{"4.2", methods42}, {"5.2", methods52}, {"5.3", methods53}} {
		if slices.ContainsFunc(t.ms, func(m mklMethod) bool { return m.name == method }) {
			ids = append(ids, t.id)
		}
	}
	return ids
}

// runner carries what the protocols share.
type runner struct {
	cfg      LearnersConfig
	dataDir  string // "" when ../shared/data is absent
	progress *progressBar
}

// Learners runs the requested tables.
func Learners(ctx context.Context, cfg LearnersConfig) (*LearnersReport, error) {
	suite, ok := suites[cfg.Suite]
	if !ok {
		return nil, fmt.Errorf("unknown suite %q: choose from %s", cfg.Suite, strings.Join(Suites(), ", "))
	}
	if cfg.Reps < 0 {
		return nil, fmt.Errorf("--reps %d: give a positive count (0 keeps the spec's)", cfg.Reps)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	want := map[string]bool{}
	for _, id := range cfg.Tables {
		if id == "a1a" {
			id = "3.7"
		}
		if !slices.Contains(suite.tables(), id) {
			return nil, fmt.Errorf("unknown table %q of suite %s: choose from %s", id, cfg.Suite, strings.Join(suite.tables(), ", "))
		}
		want[id] = true
	}
	for _, path := range cfg.Datasets {
		if _, err := sniffFormat(path); err != nil {
			return nil, fmt.Errorf("--dataset: %w", err)
		}
	}
	if err := checkSimpleNPKLParams(cfg.SimpleNPKLParams); err != nil {
		return nil, err
	}
	var methods []string // without repeats: --method m --method m runs m once
	if len(cfg.Methods) > 0 && len(suite.methods()) == 0 {
		return nil, fmt.Errorf("suite %s takes no --method: its tables run every column", cfg.Suite)
	}
	for _, m := range cfg.Methods {
		if !slices.Contains(suite.methods(), m) {
			return nil, fmt.Errorf("unknown method %q: choose from %s", m, strings.Join(suite.methods(), ", "))
		}
		in := suite.methodTables(m)
		if len(want) > 0 && !slices.ContainsFunc(in, func(id string) bool { return want[id] }) {
			return nil, fmt.Errorf("method %q is not a column of the tables asked for: it is in table %s", m, strings.Join(in, ", "))
		}
		if !slices.Contains(methods, m) {
			methods = append(methods, m)
		}
	}
	cfg.Methods = methods
	r := &runner{cfg: cfg, progress: newProgressBar(cfg.Progress, cfg.Seed)}
	if dir, ok := dataset.DataDir(); ok {
		r.dataDir = dir
	}
	rep := &LearnersReport{Suite: cfg.Suite, Seed: cfg.Seed, Workers: cfg.Workers}
	fmt.Fprintf(r.progress.w, "eval learners: suite %s, seed %d, %d workers\n", cfg.Suite, cfg.Seed, cfg.Workers)
	for _, p := range suite.protocols {
		out := map[string]*LearnersTable{}
		for _, t := range p.tables {
			if len(want) == 0 || want[t.id] {
				reps := t.reps
				if cfg.Reps > 0 {
					reps = cfg.Reps
				}
				out[t.id] = &LearnersTable{ID: t.id, Title: t.title, Reps: reps}
			}
		}
		if len(out) == 0 {
			continue
		}
		if err := p.run(ctx, r, out); err != nil {
			return nil, err
		}
		for _, t := range p.tables {
			if tb, ok := out[t.id]; ok {
				rep.Tables = append(rep.Tables, tb)
			}
		}
	}
	return rep, nil
}

// tableReps returns the repetition count shared by the tables of a protocol run.
func tableReps(out map[string]*LearnersTable) int {
	for _, t := range out {
		return t.Reps
	}
	return 0
}

// loadSets returns the given --dataset files, or else the built-in sets
// (loaded from the data directory) and the synthetic ones.
func (r *runner) loadSets(builtins []builtin, synthetic ...func(uint64) *labelled) ([]*labelled, error) {
	var sets []*labelled
	if len(r.cfg.Datasets) > 0 {
		seen := map[string]int{}
		for _, path := range r.cfg.Datasets {
			d, err := loadFile(path)
			if err != nil {
				return nil, fmt.Errorf("--dataset: %w", err)
			}
			// Two files of one name get distinct rows.
			if seen[d.name]++; seen[d.name] > 1 {
				d.name = fmt.Sprintf("%s#%d", d.name, seen[d.name])
			}
			sets = append(sets, d)
		}
		return sets, nil
	}
	if r.dataDir == "" {
		return nil, errNoData
	}
	for _, b := range builtins {
		d, err := loadBuiltin(r.dataDir, b)
		if err != nil {
			return nil, err
		}
		sets = append(sets, d)
	}
	for _, gen := range synthetic {
		sets = append(sets, gen(uint64(r.cfg.Seed)))
	}
	return sets, nil
}

// seedFor derives the seed of repetition rep of a protocol on a data set.
func (r *runner) seedFor(dataset string, rep int) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range []byte(dataset) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h ^ (uint64(r.cfg.Seed)*0x9e3779b97f4a7c15 + uint64(rep))
}

// parallel runs job(0..n-1) on the configured number of workers, ticking
// the progress bar after each job, and returns the first error.
func (r *runner) parallel(ctx context.Context, label string, n int, job func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.progress.start(label, n)
	defer r.progress.finish()
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for range r.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := job(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					continue
				}
				r.progress.tick()
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// measurement is one number of one repetition, for one table.
type measurement struct {
	table, dataset, method, metric string
	value                          float64
}

// aggregateRows turns the measurements of a table into rows (mean, sample
// deviation and count per data set, method and metric, in order of first
// appearance) with the published numbers attached.
func aggregateRows(table string, ms []measurement) []LearnerRow {
	type key struct{ dataset, method, metric string }
	var order []key
	values := map[key][]float64{}
	for _, s := range ms {
		if s.table != table {
			continue
		}
		k := key{s.dataset, s.method, s.metric}
		if _, ok := values[k]; !ok {
			order = append(order, k)
		}
		values[k] = append(values[k], s.value)
	}
	rows := make([]LearnerRow, 0, len(order))
	for _, k := range order {
		xs := values[k]
		rows = append(rows, withPaper(LearnerRow{Table: table, Dataset: k.dataset, Method: k.method, Metric: k.metric,
			Value: metrics.Mean(xs), Std: stdDev(xs), Runs: len(xs)}))
	}
	return rows
}

// meanRows adds, per method, the mean accuracy over the data sets on which
// every method has one (dataset "mean"), with the paper's mean over the same
// data sets when it has them all.
func meanRows(table string, rows []LearnerRow) []LearnerRow {
	var methods, datasets []string
	cell := map[[2]string]LearnerRow{}
	for _, r := range rows {
		if r.Metric != metricAccuracy {
			continue
		}
		if !slices.Contains(methods, r.Method) {
			methods = append(methods, r.Method)
		}
		if !slices.Contains(datasets, r.Dataset) {
			datasets = append(datasets, r.Dataset)
		}
		cell[[2]string{r.Dataset, r.Method}] = r
	}
	datasets = slices.DeleteFunc(datasets, func(ds string) bool {
		return slices.ContainsFunc(methods, func(m string) bool { _, ok := cell[[2]string{ds, m}]; return !ok })
	})
	if len(datasets) == 0 {
		return nil
	}
	var out []LearnerRow
	for _, m := range methods {
		var ours, paper []float64
		for _, ds := range datasets {
			c := cell[[2]string{ds, m}]
			ours = append(ours, c.Value)
			if c.Paper != nil {
				paper = append(paper, *c.Paper)
			}
		}
		row := LearnerRow{Table: table, Dataset: "mean", Method: m, Metric: metricAccuracy, Value: metrics.Mean(ours), Runs: len(ours)}
		if len(paper) == len(ours) {
			v := metrics.Mean(paper)
			row.Paper = &v
		}
		out = append(out, row)
	}
	return out
}

// repResult is what one repetition measured.
type repResult struct {
	measured    []measurement
	unconverged []fitEvent // fits that stopped at their iteration cap
	failed      []fitEvent // fits that returned an error
}

// fitEvent is a learner fit worth a note, for the table it served.
type fitEvent struct {
	table, method, params string
	err                   error // nil for a fit that stopped at its iteration cap
}

// collectReps gathers the measurements of the repetitions in order, and
// notes on the fits for table ("" for every table) that stopped at their
// iteration cap or failed.
func collectReps(results []repResult, table string) ([]measurement, []string) {
	var ms []measurement
	unconverged := map[string]int{}
	failed := map[string]int{}
	example := map[string]error{}
	for _, r := range results {
		ms = append(ms, r.measured...)
		for _, e := range r.unconverged {
			if table == "" || e.table == table {
				unconverged[e.method]++
			}
		}
		for _, e := range r.failed {
			if table == "" || e.table == table {
				key := e.method + " " + e.params
				failed[key]++
				if example[key] == nil {
					example[key] = e.err
				}
			}
		}
	}
	var notes []string
	for _, m := range sortedCounts(unconverged) {
		notes = append(notes, fmt.Sprintf("%s: %d fits stopped at their iteration cap (their best output is used)", m, unconverged[m]))
	}
	for _, k := range sortedCounts(failed) {
		notes = append(notes, fmt.Sprintf("%s: %d fits failed and were left out (first error: %v)", k, failed[k], example[k]))
	}
	return ms, notes
}

// safeFit runs a learner, turning a panic inside it into an error, so that a
// bug in one learner is reported in the notes and the run goes on.
func safeFit(ctx context.Context, l learners.Learner, in *learners.Input) (out *learners.Output, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("learner panicked: %v", p)
		}
	}()
	return l.Fit(ctx, in)
}

// withPaper attaches the published number of the row's cell, if any.
func withPaper(row LearnerRow) LearnerRow {
	if c, ok := paperIndex[paperKey{row.Table, row.Dataset, row.Method, row.Metric}]; ok {
		v := c.mean
		row.Paper, row.PaperStd = &v, c.std
	}
	return row
}

// stdDev is the sample standard deviation (n-1, as MATLAB's std); 0 for one value.
func stdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := metrics.Mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// averageRanks ranks the methods on every data set that has all of them
// (1 = highest value; ties share the better rank, as the thesis' Table 4.2)
// and returns the mean rank of each method with the number of data sets
// ranked. value reports a method's number on a data set.
func averageRanks(datasets, methods []string, value func(dataset, method string) (float64, bool)) ([]float64, int) {
	sum := make([]float64, len(methods))
	ranked := 0
	for _, ds := range datasets {
		vals := make([]float64, len(methods))
		complete := true
		for m, method := range methods {
			v, ok := value(ds, method)
			complete = complete && ok
			vals[m] = v
		}
		if !complete {
			continue
		}
		ranked++
		for m := range methods {
			better := 0
			for o := range methods {
				if vals[o] > vals[m] {
					better++
				}
			}
			sum[m] += float64(better + 1)
		}
	}
	if ranked == 0 {
		return nil, 0
	}
	for m := range sum {
		sum[m] /= float64(ranked)
	}
	return sum, ranked
}

// rankRows adds the average-rank rows of methods over the data sets of
// rows, measured and published (the published ranks recomputed over the
// same data sets and methods, so that they compare).
func rankRows(table string, rows []LearnerRow, methods []string) ([]LearnerRow, string) {
	var datasets []string
	measured := map[[2]string]float64{}
	published := map[[2]string]float64{}
	for _, r := range rows {
		if r.Metric != metricAccuracy || !slices.Contains(methods, r.Method) {
			continue
		}
		if !slices.Contains(datasets, r.Dataset) {
			datasets = append(datasets, r.Dataset)
		}
		measured[[2]string{r.Dataset, r.Method}] = r.Value
		if r.Paper != nil {
			published[[2]string{r.Dataset, r.Method}] = *r.Paper
		}
	}
	lookup := func(m map[[2]string]float64) func(string, string) (float64, bool) {
		return func(ds, method string) (float64, bool) { v, ok := m[[2]string{ds, method}]; return v, ok }
	}
	ours, n := averageRanks(datasets, methods, lookup(measured))
	paper, np := averageRanks(datasets, methods, lookup(published))
	if n == 0 {
		return nil, ""
	}
	var out []LearnerRow
	for m, method := range methods {
		row := LearnerRow{Table: table, Dataset: "avg-rank", Method: method, Metric: metricRank, Value: ours[m], Runs: n}
		if np > 0 {
			v := paper[m]
			row.Paper = &v
		}
		out = append(out, row)
	}
	note := fmt.Sprintf("average ranks over %d data sets among %s; the paper's recomputed over the %d of them it has", n, strings.Join(methods, ", "), np)
	return out, note
}

// selected reports whether --method lets method run.
func (r *runner) selected(method string) bool {
	return len(r.cfg.Methods) == 0 || slices.Contains(r.cfg.Methods, method)
}

// availability returns the methods that are selected and whose learner is
// registered, with a "not available" note for each selected one that is not.
func (r *runner) availability(methods []string, learnerOf func(string) string) (available []string, notes []string) {
	for _, m := range methods {
		if !r.selected(m) {
			continue
		}
		name := learnerOf(m)
		if name == "" {
			available = append(available, m)
			continue
		}
		if _, ok := learners.Lookup(name); ok {
			available = append(available, m)
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: not available (no learner %q is registered): column skipped", m, name))
	}
	return available, notes
}

// progressBar draws one line on stderr per protocol run: a bar, the count
// of repetitions done, the elapsed time and the seed (so that a line of a
// log says how to rerun it).
type progressBar struct {
	w     io.Writer
	seed  int64
	mu    sync.Mutex
	label string
	done  int
	total int
	begin time.Time
}

func newProgressBar(w io.Writer, seed int64) *progressBar {
	if w == nil {
		w = io.Discard
	}
	return &progressBar{w: w, seed: seed}
}

func (p *progressBar) start(label string, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.label, p.done, p.total, p.begin = label, 0, total, time.Now()
	p.draw()
}

func (p *progressBar) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.draw()
}

func (p *progressBar) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w)
}

func (p *progressBar) draw() {
	const width = 30
	fill := 0
	if p.total > 0 {
		fill = width * p.done / p.total
	}
	fmt.Fprintf(p.w, "\r%-34s [%s%s] %d/%d %s seed %d", p.label, strings.Repeat("#", fill), strings.Repeat(".", width-fill),
		p.done, p.total, time.Since(p.begin).Round(time.Second), p.seed)
}

// sortedCounts returns the keys of a count map in order, for stable notes.
func sortedCounts(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
