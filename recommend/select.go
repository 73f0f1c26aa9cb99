package recommend

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kernelrank/kernelrank/learners/mklr"
	"github.com/kernelrank/kernelrank/social"
)

// The friend scorers a model can rank candidate friends by (Train chooses
// one on held-out training friendships: SelectOptions).
const (
	// ScorerMKLR ranks by the strength model's f(u, v) (mklr on the
	// combined kernel): the learned pipeline of chapter 7.
	ScorerMKLR = mklr.Name
	// ScorerKernel ranks by the combined kernel sum_t theta_t K^t(u, v)
	// alone.
	ScorerKernel = "kernel"
	// ScorerAdamicAdar ranks by Adamic-Adar on the visible friendships,
	// sum over common friends w of 1/ln(deg w) (deg w < 2 counts as 2),
	// ties (the many candidates sharing the same common friends, and
	// those sharing none) broken by the combined kernel: it adds
	// 1e-9 max(1, max AA) K(u, v) / max |K(u, .)|, which reorders no two
	// different Adamic-Adar values but by rounding.
	ScorerAdamicAdar = "adamic-adar"
)

// Scorers lists the friend scorers, in the order that wins a tie of the
// validation numbers.
var Scorers = []string{ScorerMKLR, ScorerKernel, ScorerAdamicAdar}

// SelectOptions configures the choice of the friend and group scorers.
// The zero value selects with the defaults.
type SelectOptions struct {
	// Scorer, when set, ranks friends without validating: ScorerMKLR is
	// the learned pipeline as the thesis has it (the evaluation's fixed
	// rows). "" chooses.
	Scorer string `json:"scorer,omitempty"`
	// Fraction of the friendships held out for validation (default 0.1),
	// at least MinEdges of them (default 20): a seeded walk over the
	// friendships holds one out while both ends keep 2 visible friends.
	// With fewer than MinEdges held out, mklr is served unvalidated.
	Fraction float64 `json:"fraction"`
	MinEdges int     `json:"min_edges"`
	// MaxUsers caps the validation users of each task (the ends of the
	// held-out friendships, the users of the held-out memberships) scored:
	// a seeded sample (default 2000; for groups also at most what 256 MiB
	// of features holds, each user's candidate groups when every group's
	// would not fit: selectGroupScorer).
	MaxUsers int `json:"max_users"`
	// GroupScorer, when set, ranks groups without validating: GroupMKLR
	// is the thesis' pipeline. "" chooses.
	GroupScorer string `json:"group_scorer,omitempty"`
	// GroupFraction of the memberships held out for choosing the group
	// scorer and fitting GroupLearned (default 0.15), at least
	// MinMemberships of them (default 20): a seeded walk over the
	// memberships holds one out while its user keeps one visible. One
	// validation model serves both choices: it is trained without the
	// held-out friendships and memberships.
	GroupFraction  float64 `json:"group_fraction"`
	MinMemberships int     `json:"min_memberships"`
}

func (o *SelectOptions) defaults() {
	if o.Fraction <= 0 {
		o.Fraction = 0.1
	}
	if o.MinEdges <= 0 {
		o.MinEdges = 20
	}
	if o.MaxUsers <= 0 {
		o.MaxUsers = 2000
	}
	if o.GroupFraction <= 0 {
		o.GroupFraction = 0.15
	}
	if o.MinMemberships <= 0 {
		o.MinMemberships = 20
	}
}

// Selection reports how the friend scorer was chosen.
type Selection struct {
	// Scorer is the chosen one; Reason says why none was validated
	// (selection off, too few friendships to hold out, the validation
	// model failing).
	Scorer string `json:"scorer"`
	Reason string `json:"reason,omitempty"`
	// Edges held out, Users scored (the ends of the held-out edges, at
	// most SelectOptions.MaxUsers) and each candidate's numbers on them.
	Edges, Users int
	Candidates   []Validation
	Took         time.Duration
}

