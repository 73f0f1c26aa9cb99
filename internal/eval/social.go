package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

// SocialConfig configures the friend and group recommendation protocol.
type SocialConfig struct {
	// Data is a directory in the documented import format, or ego-Facebook or
	// BlogCatalog as they lie in ../shared/data; empty means ego-Facebook.
	Data     string
	Seed     int64
	Mode     social.Mode // kernel preprocessing: thesis or default
	MaxUsers int         // test users per task, a seeded sample (0: all)
	// Variant transforms the data set before the protocol: "" (none) or
	// VariantTagsFaves.
	Variant string
	// Tasks lists the tasks run, "friends" and/or "groups" (empty: both).
	// A skipped friend task still makes its random draws, so the group
	// task's split is the same either way.
	Tasks []string
	// Learners lists the kernel-combination learners whose recommenders
	// give the rows NAME+mklr (and alignf's combined kernel alone the row
	// alignf); empty means alignf and uniform.
	Learners []string
	Workers  int
	Progress io.Writer
}

// SocialRow is one number of the report, as in the JSON output.
type SocialRow struct {
	Task   string  `json:"task"`
	Method string  `json:"method"`
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
}

// KernelWeight is one learned kernel weight (Table 7.3).
type KernelWeight struct {
	Task, Method, Kernel string
	Weight               float64
}

// SocialReport is the outcome of the protocol.
type SocialReport struct {
	Format          string
	Mode            social.Mode
	Users, Groups   int
	Friendships     int
	HiddenFriends   int
	HiddenMembers   int
	FriendTestUsers int
	GroupTestUsers  int
	Rows            []SocialRow
	Weights         []KernelWeight
	// Served is how the served model (the friends task's "served" row)
	// chose its friend scorer on its own training friendships;
	// ServedGroups how the groups task's chose its group scorer on its
	// own training memberships.
	Served           recommend.Selection
	ServedGroups     recommend.GroupSelection
	Notes            []string
	alignfRegistered bool
}

// SocialMetrics are the metrics of the protocol, in report order.
var SocialMetrics = []string{"P@1", "P@10", "R@10", "NDCG@10", "MAP"}

// scorer fills score[v] for every candidate v of user u (higher is better),
// or, when order is set, ranks the candidates itself (best first).
type scorer struct {
	name  string
	score func(u int, score []float64)
	order func(u int) ([]int, error)
}

