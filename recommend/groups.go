package recommend

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/mklr"
)

// The group scorers a model can rank groups by (Train chooses one on
// held-out training memberships: SelectOptions). Each scores every group
// for a user u from g's visible members.
const (
	// GroupMKLR is s(g, u), the expected number of u's friends among g's
	// members: 1 for a friend, the strength model's prior-corrected
	// probability for any other member (groupScoresOf's deviation note).
	GroupMKLR = mklr.Name
	// GroupFriendVote counts u's friends among the members.
	GroupFriendVote = "friend-vote"
	// GroupAdamicAdar sums 1/ln(deg v) over u's friends v among the
	// members (deg v < 2 counts as 2).
	GroupAdamicAdar = "adamic-adar"
	// GroupRegLaplacian sums the regularised Laplacian kernel of the
	// friendships, (I + gamma L)^-1 (u, v), over the members v: friends of
	// friends count, with decay gamma/(1+gamma) a hop.
	GroupRegLaplacian = "reg-laplacian"
	// GroupLearned is a linear score w.x over the groupFeatures x of
	// (user, group), w fitted on held-out training memberships
	// (fitListwise).
	GroupLearned = "learned"
)

// GroupScorers lists the group scorers, in the order that wins a tie of
// the validation numbers.
var GroupScorers = []string{GroupMKLR, GroupFriendVote, GroupAdamicAdar, GroupRegLaplacian, GroupLearned}

// groupFeatures name the signals GroupLearned combines: the four other
// scorers; co-members, the memberships g's members share with u
// (sum over u's groups h of |members(h) ∩ members(g)|: users who join
// what u joined join g); kernel-mean, the mean combined kernel between u
// and g's members (the learned similarity, friends or not); size,
// ln(1 + |members(g)|), the popularity prior.
var groupFeatures = []string{GroupMKLR, GroupFriendVote, GroupAdamicAdar, GroupRegLaplacian, "co-members", "kernel-mean", "size"}

const (
	sigCoMembers = iota + 4 // indices of the signals past the scorers'
	sigKernelMean
	sigSize
)

// groupSignal sets dst (one entry per group) to signal sig of u
// (groupFeatures' index); f holds f(u, .) for GroupMKLR, else is scratch
// of length N (it is overwritten; nil: allocated when needed). Each signal
// is computed for u alone, from u's row of a kernel and the memberships:
// the combined kernel's row summed over each group's members, and the
// co-members counted over u's groups' members' groups; only the
// regularised Laplacian's comes from sums over all users and groups
// (regLapSums), bounded by RegLaplacianMaxEntries.
func (m *Model) groupSignal(sig int, u subject, f, dst []float64) {
	scratch := func() []float64 {
		if f == nil {
			f = make([]float64, m.ds.N())
		}
		return f
	}
	switch sig {
	case 0:
		m.groupScoresOf(u, f, dst)
	case 1, 2:
		clear(dst)
		for _, v := range u.friends {
			w := 1.0
			if sig == 2 {
				w = 1 / math.Log(math.Max(2, float64(len(m.friends[v]))))
			}
			for _, g := range m.groups[v] {
				dst[g] += w
			}
		}
	case 3:
		u.regLap(dst)
	case sigCoMembers:
		clear(dst)
		for _, h := range u.groups {
			for _, v := range m.members[h] {
				for _, g := range m.groups[v] {
					dst[g]++
				}
			}
		}
	case sigKernelMean:
		row := scratch()
		u.combined(row)
		m.sumOverMembers(row, dst, true)
	case sigSize:
		for g, mem := range m.members {
			dst[g] = math.Log1p(float64(len(mem)))
		}
	}
}

// subject is the user whose groups a scorer scores: a user of the model
// (Model.subject) or one folded into it (foldin.go).
type subject struct {
	index   int   // in the model; -1 for a user folded in that it lacks
	friends []int // visible friends, sorted
	groups  []int // visible groups, sorted
	// combined sets its row of the combined kernel, regLap (one entry a
	// group) its regularised-Laplacian signal.
	combined, regLap func(dst []float64)
}