// Validation is one candidate's mean average precision and precision at 10
// over the validation users, ranking as RecommendFriends does (every user
// but u and u's visible friends, ties in the model's seeded order).
type Validation struct {
	Scorer string  `json:"scorer"`
	MAP    float64 `json:"map"`
	P10    float64 `json:"p10"`
}

// selectScorers holds out validation friendships and memberships of view
// (those of the scorers opts.Select leaves open), trains the learned
// pipeline on the rest (the validation model it returns; nil when nothing
// is held out or its training failed), and chooses on the held-out ones: the friend
// scorer with the best MAP (then P@10, then the order of Scorers), the
// group scorer by chooseGroupScorer (GroupLearned, fitted on the same
// memberships, unless another is better by more than a standard error).
func selectScorers(ctx context.Context, ds *social.Dataset, view social.View, opts Options, logf func(string, ...any)) (Selection, GroupSelection, *Model, error) {
	start := time.Now()
	so := opts.Select
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5e1ec7))
	grng := rand.New(rand.NewPCG(opts.Seed, 0x6e0c5))
	n := ds.N()
	sel := Selection{Scorer: cmp.Or(so.Scorer, ScorerMKLR)}
	gsel := GroupSelection{Scorer: cmp.Or(so.GroupScorer, GroupMKLR)}
	friends, heldF := view.Friends, [][2]int(nil)
	if so.Scorer != "" {
		sel.Reason = "fixed by the options"
	} else if friends, heldF = social.HoldOut(n, view.Friends, max(int(math.Round(so.Fraction*float64(len(view.Friends)))), so.MinEdges), rng); len(heldF) < so.MinEdges {
		sel.Edges = len(heldF)
		sel.Reason = fmt.Sprintf("only %d friendships can be held out (each end keeping 2 visible friends), fewer than %d: mklr is served unvalidated", len(heldF), so.MinEdges)
		friends, heldF = view.Friends, nil
	}
	memberships, heldM := view.Memberships, [][2]int(nil)
	if so.GroupScorer != "" {
		gsel.Reason = "fixed by the options"
	} else if memberships, heldM = social.HoldOutMemberships(n, view.Memberships, max(int(math.Round(so.GroupFraction*float64(len(view.Memberships)))), so.MinMemberships), grng); len(heldM) < so.MinMemberships {
		gsel.Memberships = len(heldM)
		gsel.Reason = fmt.Sprintf("only %d memberships can be held out (each user keeping one), fewer than %d: mklr ranks groups unvalidated", len(heldM), so.MinMemberships)
		memberships, heldM = view.Memberships, nil
	}
	if heldF == nil && heldM == nil {
		return sel, gsel, nil, nil
	}
	sub := opts
	sub.Select.Scorer, sub.Select.GroupScorer = ScorerMKLR, GroupMKLR
	logf("training the validation model", "friendships", len(friends), "held_out", len(heldF), "memberships", len(memberships), "held_out_memberships", len(heldM))
	vm, err := trainPipeline(ctx, ds, social.View{Friends: friends, Memberships: memberships}, sub, logf)
	if err != nil {
		if ctx.Err() != nil {
			return sel, gsel, nil, ctx.Err()
		}
		if heldF != nil {
			sel.Reason = fmt.Sprintf("the validation model failed (%v): mklr is served unvalidated", err)
		}
		if heldM != nil {
			gsel.Reason = fmt.Sprintf("the validation model failed (%v): mklr ranks groups unvalidated", err)
		}
		return sel, gsel, nil, nil
	}
	if validationHook != nil {
		validationHook(vm, heldF, heldM)
	}
	if heldF != nil {
		if sel, err = vm.selectFriendScorer(ctx, heldF, so.MaxUsers, rng, stageReport(opts, StageFriendsVal)); err != nil {
			return sel, gsel, nil, err
		}
		sel.Took = time.Since(start)
	}
	if heldM != nil {
		if gsel, err = vm.selectGroupScorer(ctx, heldM, so.MaxUsers, grng, stageReport(opts, StageGroupsVal)); err != nil {
			return sel, gsel, nil, err
		}
		gsel.Took = time.Since(start)
	}
	return sel, gsel, vm, nil
}

