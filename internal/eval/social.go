package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/mklr"
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
	Format           string
	Mode             social.Mode
	Users, Groups    int
	Friendships      int
	HiddenFriends    int
	HiddenMembers    int
	FriendTestUsers  int
	GroupTestUsers   int
	Rows             []SocialRow
	Weights          []KernelWeight
	Notes            []string
	alignfRegistered bool
}

// SocialMetrics are the metrics of the protocol, in report order.
var SocialMetrics = []string{"P@1", "P@10", "R@10", "NDCG@10", "MAP"}

// scorer fills score[v] for every candidate v of user u (higher is better).
type scorer struct {
	name  string
	score func(u int, score []float64)
}

// Social runs the protocol of the social issue: hide 10% of the friendships
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
	dir := cfg.Data
	if dir == "" {
		root, ok := dataset.DataDir()
		if !ok {
			return nil, errors.New("no --data given and ../shared/data not found (set KERNELRANK_DATA)")
		}
		dir = filepath.Join(root, "social", "ego-facebook")
	}
	ds, _, err := social.LoadDir(dir, social.ImportOptions{})
	if err != nil {
		return nil, err
	}
	rep := &SocialReport{Format: ds.Format, Mode: cfg.Mode, Users: ds.N(), Groups: len(ds.Groups), Friendships: len(ds.Friends)}
	_, rep.alignfRegistered = learners.Lookup("alignf")
	if !rep.alignfRegistered {
		rep.Notes = append(rep.Notes, "alignf is not registered: its rows are missing")
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x50c1a1))
	if err := friendTask(ctx, ds, cfg, rng, rep, progress); err != nil {
		return nil, err
	}
	if len(ds.Groups) > 0 {
		if err := groupTask(ctx, ds, cfg, rng, rep, progress); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// hideFriends walks a seeded permutation of the friendships and hides each
// while both ends keep at least 2 visible friends, until frac of them are hidden.
func hideFriends(n int, friends [][2]int, frac float64, rng *rand.Rand) (visible, hidden [][2]int) {
	deg := make([]int, n)
	for _, e := range friends {
		deg[e[0]]++
		deg[e[1]]++
	}
	target := int(frac * float64(len(friends)))
	hide := make([]bool, len(friends))
	count := 0
	for _, idx := range rng.Perm(len(friends)) {
		if count == target {
			break
		}
		e := friends[idx]
		if deg[e[0]] > 2 && deg[e[1]] > 2 {
			hide[idx] = true
			deg[e[0]]--
			deg[e[1]]--
			count++
		}
	}
	for idx, e := range friends {
		if hide[idx] {
			hidden = append(hidden, e)
		} else {
			visible = append(visible, e)
		}
	}
	return visible, hidden
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
		{"common-neighbours", func(u int, score []float64) { common(u, score, func(int) float64 { return 1 }) }},
		{"adamic-adar", func(u int, score []float64) { common(u, score, aa) }},
		{"jaccard", func(u int, score []float64) {
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
func kernelScorer(name string, k learners.KernelMatrix) scorer {
	return scorer{name, func(u int, score []float64) { k.Row(u, score) }}
}

// combinations returns the combined user kernels the recommenders are
// built on: alignf's weights (when alignf is registered) and uniform ones,
// recording the weights for the report.
func combinations(ctx context.Context, kernels []social.NamedKernel, target learners.KernelMatrix, task string, rep *SocialReport) (map[string]learners.KernelMatrix, error) {
	ks := make([]learners.KernelMatrix, len(kernels))
	uniform := make([]float64, len(kernels))
	for i, k := range kernels {
		ks[i] = k.K
		uniform[i] = 1 / float64(len(kernels))
	}
	weights := map[string][]float64{"uniform": uniform}
	if rep.alignfRegistered {
		l, _, err := learners.New("alignf", nil)
		if err != nil {
			return nil, err
		}
		out, err := l.Fit(ctx, &learners.Input{Matrices: ks, TargetMatrix: target})
		if err != nil {
			return nil, fmt.Errorf("alignf (%s task): %w", task, err)
		}
		weights["alignf"] = out.Weights
	}
	combined := map[string]learners.KernelMatrix{}
	for method, w := range weights {
		for i, k := range kernels {
			rep.Weights = append(rep.Weights, KernelWeight{task, method, k.Name, w[i]})
		}
		sum, err := learners.NewKernelSum(w, ks)
		if err != nil {
			return nil, err
		}
		combined[method] = sum
	}
	return combined, nil
}

// strengthScorers are the second stage of section 7.4: kernel logistic
// regression on pairs over each combined kernel, trained on the visible
// friendships and conservatively sampled negatives; "alignf" alone ranks by
// the combined kernel itself.
func strengthScorers(ctx context.Context, kernels []social.NamedKernel, combined map[string]learners.KernelMatrix, friends [][2]int, seed int64, rep *SocialReport, progress io.Writer) ([]scorer, error) {
	var out []scorer
	if k, ok := combined["alignf"]; ok {
		out = append(out, kernelScorer("alignf", k))
	}
	pos := make([]learners.Pair, len(friends))
	for i, e := range friends {
		pos[i] = learners.Pair{I: e[0], J: e[1]}
	}
	base := make([]learners.KernelMatrix, len(kernels))
	for i, k := range kernels {
		base[i] = k.K
	}
	neg, err := mklr.SampleNegatives(ctx, base, pos, mklr.NegativeOptions{Seed: uint64(seed)})
	if err != nil {
		return nil, err
	}
	for _, method := range []string{"alignf", "uniform"} {
		k, ok := combined[method]
		if !ok {
			continue
		}
		fmt.Fprintf(progress, "training %s+mklr on %d positive and %d negative pairs\n", method, len(pos), len(neg))
		model, err := mklr.Train(ctx, k, pos, neg, mklr.Options{Seed: uint64(seed), Base: base})
		if errors.Is(err, learners.ErrNotConverged) && model != nil {
			// The model of the last refit, used knowingly (contract of ErrNotConverged).
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s+mklr: %v; the last refit is used", method, err))
		} else if err != nil {
			return nil, fmt.Errorf("%s+mklr: %w", method, err)
		}
		out = append(out, scorer{method + "+mklr", model.StrengthAll})
	}
	return out, nil
}

// withoutKernel drops the named kernel (the regularised Laplacian costs one
// linear solve per row, too much for alignment over every user).
func withoutKernel(ks []social.NamedKernel, names ...string) []social.NamedKernel {
	var out []social.NamedKernel
	for _, k := range ks {
		if !slices.Contains(names, k.Name) {
			out = append(out, k)
		}
	}
	return out
}

func friendTask(ctx context.Context, ds *social.Dataset, cfg SocialConfig, rng *rand.Rand, rep *SocialReport, progress io.Writer) error {
	n := ds.N()
	visible, hidden := hideFriends(n, ds.Friends, 0.1, rng)
	rep.HiddenFriends = len(hidden)
	adj := adjacency(n, visible)
	hiddenAdj := adjacency(n, hidden)
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
	target, err := social.FriendMatrix(n, visible)
	if err != nil {
		return err
	}
	learned := withoutKernel(kernels, social.KernelRegLaplacian)
	combined, err := combinations(ctx, learned, target, "friends", rep)
	if err != nil {
		return err
	}
	strength, err := strengthScorers(ctx, learned, combined, visible, cfg.Seed, rep, progress)
	if err != nil {
		return err
	}
	scorers = append(scorers, strength...)
	var users []int
	for u, h := range hiddenAdj {
		if len(h) > 0 {
			users = append(users, u)
		}
	}
	users = sampleUsers(users, cfg.MaxUsers, rng)
	rep.FriendTestUsers = len(users)
	tie := rng.Perm(n)
	perUser, err := forUsers(ctx, users, cfg.Workers, n, scorers, progress, "friends", func(u int, score []float64) []bool {
		excluded := adj[u]
		return rankCandidates(n, score, tie, func(v int) bool { return v == u || contains(excluded, v) },
			func(v int) bool { return contains(hiddenAdj[u], v) })
	}, func(u int) int { return len(hiddenAdj[u]) })
	if err != nil {
		return err
	}
	rep.addRows("friends", scorers, perUser)
	return nil
}

func groupTask(ctx context.Context, ds *social.Dataset, cfg SocialConfig, rng *rand.Rand, rep *SocialReport, progress io.Writer) error {
	n, m := ds.N(), len(ds.Groups)
	perm := rng.Perm(len(ds.Memberships))
	nHide := int(0.2 * float64(len(ds.Memberships)))
	hide := make([]bool, len(ds.Memberships))
	for _, idx := range perm[:nHide] {
		hide[idx] = true
	}
	var visible [][2]int
	members := make([][]int, m)      // visible members per group
	userGroups := make([][]int, n)   // visible groups per user
	hiddenGroups := make([][]int, n) // hidden groups per user
	for idx, e := range ds.Memberships {
		if hide[idx] {
			hiddenGroups[e[0]] = append(hiddenGroups[e[0]], e[1])
			continue
		}
		visible = append(visible, e)
		members[e[1]] = append(members[e[1]], e[0])
		userGroups[e[0]] = append(userGroups[e[0]], e[1])
	}
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
		return scorer{name, func(u int, score []float64) {
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
		{"jaccard", func(u int, score []float64) {
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
	}
	var base []social.NamedKernel
	var target learners.KernelMatrix
	for _, k := range kernels {
		if k.Name == social.KernelGroups {
			target = k.K // the group task's target; not a base kernel then (spec B.2)
			continue
		}
		base = append(base, k)
		scorers = append(scorers, vote("kernel/"+k.Name, k.K.Row))
	}
	if target != nil {
		learned := withoutKernel(base, social.KernelRegLaplacian)
		combined, err := combinations(ctx, learned, target, "groups", rep)
		if err != nil {
			return err
		}
		strength, err := strengthScorers(ctx, learned, combined, ds.Friends, cfg.Seed, rep, progress)
		if err != nil {
			return err
		}
		for _, sc := range strength {
			scorers = append(scorers, vote(sc.name, sc.score))
		}
	}
	var users []int
	for u, h := range hiddenGroups {
		if len(h) > 0 {
			users = append(users, u)
		}
	}
	users = sampleUsers(users, cfg.MaxUsers, rng)
	rep.GroupTestUsers = len(users)
	tie := rng.Perm(m)
	perUser, err := forUsers(ctx, users, cfg.Workers, m, scorers, progress, "groups", func(u int, score []float64) []bool {
		return rankCandidates(m, score, tie, func(g int) bool { return contains(userGroups[u], g) },
			func(g int) bool { return slices.Contains(hiddenGroups[u], g) })
	}, func(u int) int { return len(hiddenGroups[u]) })
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

func sampleUsers(users []int, max int, rng *rand.Rand) []int {
	if max <= 0 || len(users) <= max {
		return users
	}
	rng.Shuffle(len(users), func(i, j int) { users[i], users[j] = users[j], users[i] })
	users = users[:max]
	slices.Sort(users)
	return users
}

// rankCandidates orders the candidates (all items not excluded) by score,
// ties by the seeded permutation, and returns their relevance in rank order.
func rankCandidates(n int, score []float64, tie []int, excluded, relevant func(int) bool) []bool {
	cands := make([]int, 0, n)
	for v := 0; v < n; v++ {
		if !excluded(v) {
			cands = append(cands, v)
		}
	}
	sort.Slice(cands, func(a, b int) bool {
		x, y := cands[a], cands[b]
		if score[x] != score[y] {
			return score[x] > score[y]
		}
		return tie[x] < tie[y]
	})
	ranked := make([]bool, len(cands))
	for i, v := range cands {
		ranked[i] = relevant(v)
	}
	return ranked
}

// forUsers scores every user with every scorer in parallel and returns
// per[scorer][metric][user] values.
func forUsers(ctx context.Context, users []int, workers, size int, scorers []scorer, progress io.Writer, task string,
	rank func(u int, score []float64) []bool, total func(u int) int) ([][][]float64, error) {
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
	done := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			score := make([]float64, size)
			for i := range jobs {
				u := users[i]
				for s, sc := range scorers {
					sc.score(u, score)
					ranked := rank(u, score)
					t := total(u)
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
	return per, err
}

func (rep *SocialReport) addRows(task string, scorers []scorer, per [][][]float64) {
	for s, sc := range scorers {
		for m, name := range SocialMetrics {
			rep.Rows = append(rep.Rows, SocialRow{task, sc.name, name, metrics.Mean(per[s][m])})
		}
	}
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
	if len(rep.Weights) > 0 {
		fmt.Fprintf(w, "\nlearned kernel weights (Table 7.3)\n")
		for _, kw := range rep.Weights {
			fmt.Fprintf(w, "%-8s %-8s %-16s %.4f\n", kw.Task, kw.Method, kw.Kernel, kw.Weight)
		}
	}
	fmt.Fprint(w, "\nReference (independent implementation, ego-Facebook, seed 1): friends adamic-adar P@1 .56, P@10 .26, MAP .47;\n"+
		"thesis-mode alignf P@1 about .13; groups friend-vote P@1 about .74.\n")
}