// subject returns user u of the model as a subject.
func (m *Model) subject(u int) subject {
	return subject{index: u, friends: m.friends[u], groups: m.groups[u],
		combined: func(dst []float64) { m.combined.Row(u, dst) },
		regLap: func(dst []float64) {
			if sums := m.regLapSums(); sums != nil {
				copy(dst, sums[u*len(m.members):(u+1)*len(m.members)])
			} else {
				clear(dst) // no regularised Laplacian: its signal is 0
			}
		}}
}

// regLapSums returns, user-major, the regularised Laplacian applied to
// every group's membership indicator (one CG solve a group rather than one
// a user: BlogCatalog's 39 groups against its 10,312 users), computed on
// first use; nil without a regularised Laplacian (split leaves it out when
// this would exceed RegLaplacianMaxEntries).
func (m *Model) regLapSums() []float64 {
	r := m.regLapGroups
	if m.regLap == nil || r == nil {
		return nil
	}
	r.once.Do(func() {
		n, ng := m.ds.N(), len(m.members)
		r.sums = make([]float64, n*ng)
		// Not cancellable: computed once per model, one solve a group.
		_ = parallel(context.Background(), ng, func() [2][]float64 { return [2][]float64{make([]float64, n), make([]float64, n)} }, func(buf [2][]float64, g int) {
			x, y := buf[0], buf[1]
			clear(x)
			for _, v := range m.members[g] {
				x[v] = 1
			}
			m.regLap.Apply(y, x)
			for v, val := range y {
				r.sums[v*ng+g] = val
			}
		})
	})
	return r.sums
}

// regLapGroups holds regLapSums' result.
type regLapGroups struct {
	once sync.Once
	sums []float64
}

// sumOverMembers sets dst[g] to the sum of row over g's members, divided
// by their number when mean is set.
func (m *Model) sumOverMembers(row, dst []float64, mean bool) {
	for g, members := range m.members {
		s := 0.0
		for _, v := range members {
			s += row[v]
		}
		if mean {
			s /= float64(max(1, len(members)))
		}
		dst[g] = s
	}
}

// groupNeedsStrength says whether the group scorer needs f(u, .).
func groupNeedsStrength(scorer string) bool { return scorer == GroupMKLR || scorer == GroupLearned }

// features sets x (len(groupFeatures) x m, feature-major) to u's
// learned-scorer features: each signal divided by its largest magnitude
// over u's candidate groups (the groups u is not in), so that the weights
// compare a user's groups, not users; size divided by the largest size.
// f is as for groupSignal.
func (m *Model) features(u int, f, x []float64) { m.featuresOf(m.subject(u), f, x) }

// featuresOf is features for any subject.
func (m *Model) featuresOf(u subject, f, x []float64) {
	ng := len(m.members)
	mine := make([]bool, ng)
	for _, g := range u.groups {
		mine[g] = true
	}
	for s := range groupFeatures {
		row := x[s*ng : (s+1)*ng]
		m.groupSignal(s, u, f, row)
		top := 0.0
		for g, v := range row {
			if s == sigSize || !mine[g] {
				top = math.Max(top, math.Abs(v))
			}
		}
		if top > 0 && !math.IsInf(top, 0) {
			for g := range row {
				row[g] /= top
			}
		}
	}
}

// scoreGroups sets dst to the named scorer's score of every group for
// u; f holds f(u, .) when groupNeedsStrength (it is overwritten), and x
// is scratch of len(groupFeatures) x m for GroupLearned (nil: allocated).
func (m *Model) scoreGroups(scorer string, u int, f, dst, x []float64) {
	m.scoreGroupsOf(scorer, m.subject(u), f, dst, x)
}

