package recommend

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/kernelrank/kernelrank/social"
)

// The friend scorers a model can rank candidate friends by (Train chooses
// one on held-out training friendships: SelectOptions).
const (
	// ScorerMKLR ranks by the strength model's f(u, v) (mklr on the
	// combined kernel): the learned pipeline of chapter 7.
	ScorerMKLR = "mklr"
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

// SelectOptions configures the choice of the friend scorer. The zero value
// selects with the defaults.
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
	// MaxUsers caps the validation users (the ends of the held-out
	// friendships) scored: a seeded sample (default 2000).
	MaxUsers int `json:"max_users"`
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

// selectScorer holds out validation friendships of view, trains the
// learned pipeline on the rest, and returns the scorer with the best MAP
// (then P@10, then the order of Scorers) on the held-out ones.
func selectScorer(ctx context.Context, ds *social.Dataset, view social.View, opts Options, logf func(string, ...any)) (Selection, error) {
	start := time.Now()
	so := opts.Select
	so.defaults()
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5e1ec7))
	n := ds.N()
	visible, held := social.HoldOut(n, view.Friends, max(int(math.Round(so.Fraction*float64(len(view.Friends)))), so.MinEdges), rng)
	sel := Selection{Scorer: ScorerMKLR, Edges: len(held)}
	if len(held) < so.MinEdges {
		sel.Reason = fmt.Sprintf("only %d friendships can be held out (each end keeping 2 visible friends), fewer than %d: mklr is served unvalidated", len(held), so.MinEdges)
		return sel, nil
	}
	sub := opts
	sub.Select.Scorer = ScorerMKLR
	logf("training the validation model", "friendships", len(visible), "held_out", len(held))
	vm, err := trainPipeline(ctx, ds, social.View{Friends: visible, Memberships: view.Memberships}, sub, func(string, ...any) {})
	if err != nil {
		if ctx.Err() != nil {
			return sel, ctx.Err()
		}
		sel.Reason = fmt.Sprintf("the validation model failed (%v): mklr is served unvalidated", err)
		return sel, nil
	}
	if validationHook != nil {
		validationHook(vm, held)
	}
	relevant := make([][]int, n)
	for _, e := range held {
		relevant[e[0]] = append(relevant[e[0]], e[1])
		relevant[e[1]] = append(relevant[e[1]], e[0])
	}
	var users []int
	for u, r := range relevant {
		if len(r) > 0 {
			users = append(users, u)
		}
	}
	if len(users) > so.MaxUsers {
		rng.Shuffle(len(users), func(i, j int) { users[i], users[j] = users[j], users[i] })
		users = users[:so.MaxUsers]
		slices.Sort(users)
	}
	sel.Users = len(users)
	ap, p10 := make([][]float64, len(Scorers)), make([][]float64, len(Scorers))
	for s := range Scorers {
		ap[s], p10[s] = make([]float64, len(users)), make([]float64, len(users))
	}
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			score, scratch := make([]float64, n), make([]float64, n)
			for ctx.Err() == nil {
				mu.Lock()
				i := int(next)
				next++
				mu.Unlock()
				if i >= len(users) {
					return
				}
				u := users[i]
				for s, name := range Scorers {
					vm.friendScores(name, u, score, scratch)
					ap[s][i], p10[s][i] = vm.validate(u, score, relevant[u])
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
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
	sel.Took = time.Since(start)
	return sel, nil
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(max(len(x), 1))
}

// validate returns the average precision and the precision at 10 of u's
// ranking by score (RecommendFriends' rule: every user but u and u's
// visible friends, equal scores in userTie order) for the relevant users
// (none of them visible friends).
func (m *Model) validate(u int, score []float64, relevant []int) (ap, p10 float64) {
	ranks := make([]int, len(relevant))
	for i, r := range relevant {
		sr, tr := score[r], m.userTie[r]
		better := 0
		for w, sw := range score {
			if sw > sr || sw == sr && m.userTie[w] < tr {
				better++
			}
		}
		// u and u's visible friends are no candidates.
		if score[u] > sr || score[u] == sr && m.userTie[u] < tr {
			better--
		}
		for _, f := range m.friends[u] {
			if score[f] > sr || score[f] == sr && m.userTie[f] < tr {
				better--
			}
		}
		ranks[i] = better
	}
	slices.Sort(ranks)
	for i, r := range ranks {
		ap += float64(i+1) / float64(r+1)
		if r < 10 {
			p10 += 0.1
		}
	}
	return ap / float64(len(relevant)), p10
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
	clear(dst)
	for _, w := range m.friends[u] {
		x := 1 / math.Log(math.Max(2, float64(len(m.friends[w]))))
		for _, v := range m.friends[w] {
			dst[v] += x
		}
	}
	m.combined.Row(u, row)
	top, scale := 1.0, 0.0
	for v, a := range dst {
		top = math.Max(top, a)
		scale = math.Max(scale, math.Abs(row[v]))
	}
	if scale == 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		return
	}
	eps := 1e-9 * top / scale
	for v := range dst {
		dst[v] += eps * row[v]
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
// held-out friendships.
var validationHook func(vm *Model, held [][2]int)

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
