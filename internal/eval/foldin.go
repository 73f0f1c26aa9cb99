package eval

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kernelrank/kernelrank/recommend"
)

// FoldInConfig configures the fold-in protocol.
type FoldInConfig struct {
	// Data is as for SocialConfig; empty means BlogCatalog.
	Data string
	Seed int64
	// Hidden users (default 200) are drawn among those with at least 2
	// friendships; Reveal (default 0.5) is the fraction of each one's
	// friendships added back with it, at least one, the rest the test.
	Hidden  int
	Reveal  float64
	Workers int
	// Options trains both models (zero: the server's defaults).
	Options  recommend.Options
	Progress io.Writer
}

// FoldInReport is the outcome of the fold-in protocol: rows of the tasks
// FoldInAll and FoldInKnown for the methods fold-in, retrain and
// adamic-adar.
type FoldInReport struct {
	Format                      string
	Users, Friendships, Hidden  int
	Revealed, Test              int // the hidden users' friendships added back, and held out
	TestUsers                   int
	Rows                        []SocialRow
	Train, Retrain, FoldIn      time.Duration // the model without the hidden users, the retrain, all fold-ins
	FriendScorer, RetrainScorer string
}

// FoldIn runs the fold-in protocol: hide Hidden users with all their
// friendships, train on the rest, add them back with part of their
// friendships and fold them into that model; rank every other user for
// each and score the friendships still held out, against a retrain on the
// data with them added back and against Adamic-Adar on that data. A test
// friend that is itself a hidden user is not in the first model, so
// fold-in cannot rank it: it counts as missed.
func FoldIn(ctx context.Context, cfg FoldInConfig) (*FoldInReport, error) {
	if cfg.Hidden <= 0 {
		cfg.Hidden = 200
	}
	if cfg.Reveal <= 0 || cfg.Reveal >= 1 {
		cfg.Reveal = 0.5
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	ds, err := loadSocial(cfg.Data, "blogcatalog")
	if err != nil {
		return nil, err
	}
	n := ds.N()
	rep := &FoldInReport{Format: ds.Format, Users: n, Friendships: len(ds.Friends)}
	adj := adjacency(n, ds.Friends)
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xf01d))
	var eligible []int
	for u, f := range adj {
		if len(f) >= 2 {
			eligible = append(eligible, u)
		}
	}
	hidden := sampleUsers(eligible, cfg.Hidden, rng)
	rep.Hidden = len(hidden)
	isHidden := make([]bool, n)
	for _, h := range hidden {
		isHidden[h] = true
	}
	// Each hidden user's friendships, in a seeded order: the first
	// Reveal of them (at least one) go back with it.
	test := map[[2]int]bool{}
	testAdj := make([][]int, n)
	for _, h := range hidden {
		f := slices.Clone(adj[h])
		rng.Shuffle(len(f), func(i, j int) { f[i], f[j] = f[j], f[i] })
		keep := max(1, int(cfg.Reveal*float64(len(f))))
		for _, v := range f[keep:] {
			test[[2]int{min(h, v), max(h, v)}] = true
		}
	}
	for e := range test {
		for _, u := range e {
			if isHidden[u] {
				testAdj[u] = append(testAdj[u], e[0]+e[1]-u)
			}
		}
	}
	for _, h := range hidden {
		slices.Sort(testAdj[h])
		rep.Test += len(testAdj[h])
	}
	live := ds.Filter(func(int) bool { return true }, func(i, j int) bool { return !test[[2]int{i, j}] })
	base := ds.Filter(func(i int) bool { return !isHidden[i] }, func(int, int) bool { return true })
	liveAdj := adjacency(n, live.Friends)
	for _, h := range hidden {
		rep.Revealed += len(liveAdj[h])
	}

	fmt.Fprintf(progress, "fold-in: %d users, %d hidden with %d friendships back and %d held out; training without them\n", n, len(hidden), rep.Revealed, rep.Test)
	start := time.Now()
	mBase, err := recommend.Train(ctx, base, base.FullView(), cfg.Options)
	if err != nil {
		return nil, err
	}
	rep.Train, rep.FriendScorer = time.Since(start), mBase.FriendScorer()
	fmt.Fprintf(progress, "fold-in: trained in %v; retraining with them\n", rep.Train.Round(time.Millisecond))
	start = time.Now()
	mLive, err := recommend.Train(ctx, live, live.FullView(), cfg.Options)
	if err != nil {
		return nil, err
	}
	rep.Retrain, rep.RetrainScorer = time.Since(start), mLive.FriendScorer()
	if n > recommend.DefaultPrecomputeMaxUsers {
		mLive = mLive.WithCandidates() // as served
	}

	// Fold-in, as Service.Apply's answers do it: the live user's profile
	// and relations against the first model's users.
	liveGroups := make([][]int, n)
	for _, m := range live.Memberships {
		liveGroups[m[0]] = append(liveGroups[m[0]], m[1])
	}
	folded := make(map[int][]int, len(hidden)) // live indices, best first
	start = time.Now()
	for _, h := range hidden {
		fo, err := mBase.FoldIn(live.Users[h].ID, live.FoldUser(h, liveAdj[h], liveGroups[h], base), nil)
		if err != nil {
			return nil, err
		}
		top, _ := fo.FriendRanking(base.N())
		items := make([]int, len(top))
		for r, v := range top {
			items[r], _ = live.UserIndex(base.Users[v].ID)
		}
		folded[h] = items
	}
	rep.FoldIn = time.Since(start)

	tie := rng.Perm(n)
	graph := graphScorers(liveAdj)
	aa := graph[slices.IndexFunc(graph, func(s scorer) bool { return s.name == "adamic-adar" })]
	scorers := []scorer{
		{name: "fold-in", order: func(u int) ([]int, error) { return folded[u], nil }},
		{name: "retrain", order: func(u int) ([]int, error) { return mLive.FriendRanking(u, n) }},
		aa,
	}
	rep.TestUsers = len(hidden)
	// Every held-out friendship, and those to users of the first model.
	known := make([][]int, n)
	for _, h := range hidden {
		known[h] = slices.DeleteFunc(slices.Clone(testAdj[h]), func(v int) bool { return isHidden[v] })
	}
	for _, task := range []struct {
		name string
		test [][]int
	}{{FoldInAll, testAdj}, {FoldInKnown, known}} {
		test := task.test
		users := slices.DeleteFunc(slices.Clone(hidden), func(h int) bool { return len(test[h]) == 0 })
		per, err := forUsers(ctx, users, cfg.Workers, n, scorers, progress, task.name, judged{tie: tie,
			excluded: func(u, v int) bool { return v == u || contains(liveAdj[u], v) },
			relevant: func(u, v int) bool { return contains(test[u], v) },
			total:    func(u int) int { return len(test[u]) }})
		if err != nil {
			return nil, err
		}
		rep.Rows = append(rep.Rows, socialRows(task.name, scorers, per)...)
	}
	return rep, nil
}