// scoreGroupsOf is scoreGroups for any subject.
func (m *Model) scoreGroupsOf(scorer string, u subject, f, dst, x []float64) {
	if scorer != GroupLearned {
		m.groupSignal(slices.Index(groupFeatures, scorer), u, f, dst)
		return
	}
	ng := len(m.members)
	if x == nil {
		x = make([]float64, len(groupFeatures)*ng)
	}
	m.featuresOf(u, f, x)
	clear(dst)
	for s, w := range m.groupWeights {
		for g, v := range x[s*ng : (s+1)*ng] {
			dst[g] += w * v
		}
	}
}

// GroupScorer returns the scorer the model ranks groups by (GroupScorers).
func (m *Model) GroupScorer() string { return m.groupScorer }

// GroupRanking returns the groups u is not in best first, the first k of
// them (all for k >= the number of groups), as RecommendGroups ranks them.
func (m *Model) GroupRanking(u, k int) ([]int, error) {
	if err := checkArgs(m, u, k); err != nil {
		return nil, err
	}
	top, _ := m.topGroups(u, k)
	return top, nil
}

var errUnknownGroupScorer = errors.New("unknown group scorer")

// checkGroupScorer maps a stored group scorer and its weights to a known
// one ("": mklr, a model stored before the choice existed).
func checkGroupScorer(name string, weights []float64) (string, error) {
	switch {
	case name == "":
		return GroupMKLR, nil
	case !slices.Contains(GroupScorers, name):
		return "", fmt.Errorf("%w %q (known: %v)", errUnknownGroupScorer, name, GroupScorers)
	case name == GroupLearned && len(weights) != len(groupFeatures):
		return "", fmt.Errorf("group scorer %s has %d weights, want %d", name, len(weights), len(groupFeatures))
	}
	return name, nil
}

// fitListwise fits the conditional logit over each user's candidate
// groups: P(g | u) = exp(w.x_g) / sum_h exp(w.x_h), h over u's candidates,
// maximising the likelihood of the held-out memberships with the L2
// penalty lambda/2 |w|^2, by damped Newton (the loss is convex). A
// listwise fit rather than a logistic one on the pairs: what ranks a
// user's groups is only the differences of w.x among them, and per-user
// levels need no parameter. x is row-major, d columns, one row a
// candidate; user i's candidates are rows start[i] to start[i+1]; pos
// marks the held-out memberships.
func fitListwise(x []float64, pos []bool, start []int, d int, lambda float64) ([]float64, error) {
	if len(pos) == 0 || len(x) != len(pos)*d || start[len(start)-1] != len(pos) {
		return nil, fmt.Errorf("%w: %d labels, %d features of %d columns, users ending at %d", learners.ErrInput, len(pos), len(x), d, start[len(start)-1])
	}
	w := make([]float64, d)
	hess := mat.NewSymDense(d, nil)
	grad := mat.NewVecDense(d, nil)
	step := mat.NewVecDense(d, nil)
	z := make([]float64, len(pos))
	mean := make([]float64, d)
	// loss sets z = x w and returns the penalised negative log-likelihood.
	loss := func(w []float64) float64 {
		l := lambda / 2 * floats.Dot(w, w)
		for i := range len(start) - 1 {
			lse := math.Inf(-1)
			for r := start[i]; r < start[i+1]; r++ {
				z[r] = floats.Dot(w, x[r*d:(r+1)*d])
				lse = logAddExp(lse, z[r])
			}
			for r := start[i]; r < start[i+1]; r++ {
				if pos[r] {
					l += lse - z[r]
				}
			}
		}
		return l
	}
	prev := loss(w)
	next := make([]float64, d)
	for range 50 {
		hess.Zero()
		grad.Zero()
		for j := range d {
			grad.SetVec(j, lambda*w[j])
			hess.SetSym(j, j, lambda)
		}
		for i := range len(start) - 1 {
			k := 0.0 // the user's held-out memberships
			lse := math.Inf(-1)
			for r := start[i]; r < start[i+1]; r++ {
				lse = logAddExp(lse, z[r])
				if pos[r] {
					k++
					floats.AddScaled(grad.RawVector().Data, -1, x[r*d:(r+1)*d])
				}
			}
			// grad += k E_p[x]; hess += k (E_p[x x^T] - E_p[x] E_p[x]^T).
			clear(mean)
			for r := start[i]; r < start[i+1]; r++ {
				p := math.Exp(z[r] - lse)
				row := x[r*d : (r+1)*d]
				floats.AddScaled(mean, p, row)
				hess.SymRankOne(hess, k*p, mat.NewVecDense(d, row))
			}
			floats.AddScaled(grad.RawVector().Data, k, mean)
			hess.SymRankOne(hess, -k, mat.NewVecDense(d, mean))
		}
		var chol mat.Cholesky
		if !chol.Factorize(hess) {
			return nil, errors.New("listwise fit: the Hessian is not positive definite")
		}
		if err := chol.SolveVecTo(step, grad); err != nil {
			return nil, fmt.Errorf("listwise fit: %w", err)
		}
		// Damped Newton: halve the step until the loss does not rise.
		cur := math.Inf(1)
		for t := 1.0; t > 1e-6; t /= 2 {
			for j := range next {
				next[j] = w[j] - t*step.AtVec(j)
			}
			if cur = loss(next); cur <= prev {
				break
			}
		}
		if !(cur <= prev) {
			loss(w) // z back at w
			break
		}
		copy(w, next)
		if prev-cur <= 1e-12*math.Max(1, prev) {
			break
		}
		prev = cur
	}
	return w, nil
}