// stageReport returns a report of stage's items done for opts.Progress:
// every 64th item and the last, one call at a time.
func stageReport(opts Options, stage string) func(done, of int) {
	var mu sync.Mutex
	return func(done, of int) {
		if done == 0 || done%64 == 0 || done == of {
			mu.Lock()
			opts.report(stage, float64(done)/float64(max(of, 1)))
			mu.Unlock()
		}
	}
}

// validationUsers returns the users with a relevant item, a seeded sample
// of at most limit of them, sorted.
func validationUsers(relevant [][]int, limit int, rng *rand.Rand) []int {
	var users []int
	for u, r := range relevant {
		if len(r) > 0 {
			users = append(users, u)
		}
	}
	if len(users) > limit {
		rng.Shuffle(len(users), func(i, j int) { users[i], users[j] = users[j], users[i] })
		users = users[:limit]
		slices.Sort(users)
	}
	return users
}

// parallel calls work(state, i) for every i in [0, count) on every CPU,
// each worker with its own state from newState, until ctx is done.
func parallel[S any](ctx context.Context, count int, newState func() S, work func(state S, i int)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			state := newState()
			for i := int(next.Add(1) - 1); i < count && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				work(state, i)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// selectFriendScorer scores the held-out friendships of the validation
// model m for their ends (at most maxUsers of them) with every friend
// scorer and returns the best.
func (m *Model) selectFriendScorer(ctx context.Context, held [][2]int, maxUsers int, rng *rand.Rand, report func(done, of int)) (Selection, error) {
	n := m.ds.N()
	relevant := make([][]int, n)
	for _, e := range held {
		relevant[e[0]] = append(relevant[e[0]], e[1])
		relevant[e[1]] = append(relevant[e[1]], e[0])
	}
	users := validationUsers(relevant, maxUsers, rng)
	sel := Selection{Edges: len(held), Users: len(users)}
	var done atomic.Int64
	report(0, len(users))
	ap, p10 := make([][]float64, len(Scorers)), make([][]float64, len(Scorers))
	for s := range Scorers {
		ap[s], p10[s] = make([]float64, len(users)), make([]float64, len(users))
	}
	err := parallel(ctx, len(users), func() [2][]float64 { return [2][]float64{make([]float64, n), make([]float64, n)} }, func(buf [2][]float64, i int) {
		u := users[i]
		score, row := buf[0], buf[1]
		m.combined.Row(u, row) // the kernel scorer's scores and Adamic-Adar's tie-break: formed once
		for s, name := range Scorers {
			switch name {
			case ScorerKernel:
				copy(score, row)
			case ScorerAdamicAdar:
				m.adamicAdarWith(u, score, row)
			default:
				m.friendScores(name, u, score, nil)
			}
			ap[s][i], p10[s][i] = rankStats(score, m.userTie, m.friends[u], u, relevant[u], 10)
		}
		report(int(done.Add(1)), len(users))
	})
	if err != nil {
		return sel, err
	}
	best := -1
	for s, name := range Scorers {
		v := Validation{Scorer: name, MAP: mean(ap[s]), P10: mean(p10[s])}
		sel.Candidates = append(sel.Candidates, v)
		if b := sel.Candidates[max(best, 0)]; best < 0 || v.MAP > b.MAP || v.MAP == b.MAP && v.P10 > b.P10 {
			best = s
		}
	}
	sel.Scorer = Scorers[best]
	return sel, nil
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(max(len(x), 1))
}

// rankStats returns the average precision and the precision at k of
// the ranking by score (equal scores in tie order) of the candidates,
// every index but self (-1: none) and those in excluded (sorted), for the
// relevant ones (candidates all).
func rankStats(score []float64, tie []int, excluded []int, self int, relevant []int, k int) (ap, pk float64) {
	ranks := make([]int, len(relevant))
	for i, r := range relevant {
		sr, tr := score[r], tie[r]
		above := func(w int) bool { return score[w] > sr || score[w] == sr && tie[w] < tr }
		better := 0
		for w := range score {
			if above(w) {
				better++
			}
		}
		if self >= 0 && above(self) {
			better--
		}
		for _, w := range excluded {
			if above(w) {
				better--
			}
		}
		ranks[i] = better
	}
	slices.Sort(ranks)
	hits := 0
	for i, r := range ranks {
		ap += float64(i+1) / float64(r+1)
		if r < k {
			hits++
		}
	}
	return ap / float64(len(relevant)), float64(hits) / float64(k)
}

// friendScores sets dst[v] to the named scorer's score of u and v for
// every user v (dst and scratch of length N; scratch may be nil).
func (m *Model) friendScores(scorer string, u int, dst, scratch []float64) {
	switch scorer {
	case ScorerKernel:
		m.combined.Row(u, dst)
	case ScorerAdamicAdar:
		if scratch == nil {
			scratch = make([]float64, len(dst))
		}
		m.adamicAdar(u, dst, scratch)
	default:
		m.strength.ScoreAll(u, dst)
	}
}

// adamicAdar is ScorerAdamicAdar's score; row is scratch.
func (m *Model) adamicAdar(u int, dst, row []float64) {
	m.combined.Row(u, row)
	m.adamicAdarWith(u, dst, row)
}

// adamicAdarWith is ScorerAdamicAdar's score given row, the combined
// kernel's row of u.
func (m *Model) adamicAdarWith(u int, dst, row []float64) {
	m.adamicAdarOver(m.friends[u], dst)
	addTieBreak(dst, row)
}

// adamicAdarOver sets dst to the Adamic-Adar score, without tie-break,
// of a user with the given friends.
func (m *Model) adamicAdarOver(friends []int, dst []float64) {
	clear(dst)
	for _, w := range friends {
		x := 1 / math.Log(math.Max(2, float64(len(m.friends[w]))))
		for _, v := range m.friends[w] {
			dst[v] += x
		}
	}
}

// addTieBreak adds to the Adamic-Adar scores in score the combined
// kernel's entries in row, scaled to at most 1e-9 of the top score: equal
// scores go to the more similar user.
func addTieBreak(score, row []float64) {
	top, scale := 1.0, 0.0
	for i, a := range score {
		top = math.Max(top, a)
		scale = math.Max(scale, math.Abs(row[i]))
	}
	if scale == 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		return
	}
	eps := 1e-9 * top / scale
	for i := range score {
		score[i] += eps * row[i]
	}
}