// The tasks of the fold-in report: every held-out friendship of the
// hidden users, and only those to users of the model trained without them
// (fold-in ranks those users alone).
const (
	FoldInAll   = "all held-out friends"
	FoldInKnown = "held-out friends in the model"
)

// PrintFoldIn writes the report as a table.
func PrintFoldIn(w io.Writer, rep *FoldInReport, cfg FoldInConfig) {
	fmt.Fprintf(w, "Fold-in (%s, %d users, %d friendships), seed %d: %d users hidden, %d of their friendships added back, %d held out\n",
		rep.Format, rep.Users, rep.Friendships, cfg.Seed, rep.Hidden, rep.Revealed, rep.Test)
	fmt.Fprintf(w, "training without them %v (friend scorer %s), retraining with them %v (%s); %d fold-ins %v\n",
		rep.Train.Round(time.Millisecond), rep.FriendScorer, rep.Retrain.Round(time.Millisecond), rep.RetrainScorer, rep.Hidden, rep.FoldIn.Round(time.Millisecond))
	for r := 0; r < len(rep.Rows); r += len(SocialMetrics) {
		if r == 0 || rep.Rows[r].Task != rep.Rows[r-1].Task {
			fmt.Fprintf(w, "%s:\n%-12s", rep.Rows[r].Task, "method")
			for _, m := range SocialMetrics {
				fmt.Fprintf(w, " %8s", m)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%-12s", rep.Rows[r].Method)
		for _, row := range rep.Rows[r : r+len(SocialMetrics)] {
			fmt.Fprintf(w, " %8.4f", row.Value)
		}
		fmt.Fprintln(w)
	}
}