// logAddExp returns ln(e^a + e^b).
func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// GroupSelection reports how the group scorer was chosen.
type GroupSelection struct {
	// Scorer is the chosen one; Reason says why none was validated.
	Scorer string `json:"scorer"`
	Reason string `json:"reason,omitempty"`
	// Memberships held out, Users scored (theirs, at most
	// SelectOptions.MaxUsers) and each candidate's numbers on them;
	// GroupLearned's are cross-fitted (groupRepeats random halvings of the
	// users, each half ranked by the weights fitted on the other, averaged).
	Memberships, Users int
	Candidates         []GroupValidation
	// Weights are GroupLearned's, fitted on every validation user: what
	// it serves when chosen.
	Weights []GroupWeight
	Took    time.Duration
}

// GroupValidation is one group scorer's mean average precision and
// precision at 1 over the validation users, ranking as RecommendGroups
// does (the groups u is not visibly in, ties in the model's seeded order).
// Gain and SE are the mean and the standard error of its per-user gain
// over GroupLearned in (AP + P@1)/2, what chooseGroupScorer compares (0
// for GroupLearned itself or without it).
type GroupValidation struct {
	Scorer string  `json:"scorer"`
	MAP    float64 `json:"map"`
	P1     float64 `json:"p1"`
	Gain   float64 `json:"gain,omitempty"`
	SE     float64 `json:"se,omitempty"`
}

// GroupWeight is one learned weight of GroupLearned.
type GroupWeight struct {
	Feature string  `json:"feature"`
	Weight  float64 `json:"weight"`
}

const (
	// groupLambda is the L2 penalty of GroupLearned's fit. The features
	// lie in [-1, 1] and the log-likelihood sums over hundreds of users,
	// so it is only to keep separable folds finite: a larger penalty
	// shrinks the fitted weights and lowers their cross-fitted validation
	// numbers (docs/evaluation.md, "Groups: the served scorer").
	groupLambda = 0.1
	// groupRepeats is how many random halvings of the validation users
	// cross-fit GroupLearned: averaging them lowers the variance one
	// random halving adds to its numbers.
	groupRepeats = 5
	// groupFeatureBytes bounds the validation users' features (every
	// signal of every group, 8 bytes each, and as much again for the
	// fit's rows): with many groups fewer users are scored (YouTube's
	// 30,087 groups: 152 users instead of SelectOptions.MaxUsers).
	groupFeatureBytes = 256 << 20
	// fitMaxQuiet is about how many of a user's groups without a signal
	// besides size and mklr GroupLearned's fit keeps (see pairs in
	// selectGroupScorer).
	fitMaxQuiet = 200
)