// Social runs the social recommendation protocol: hide 10% of the friendships
// (each end keeping at least 2 visible friends) and rank every other
// non-friend for each user with a hidden friend; hide 20% of the memberships
// and rank the groups each user is not visibly in. Ties are broken by a
// seeded permutation of the users (groups), never by index.
func Social(ctx context.Context, cfg SocialConfig) (*SocialReport, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Mode == "" {
		cfg.Mode = social.ModeDefault
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	ds, err := loadSocial(cfg.Data, "ego-facebook")
	if err != nil {
		return nil, err
	}
	switch cfg.Variant {
	case "":
	case VariantTagsFaves:
		ds = TagsFaves(ds)
	default:
		return nil, fmt.Errorf("unknown variant %q (%s)", cfg.Variant, VariantTagsFaves)
	}
	rep := &SocialReport{Format: ds.Format, Mode: cfg.Mode, Users: ds.N(), Groups: len(ds.Groups), Friendships: len(ds.Friends)}
	_, rep.alignfRegistered = learners.Lookup("alignf")
	if !rep.alignfRegistered {
		rep.Notes = append(rep.Notes, "alignf is not registered: its rows are missing")
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x50c1a1))
	run := func(task string) bool { return len(cfg.Tasks) == 0 || slices.Contains(cfg.Tasks, task) }
	if run("friends") {
		if err := friendTask(ctx, ds, cfg, rng, rep, progress); err != nil {
			return nil, err
		}
	} else {
		friendSplit(ds, cfg, rng)
	}
	if len(ds.Groups) > 0 && run("groups") {
		if err := groupTask(ctx, ds, cfg, rng, rep, progress); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// loadSocial reads the social data in dir, or when dir is empty the data
// set of ../shared/data/social named def.
func loadSocial(dir, def string) (*social.Dataset, error) {
	if dir == "" {
		root, ok := dataset.DataDir()
		if !ok {
			return nil, errors.New("no --data given and ../shared/data not found (set KERNELRANK_SHARED_DATA)")
		}
		dir = filepath.Join(root, "social", def)
	}
	ds, _, err := social.LoadDir(dir, social.ImportOptions{})
	return ds, err
}

// hideFriends hides frac of the friendships for testing (social.HoldOut).
func hideFriends(n int, friends [][2]int, frac float64, rng *rand.Rand) (visible, hidden [][2]int) {
	return social.HoldOut(n, friends, int(frac*float64(len(friends))), rng)
}

func adjacency(n int, edges [][2]int) [][]int {
	adj := make([][]int, n)
	for _, e := range edges {
		adj[e[0]] = append(adj[e[0]], e[1])
		adj[e[1]] = append(adj[e[1]], e[0])
	}
	for _, a := range adj {
		slices.Sort(a)
	}
	return adj
}

// graphScorers are the neighbourhood baselines on the visible graph.
func graphScorers(adj [][]int) []scorer {
	aa := func(w int) float64 { return 1 / math.Log(math.Max(2, float64(len(adj[w])))) }
	common := func(u int, score []float64, weight func(w int) float64) {
		clear(score)
		for _, w := range adj[u] {
			x := weight(w)
			for _, v := range adj[w] {
				score[v] += x
			}
		}
	}
	return []scorer{
		{name: "common-neighbours", score: func(u int, score []float64) { common(u, score, func(int) float64 { return 1 }) }},
		{name: "adamic-adar", score: func(u int, score []float64) { common(u, score, aa) }},
		{name: "jaccard", score: func(u int, score []float64) {
			common(u, score, func(int) float64 { return 1 })
			for v, cn := range score {
				if union := float64(len(adj[u])+len(adj[v])) - cn; union > 0 {
					score[v] = cn / union
				}
			}
		}},
	}
}

// kernelScorer ranks by one row of a kernel; single base kernels are named
// "kernel/NAME" to keep them apart from the baselines.
func kernelScorer(name string, k kernelmath.KernelMatrix) scorer {
	return scorer{name: name, score: func(u int, score []float64) { k.Row(u, score) }}
}

// recommenderScorers trains the recommender of each combination learner
// (cfg.Learners; alignf only when registered) on the view, recording the
// learned weights and any warning, and returns the rows "alignf" (its
// combined kernel alone, scored by asKernel) and "NAME+mklr" (scored by
// strength).
func recommenderScorers(ctx context.Context, ds *social.Dataset, view social.View, target recommend.Target, task string, cfg SocialConfig, rep *SocialReport, progress io.Writer,
	asKernel func(name string, k kernelmath.KernelMatrix) scorer, strength func(m *recommend.Model) func(u int, score []float64)) ([]scorer, error) {
	var out []scorer
	names := cfg.Learners
	if len(names) == 0 {
		names = []string{"alignf", "uniform"}
	}
	for _, name := range names {
		if name == "alignf" && !rep.alignfRegistered {
			continue
		}
		fmt.Fprintf(progress, "%s: training %s+mklr\n", task, name)
		m, err := recommend.Train(ctx, ds, view, recommend.Options{
			Learner: name, Target: target, Seed: uint64(cfg.Seed),
			Kernels: social.KernelOptions{Mode: cfg.Mode},
			Select:  recommend.SelectOptions{Scorer: recommend.ScorerMKLR, GroupScorer: recommend.GroupMKLR}, // the fixed pipeline
		})
		if err != nil {
			return nil, fmt.Errorf("%s+mklr (%s task): %w", name, task, err)
		}
		st := m.Stats()
		fmt.Fprintf(progress, "%s: %s+mklr trained: kernels %v, weights %v, negatives %v, mklr %v\n", task, name,
			st.Kernels.Round(time.Millisecond), st.Combine.Round(time.Millisecond), st.Negatives.Round(time.Millisecond), st.Strength.Round(time.Millisecond))
		for _, w := range st.Weights {
			rep.Weights = append(rep.Weights, KernelWeight{task, name, w.Kernel, w.Weight})
		}
		for _, w := range st.Warnings {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s task, %s+mklr: %s", task, name, w))
		}
		if name == "alignf" {
			out = append(out, asKernel(name, m.Combined()))
		}
		out = append(out, scorer{name: name + "+mklr", score: strength(m)})
	}
	return out, nil
}

// servedModel trains what the server serves with its default settings
// (recommend.Options{}: its seed, its kernels, the friend and group
// scorers chosen on validation relations held out of view). The test
// relations are not in view: they take no part in the choice.
func servedModel(ctx context.Context, ds *social.Dataset, view social.View, task string, rep *SocialReport, progress io.Writer) (*recommend.Model, error) {
	fmt.Fprintf(progress, "%s: training the served model (default options)\n", task)
	m, err := recommend.Train(ctx, ds, view, recommend.Options{})
	if err != nil {
		return nil, fmt.Errorf("served model: %w", err)
	}
	for _, w := range m.Stats().Warnings {
		rep.Notes = append(rep.Notes, task+" task, served: "+w)
	}
	if ds.N() > recommend.DefaultPrecomputeMaxUsers {
		// As served: ranked on demand, friends over their candidates.
		m = m.WithCandidates()
	}
	return m, nil
}

// friendSplit makes the friend task's random draws: the hidden
// friendships, the test users and the order among equal scores.
func friendSplit(ds *social.Dataset, cfg SocialConfig, rng *rand.Rand) (visible, hidden [][2]int, hiddenAdj [][]int, users, tie []int) {
	n := ds.N()
	visible, hidden = hideFriends(n, ds.Friends, 0.1, rng)
	hiddenAdj = adjacency(n, hidden)
	users = testUsers(hiddenAdj, cfg.MaxUsers, rng)
	return visible, hidden, hiddenAdj, users, rng.Perm(n)
}

func friendTask(ctx context.Context, ds *social.Dataset, cfg SocialConfig, rng *rand.Rand, rep *SocialReport, progress io.Writer) error {
	n := ds.N()
	visible, hidden, hiddenAdj, users, tie := friendSplit(ds, cfg, rng)
	rep.HiddenFriends = len(hidden)
	adj := adjacency(n, visible)
	view := social.View{Friends: visible, Memberships: ds.Memberships}
	fmt.Fprintf(progress, "friends: %d users, %d friendships, %d hidden; building kernels (%s mode)\n", n, len(ds.Friends), len(hidden), cfg.Mode)
	kernels, err := social.BuildKernels(ctx, ds, view, social.KernelOptions{Mode: cfg.Mode, Seed: uint64(cfg.Seed)})
	if err != nil {
		return err
	}
	scorers := graphScorers(adj)
	for _, k := range kernels {
		scorers = append(scorers, kernelScorer("kernel/"+k.Name, k.K))
	}
	learned, err := recommenderScorers(ctx, ds, view, recommend.TargetFriends, "friends", cfg, rep, progress,
		kernelScorer, func(m *recommend.Model) func(int, []float64) { return m.ScoreAll })
	if err != nil {
		return err
	}
	scorers = append(scorers, learned...)
	if rep.alignfRegistered {
		m, err := servedModel(ctx, ds, view, "friends", rep, progress)
		if err != nil {
			return err
		}
		rep.Served = m.Stats().Selection
		// Ranked exactly as the server answers (its own tie order).
		scorers = append(scorers, scorer{name: "served", order: func(u int) ([]int, error) { return m.FriendRanking(u, n) }})
	}
	rep.FriendTestUsers = len(users)
	perUser, err := forUsers(ctx, users, cfg.Workers, n, scorers, progress, "friends", judged{tie: tie,
		excluded: func(u, v int) bool { return v == u || contains(adj[u], v) },
		relevant: func(u, v int) bool { return contains(hiddenAdj[u], v) },
		total:    func(u int) int { return len(hiddenAdj[u]) }})
	if err != nil {
		return err
	}
	rep.addRows("friends", scorers, perUser)
	return nil
}

// hideMemberships hides a seeded 20% of the memberships for testing: it
// returns the visible ones, the visible members of each group, the visible
// and the hidden groups of each user.
func hideMemberships(ds *social.Dataset, rng *rand.Rand) (visible [][2]int, members, userGroups, hiddenGroups [][]int) {
	perm := rng.Perm(len(ds.Memberships))
	hide := make([]bool, len(ds.Memberships))
	for _, idx := range perm[:int(0.2*float64(len(ds.Memberships)))] {
		hide[idx] = true
	}
	members, userGroups, hiddenGroups = make([][]int, len(ds.Groups)), make([][]int, ds.N()), make([][]int, ds.N())
	for idx, e := range ds.Memberships {
		if hide[idx] {
			hiddenGroups[e[0]] = append(hiddenGroups[e[0]], e[1])
			continue
		}
		visible = append(visible, e)
		members[e[1]] = append(members[e[1]], e[0])
		userGroups[e[0]] = append(userGroups[e[0]], e[1])
	}
	return visible, members, userGroups, hiddenGroups
}

func groupTask(ctx context.Context, ds *social.Dataset, cfg SocialConfig, rng *rand.Rand, rep *SocialReport, progress io.Writer) error {
	n, m := ds.N(), len(ds.Groups)
	visible, members, userGroups, hiddenGroups := hideMemberships(ds, rng)
	nHide := len(ds.Memberships) - len(visible)
	rep.HiddenMembers = nHide
	adj := adjacency(n, ds.Friends)
	view := social.View{Friends: ds.Friends, Memberships: visible}
	fmt.Fprintf(progress, "groups: %d groups, %d memberships, %d hidden; building kernels\n", m, len(ds.Memberships), nHide)
	kernels, err := social.BuildKernels(ctx, ds, view, social.KernelOptions{Mode: cfg.Mode, Seed: uint64(cfg.Seed)})
	if err != nil {
		return err
	}
	// A user's strength to each user, summed over a group's visible members
	// (s(g, u) = sum_j f(u, u_j) [u_j in g], section 7.6).
	vote := func(name string, f func(u int, row []float64)) scorer {
		row := make([]float64, n)
		var mu sync.Mutex
		return scorer{name: name, score: func(u int, score []float64) {
			mu.Lock() // one row buffer per scorer: scorers are shared by workers
			defer mu.Unlock()
			f(u, row)
			for g := range score {
				s := 0.0
				for _, v := range members[g] {
					if v != u {
						s += row[v]
					}
				}
				score[g] = s
			}
		}}
	}
	friendRow := func(weight func(v int) float64) func(u int, row []float64) {
		return func(u int, row []float64) {
			clear(row)
			for _, v := range adj[u] {
				row[v] = weight(v)
			}
		}
	}
	scorers := []scorer{
		vote("friend-vote", friendRow(func(int) float64 { return 1 })),
		vote("adamic-adar", friendRow(func(v int) float64 { return 1 / math.Log(math.Max(2, float64(len(adj[v])))) })),
		{name: "jaccard", score: func(u int, score []float64) {
			for g := range score {
				inter := 0
				for _, v := range members[g] {
					if contains(adj[u], v) {
						inter++
					}
				}
				if union := len(adj[u]) + len(members[g]) - inter; union > 0 {
					score[g] = float64(inter) / float64(union)
				} else {
					score[g] = 0
				}
			}
		}},
		// The same groups for everyone, the largest first: the baseline a
		// user-dependent score must beat.
		{name: "popularity", score: func(_ int, score []float64) {
			for g := range score {
				score[g] = float64(len(members[g]))
			}
		}},
	}
	hasGroups := false
	for _, k := range kernels {
		if k.Name == social.KernelGroups {
			hasGroups = true // the group task's target, not a base kernel then (spec B.2)
			continue
		}
		scorers = append(scorers, vote("kernel/"+k.Name, k.K.Row))
	}
	if hasGroups {
		learned, err := recommenderScorers(ctx, ds, view, recommend.TargetGroups, "groups", cfg, rep, progress,
			func(name string, k kernelmath.KernelMatrix) scorer { return vote(name, k.Row) },
			func(m *recommend.Model) func(int, []float64) { return m.GroupScores })
		if err != nil {
			return err
		}
		scorers = append(scorers, learned...)
	}
	if rep.alignfRegistered {
		sm, err := servedModel(ctx, ds, view, "groups", rep, progress)
		if err != nil {
			return err
		}
		rep.ServedGroups = sm.Stats().GroupSelection
		scorers = append(scorers, scorer{name: "served", order: func(u int) ([]int, error) { return sm.GroupRanking(u, m) }})
	}
	users := testUsers(hiddenGroups, cfg.MaxUsers, rng)
	rep.GroupTestUsers = len(users)
	tie := rng.Perm(m)
	perUser, err := forUsers(ctx, users, cfg.Workers, m, scorers, progress, "groups", judged{tie: tie,
		excluded: func(u, g int) bool { return contains(userGroups[u], g) },
		relevant: func(u, g int) bool { return slices.Contains(hiddenGroups[u], g) },
		total:    func(u int) int { return len(hiddenGroups[u]) }})
	if err != nil {
		return err
	}
	rep.addRows("groups", scorers, perUser)
	return nil
}

func contains(sorted []int, v int) bool {
	_, ok := slices.BinarySearch(sorted, v)
	return ok
}

// testUsers returns the users with a hidden item, a seeded sample of max
// of them when max > 0.
func testUsers(hidden [][]int, max int, rng *rand.Rand) []int {
	var users []int
	for u, h := range hidden {
		if len(h) > 0 {
			users = append(users, u)
		}
	}
	return sampleUsers(users, max, rng)
}

func sampleUsers(users []int, max int, rng *rand.Rand) []int {
	if max <= 0 || len(users) <= max {
		return users
	}
	rng.Shuffle(len(users), func(i, j int) { users[i], users[j] = users[j], users[i] })
	users = users[:max]
	slices.Sort(users)
	return users
}

// judged is how a task judges a user's ranking of its size items: which
// items it leaves out (the user's own relations), which are relevant (its
// held-out ones) and how many of those there are; tie orders equal scores.
type judged struct {
	tie                []int
	excluded, relevant func(u, v int) bool
	total              func(u int) int
}

// marks returns, for u's ranking items, whether each is relevant.
func (j judged) marks(u int, items []int) []bool {
	ranked := make([]bool, len(items))
	for i, v := range items {
		ranked[i] = j.relevant(u, v)
	}
	return ranked
}

// forUsers scores every user with every scorer in parallel and returns
// per[scorer][metric][user] values.
func forUsers(ctx context.Context, users []int, workers, size int, scorers []scorer, progress io.Writer, task string, j judged) ([][][]float64, error) {
	per := make([][][]float64, len(scorers))
	for s := range per {
		per[s] = make([][]float64, len(SocialMetrics))
		for m := range per[s] {
			per[s][m] = make([]float64, len(users))
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	done := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			score := make([]float64, size)
			for i := range jobs {
				u := users[i]
				for s, sc := range scorers {
					var ranked []bool
					if sc.order != nil {
						items, err := sc.order(u)
						if err != nil {
							mu.Lock()
							failed = cmp.Or(failed, fmt.Errorf("%s, user %d: %w", sc.name, u, err))
							mu.Unlock()
							continue
						}
						ranked = j.marks(u, items)
					} else {
						sc.score(u, score)
						ranked = metrics.Rank(size, score, j.tie, func(v int) bool { return j.excluded(u, v) },
							func(v int) bool { return j.relevant(u, v) })
					}
					t := j.total(u)
					vals := []float64{metrics.PrecisionAt(ranked, 1), metrics.PrecisionAt(ranked, 10),
						metrics.RecallAt(ranked, 10, t), metrics.NDCGAt(ranked, 10, t), metrics.AveragePrecision(ranked, t)}
					for m, v := range vals {
						per[s][m][i] = v
					}
				}
				mu.Lock()
				done++
				if done%100 == 0 || done == len(users) {
					fmt.Fprintf(progress, "\r%s: users %d/%d", task, done, len(users))
				}
				mu.Unlock()
			}
		}()
	}
	var err error
feed:
	for i := range users {
		select {
		case jobs <- i:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	fmt.Fprintln(progress)
	return per, cmp.Or(err, failed)
}

func (rep *SocialReport) addRows(task string, scorers []scorer, per [][][]float64) {
	rep.Rows = append(rep.Rows, socialRows(task, scorers, per)...)
}

// socialRows are the mean of each metric of each scorer over the users
// (per as forUsers returns it).
func socialRows(task string, scorers []scorer, per [][][]float64) []SocialRow {
	var rows []SocialRow
	for s, sc := range scorers {
		for m, name := range SocialMetrics {
			rows = append(rows, SocialRow{task, sc.name, name, metrics.Mean(per[s][m])})
		}
	}
	return rows
}

// PrintSocial writes the report as tables: metrics per method and task, then
// the learned kernel weights.
func PrintSocial(w io.Writer, rep *SocialReport, cfg SocialConfig) {
	fmt.Fprintf(w, "Social recommendation (%s, %d users, %d friendships, %d groups), seed %d, %s preprocessing\n",
		rep.Format, rep.Users, rep.Friendships, rep.Groups, cfg.Seed, rep.Mode)
	fmt.Fprintf(w, "friends: %d hidden, %d test users; groups: %d memberships hidden, %d test users\n",
		rep.HiddenFriends, rep.FriendTestUsers, rep.HiddenMembers, rep.GroupTestUsers)
	for _, note := range rep.Notes {
		fmt.Fprintln(w, "note:", note)
	}
	for i := 0; i < len(rep.Rows); i += len(SocialMetrics) {
		r := rep.Rows[i]
		if i == 0 || rep.Rows[i-1].Task != r.Task {
			fmt.Fprintf(w, "\n%-8s %-20s", r.Task, "method")
			for _, m := range SocialMetrics {
				fmt.Fprintf(w, " %8s", m)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%-8s %-20s", "", r.Method)
		for m := range SocialMetrics {
			fmt.Fprintf(w, " %8.3f", rep.Rows[i+m].Value)
		}
		fmt.Fprintln(w)
	}
	if sel := rep.Served; sel.Scorer != "" {
		var lines []string
		for _, c := range sel.Candidates {
			lines = append(lines, fmt.Sprintf("validation %-13s MAP %.4f P@10 %.4f", c.Scorer, c.MAP, c.P10))
		}
		printServed(w, fmt.Sprintf("friends ranked by %s, chosen on %d held-out training friendships", sel.Scorer, sel.Edges), sel.Users, sel.Took, sel.Reason, lines)
	}
	if sel := rep.ServedGroups; sel.Scorer != "" {
		var lines []string
		for _, c := range sel.Candidates {
			lines = append(lines, fmt.Sprintf("validation %-13s MAP %.4f P@1 %.4f", c.Scorer, c.MAP, c.P1))
		}
		for _, gw := range sel.Weights {
			lines = append(lines, fmt.Sprintf("learned weight %-13s %+.4f", gw.Feature, gw.Weight))
		}
		printServed(w, fmt.Sprintf("groups ranked by %s, chosen on %d held-out training memberships", sel.Scorer, sel.Memberships), sel.Users, sel.Took, sel.Reason, lines)
	}
	if len(rep.Weights) > 0 {
		fmt.Fprintf(w, "\nlearned kernel weights (Table 7.3)\n")
		for _, kw := range rep.Weights {
			fmt.Fprintf(w, "%-8s %-8s %-16s %.4f\n", kw.Task, kw.Method, kw.Kernel, kw.Weight)
		}
	}
	fmt.Fprint(w, "\nReference (independent implementation, ego-Facebook, seed 1): friends adamic-adar P@1 .56, P@10 .26, MAP .47;\n"+
		"thesis-mode alignf P@1 about .13; groups friend-vote P@1 about .74.\n")
}

// printServed writes how a served model chose its scorer.
func printServed(w io.Writer, chosen string, users int, took time.Duration, reason string, lines []string) {
	fmt.Fprintf(w, "\nserved: %s (%d users scored, %v)\n", chosen, users, took.Round(time.Millisecond))
	if reason != "" {
		fmt.Fprintf(w, "served: %s\n", reason)
	}
	for _, l := range lines {
		fmt.Fprintln(w, "served:", l)
	}
}

// VariantTagsFaves names the variant of a data set with tags and
// favourites but no groups, photos, places or comments (TagsFaves).
const VariantTagsFaves = "tags-faves"

// TagsFaves returns a copy of ds with the friendships, profile tags and
// favourites only, like a music network with user tags and favourite
// artists. The places become favourites (ego-Facebook: the location and
// hometown features); photos, comments and memberships are dropped. A data
// set with no tags, places or faves at all (BlogCatalog) gets its groups
// as content instead: a member of an even-numbered group has its name as a
// tag, of an odd-numbered one as a favourite.
func TagsFaves(ds *social.Dataset) *social.Dataset {
	out := &social.Dataset{Format: ds.Format + "/" + VariantTagsFaves, Friends: ds.Friends, Users: make([]social.User, ds.N())}
	content := false
	for u, usr := range ds.Users {
		out.Users[u] = social.User{ID: usr.ID, Tags: usr.Tags, Attrs: usr.Attrs, Faves: append(slices.Clone(usr.Faves), usr.Places...)}
		content = content || len(usr.Tags)+len(usr.Places)+len(usr.Faves) > 0
	}
	if !content {
		for _, e := range ds.Memberships {
			usr := &out.Users[e[0]]
			if e[1]%2 == 0 {
				usr.Tags = append(usr.Tags, ds.Groups[e[1]])
			} else {
				usr.Faves = append(usr.Faves, ds.Groups[e[1]])
			}
		}
	}
	return out
}