// FriendScorer returns the scorer the model ranks friends by (Scorers).
func (m *Model) FriendScorer() string { return m.scorer }

// FriendScores sets dst[v] to the score RecommendFriends ranks v by for u
// (the chosen scorer's; dst of length N()).
func (m *Model) FriendScores(u int, dst []float64) { m.friendScores(m.scorer, u, dst, nil) }

// FriendRanking returns u's candidate friends (every user but u and u's
// visible friends) best first, the first k of them (all for k >= N()),
// as RecommendFriends ranks them.
func (m *Model) FriendRanking(u, k int) ([]int, error) {
	if err := checkArgs(m, u, k); err != nil {
		return nil, err
	}
	top, _ := m.topFriends(u, k)
	return top, nil
}

// validationHook, when set (by tests), sees the validation model and the
// held-out friendships and memberships.
var validationHook func(vm *Model, friends, memberships [][2]int)

var errUnknownScorer = errors.New("unknown friend scorer")

// checkScorer maps a stored scorer name to a known one ("": mklr, a model
// stored before the choice existed).
func checkScorer(name string) (string, error) {
	if name == "" {
		return ScorerMKLR, nil
	}
	if !slices.Contains(Scorers, name) {
		return "", fmt.Errorf("%w %q (known: %v)", errUnknownScorer, name, Scorers)
	}
	return name, nil
}