// selectGroupScorer ranks the held-out memberships of the validation
// model m for their users (at most maxUsers of them) with every group
// scorer, fits GroupLearned on them, and returns chooseGroupScorer's
// choice.
func (m *Model) selectGroupScorer(ctx context.Context, held [][2]int, maxUsers int, rng *rand.Rand, report func(done, of int)) (GroupSelection, error) {
	n, ng, nf := m.ds.N(), len(m.members), len(groupFeatures)
	relevant := make([][]int, n)
	for _, e := range held {
		relevant[e[0]] = append(relevant[e[0]], e[1])
	}
	users := validationUsers(relevant, min(maxUsers, max(2, groupFeatureBytes/(8*nf*max(ng, 1)))), rng)
	sel := GroupSelection{Memberships: len(held), Users: len(users)}
	var done atomic.Int64
	report(0, len(users))
	x := make([]float64, len(users)*nf*ng) // user i's features at i*nf*ng, feature-major
	if err := parallel(ctx, len(users), func() []float64 { return make([]float64, n) }, func(f []float64, i int) {
		m.strength.ScoreAll(users[i], f)
		m.features(users[i], f, x[i*nf*ng:(i+1)*nf*ng])
		report(int(done.Add(1)), len(users))
	}); err != nil {
		return sel, err
	}
	block := func(i, s int) []float64 { return x[(i*nf+s)*ng : (i*nf+s+1)*ng] }
	stats := func(i int, score []float64) (ap, p1 float64) {
		return rankStats(score, m.groupTie, m.groups[users[i]], -1, relevant[users[i]], 1)
	}
	// pairs returns the (user, candidate group) rows of the users i with
	// keep(i), whether the group is a held-out membership, and where each
	// user's rows start. A user's candidates are the groups it is not in
	// that are held out or have a signal besides size and mklr (a friend,
	// a co-member, a kernel neighbour among the members), plus every
	// stride-th of the others (fitMaxQuiet of them or so): with thousands
	// of groups the quiet ones, which differ only by size, would make
	// nearly all the rows of each Newton step.
	pairs := func(keep func(i int) bool) ([]float64, []bool, []int) {
		var rows []float64
		var y []bool
		start := []int{0}
		quiet := func(i, g int) bool {
			for _, sig := range []int{1, 2, 3, sigCoMembers, sigKernelMean} {
				if block(i, sig)[g] != 0 {
					return false
				}
			}
			return true
		}
		for i, u := range users {
			if !keep(i) {
				continue
			}
			stride, seen := max(1, ng/fitMaxQuiet), 0
			for g := range ng {
				if contains(m.groups[u], g) {
					continue
				}
				if quiet(i, g) && !slices.Contains(relevant[u], g) {
					if seen++; seen%stride != 0 {
						continue
					}
				}
				for s := range nf {
					rows = append(rows, block(i, s)[g])
				}
				y = append(y, slices.Contains(relevant[u], g))
			}
			start = append(start, len(y))
		}
		return rows, y, start
	}
	learned := func(w []float64, i int, dst []float64) {
		clear(dst)
		for s, ws := range w {
			floats.AddScaled(dst, ws, block(i, s))
		}
	}
	ap, p1 := make([][]float64, len(GroupScorers)), make([][]float64, len(GroupScorers))
	score := make([]float64, ng)
	for c, name := range GroupScorers {
		if name == GroupRegLaplacian && m.regLap == nil || name == GroupLearned && len(users) < 2 {
			continue
		}
		ap[c], p1[c] = make([]float64, len(users)), make([]float64, len(users))
		if name != GroupLearned {
			for i := range users {
				ap[c][i], p1[c][i] = stats(i, block(i, c))
			}
			continue
		}
		err := crossFit(len(users), groupRepeats, rng, func(train func(int) bool) ([]float64, error) {
			rows, pos, start := pairs(train)
			return fitListwise(rows, pos, start, nf, groupLambda)
		}, func(i int, w []float64) {
			learned(w, i, score)
			a, p := stats(i, score)
			ap[c][i] += a / groupRepeats
			p1[c][i] += p / groupRepeats
		})
		if err != nil {
			return sel, err
		}
		rows, pos, start := pairs(func(int) bool { return true })
		w, err := fitListwise(rows, pos, start, nf, groupLambda)
		if err != nil {
			return sel, err
		}
		for s, ws := range w {
			sel.Weights = append(sel.Weights, GroupWeight{groupFeatures[s], ws})
		}
	}
	best, cands := chooseGroupScorer(ap, p1, slices.Index(GroupScorers, GroupLearned))
	sel.Scorer, sel.Candidates = GroupScorers[best], cands
	return sel, nil
}

// crossFit cross-fits over n items, repeats times: it halves them at
// random (rng), and for each half calls fit with train reporting the
// other half's items, then score(i, w) for each item i of the half with
// the weights w fitted. Each item is scored repeats times, never by
// weights fitted on it.
func crossFit(n, repeats int, rng *rand.Rand, fit func(train func(i int) bool) ([]float64, error), score func(i int, w []float64)) error {
	for range repeats {
		half := rng.Perm(n) // item i is in half half[i] % 2
		for k := range 2 {
			w, err := fit(func(i int) bool { return half[i]%2 != k })
			if err != nil {
				return err
			}
			for i := range n {
				if half[i]%2 == k {
					score(i, w)
				}
			}
		}
	}
	return nil
}

// chooseGroupScorer chooses among the candidates c with per-user
// validation numbers ap[c] and p1[c] (nil: not a candidate) by the
// per-user utility (AP + P@1)/2, both numbers the group task is judged
// by: it keeps the preferred candidate (GroupLearned) unless others'
// mean utility exceeds its own by more than one standard error of their
// paired per-user difference, and then takes the best mean utility of
// those (ties: the lower index); without the preferred one, the best
// mean utility. Preferring the learned combination rather than the
// simplest scorer within the error (the usual one-standard-error rule):
// the single scorers are points of its weight space, its numbers are
// cross-fitted (out of sample, so not flattered by its extra weights),
// and each single vote trades one number for the other (Adamic-Adar is
// strong at the top, the regularised Laplacian deeper down) where a
// combination can hold both. It returns the choice's index and every
// candidate's numbers, in index order.
func chooseGroupScorer(ap, p1 [][]float64, preferred int) (int, []GroupValidation) {
	hasPreferred := preferred >= 0 && ap[preferred] != nil
	var cands []GroupValidation
	best, bestU := -1, 0.0
	for c := range ap {
		if ap[c] == nil {
			continue
		}
		v := GroupValidation{Scorer: GroupScorers[c], MAP: mean(ap[c]), P1: mean(p1[c])}
		if hasPreferred && c != preferred {
			d := make([]float64, len(ap[c]))
			for i := range d {
				d[i] = (ap[c][i] + p1[c][i] - ap[preferred][i] - p1[preferred][i]) / 2
			}
			v.Gain, v.SE = mean(d), stdErr(d)
		}
		cands = append(cands, v)
		if hasPreferred && (c == preferred || v.Gain <= v.SE) {
			continue
		}
		if u := (v.MAP + v.P1) / 2; best < 0 || u > bestU {
			best, bestU = c, u
		}
	}
	if best < 0 {
		best = preferred
	}
	return best, cands
}

// stdErr returns the standard error of the mean of x (0 for fewer than
// two values).
func stdErr(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	mu, ss := mean(x), 0.0
	for _, v := range x {
		ss += (v - mu) * (v - mu)
	}
	return math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}

// learnedWeights returns the weights of sel's GroupLearned fit, in
// groupFeatures order.
func (sel GroupSelection) learnedWeights() []float64 {
	w := make([]float64, len(sel.Weights))
	for s, gw := range sel.Weights {
		w[s] = gw.Weight
	}
	return w
}
