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
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/mklr"
)

// The group scorers a model can rank groups by (Train chooses one on
// held-out training memberships: SelectOptions). Each scores every group
// for a user u from g's visible members.
const (
	// GroupMKLR is s(g, u), the expected number of u's friends among g's
	// members: 1 for a friend, the strength model's prior-corrected
	// probability for any other member (groupSignal's deviation note).
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

// groupSignal sets dst[i] to signal sig (groupFeatures' index) of u and
// group gs[i], or of u and group i for gs nil (every group). Each signal
// is computed for u alone and is the same whichever groups are asked
// for, so ranking candidate groups ranks them as ranking every group
// does. The sums over a group's members read whole rows when rows is set
// (f holds f(u, .) for GroupMKLR; it is overwritten, also as scratch for
// the combined kernel's row) and one entry a member otherwise (f
// unused; only for a subject whose entries are the model's: rowsFor
// says which is cheaper). acc has one entry a group, all
// zero, and is left so (unused for gs nil). The regularised Laplacian's
// signal is precomputed for every user and group up to
// RegLaplacianMaxEntries (regLapSums) and pushed from u on demand above
// (regLapPushed).
func (m *Model) groupSignal(sig int, u subject, gs []int, rows bool, f, acc, dst []float64) {
	switch sig {
	case 0:
		// s(g, u), the expected number of u's friends among g's members
		// j != u: 1 for a friend, Strength(u, j) for the others.
		// DEVIATION: section 7.4.3 sums f itself; with mklr's intercept
		// (about -2.5) every member adds a negative term and the largest
		// groups rank last. Summing the uncorrected sigmoid(f), fitted on
		// balanced pairs, gives every member a sizeable share and ranks big
		// groups first. The prior-corrected strengths, with friends counted
		// as friends, rank neither by size (docs/evaluation.md, "The group
		// score").
		if rows {
			for j, x := range f {
				f[j] = sigmoid(x - m.offset)
			}
			for _, j := range u.friends {
				f[j] = 1
			}
		}
		cached := m.cachedSums(u, gs, rows)
		m.memberSums(u.index, gs, dst, false, rows, cached, f, func(j int) float64 {
			if contains(u.friends, j) {
				return 1
			}
			return m.Strength(u.index, j)
		})
		m.largeSignal(sig, u.index, gs, cached, acc, dst)
	case 1, 2:
		m.spread(gs, acc, dst, func(add func(g int, x float64)) {
			for _, v := range u.friends {
				x := 1.0
				if sig == 2 {
					x = hubWeight(len(m.friends[v]))
				}
				for _, g := range m.groups[v] {
					add(g, x)
				}
			}
		})
	case 3:
		m.spread(gs, acc, dst, u.regLap())
	case sigCoMembers:
		m.spread(gs, acc, dst, func(add func(g int, x float64)) {
			for _, h := range u.groups {
				for _, v := range m.members[h] {
					for _, g := range m.groups[v] {
						add(g, 1)
					}
				}
			}
		})
	case sigKernelMean:
		if rows {
			u.combined(f)
		}
		cached := m.cachedSums(u, gs, rows)
		m.memberSums(u.index, gs, dst, true, rows, cached, f, func(j int) float64 { return m.combined.At(u.index, j) })
		m.largeSignal(sig, u.index, gs, cached, acc, dst)
	case sigSize:
		for i := range dst {
			dst[i] = math.Log1p(float64(len(m.members[groupAt(gs, i)])))
		}
	}
}

// subject is the user whose groups a scorer scores: a user of the model
// (Model.subject) or one folded into it (foldin.go).
type subject struct {
	index   int   // in the model; -1 for a user folded in that it lacks
	friends []int // visible friends, sorted
	groups  []int // visible groups, sorted
	// combined sets its row of the combined kernel; regLap returns a walk
	// over its regularised-Laplacian signal by group (spread's), computed
	// once so that walking twice costs no second push.
	combined func(dst []float64)
	regLap   func() func(add func(g int, x float64))
	// own: its kernel entries are the model's, so sums over a group's
	// members may read them one member at a time; a folded user's are
	// only in its rows (groupSignal's rows).
	own bool
}

// subject returns user u of the model as a subject.
func (m *Model) subject(u int) subject {
	return subject{index: u, friends: m.friends[u], groups: m.groups[u], own: true,
		combined: func(dst []float64) { m.combined.Row(u, dst) },
		regLap:   func() func(add func(g int, x float64)) { return m.regLapOf(u) }}
}

// rowsOf is rowsFor for subject u: always rows for a folded user.
func (m *Model) rowsOf(u subject, gs []int) bool { return !u.own || m.rowsFor(u.index, gs) }

// groupAt is the group of entry i: gs[i], or i for gs nil (every group).
func groupAt(gs []int, i int) int {
	if gs == nil {
		return i
	}
	return gs[i]
}

// spread sets dst to what walk adds up by group, for the groups gs (nil:
// every group, added up in dst itself; else in acc, all zero and left
// so, by walking again).
func (m *Model) spread(gs []int, acc, dst []float64, walk func(add func(g int, x float64))) {
	if gs == nil {
		clear(dst)
		walk(func(g int, x float64) { dst[g] += x })
		return
	}
	walk(func(g int, x float64) { acc[g] += x })
	for i, g := range gs {
		dst[i] = acc[g]
	}
	walk(func(g int, _ float64) { acc[g] = 0 })
}

// memberSums sets dst[i] to the sum over gs[i]'s members j != u (groupAt)
// of row[j] (rows set) or at(j), divided by the group's size when mean
// is set; it leaves dst[i] for a group whose sums are cached
// (cachedSums).
func (m *Model) memberSums(u int, gs []int, dst []float64, mean, rows bool, cached func(g int) bool, row []float64, at func(j int) float64) {
	for i := range dst {
		if cached(groupAt(gs, i)) {
			continue
		}
		members := m.members[groupAt(gs, i)]
		s := 0.0
		for _, j := range members {
			switch {
			case j == u:
			case rows:
				s += row[j]
			default:
				s += at(j)
			}
		}
		if mean {
			s /= float64(max(1, len(members)))
		}
		dst[i] = s
	}
}

// The sums over the members of groups read whole rows of every user once
// the entries they would read one at a time cost more: an entry (f(u, j)
// from the strength model's imports and its kernel terms' sparse dot
// products, or a visit of the large groups' walk) costs about
// 2|S| + memberEntryCost, a row's entry 2|S| + rowEntryCost (a
// matrix-vector product, a sigmoid). Set from the CPU a ranking took on
// the generated 300,000 users (|S| = 1: one at a time cost about 12 times
// a row's entry) and YouTube (|S| = 27: about 4 times).
const memberEntryCost, rowEntryCost = 200, 16

// walkVisitCost is what a visit of the large groups' walk (largeSignal)
// costs in entries one at a time: on the generated 300,000 and 1,000,000
// users, the rankings that took the walk at 1 cost about 2.4 times the rows
// they replaced.
const walkVisitCost = 3

// rowsFor says whether groupSignal should read whole rows for user u and
// gs (nil: every group): the members of the groups that are not large,
// plus the users the large groups' sums visit (walkCost), cost more one
// at a time than the rows.
func (m *Model) rowsFor(u int, gs []int) bool {
	if gs == nil {
		return true
	}
	imports := 2 * len(m.strength.Alpha())
	limit := m.ds.N() * (imports + rowEntryCost) / (imports + memberEntryCost)
	total, s := 0, m.largeSums()
	if s != nil {
		total = walkVisitCost * m.walkCost(s, u, gs)
	}
	for _, g := range gs {
		if s.isLarge(g) {
			continue
		}
		if total += len(m.members[g]); total > limit {
			return true
		}
	}
	return total > limit
}

// regLapOf returns the walk over user u's regularised-Laplacian signal
// (subject.regLap): its precomputed sums (regLapSums), or above
// RegLaplacianMaxEntries its pushed row spread over the groups of the
// users it touches (regLapPushed). Without a regularised Laplacian the
// walk adds nothing: the signal is 0.
func (m *Model) regLapOf(u int) func(add func(g int, x float64)) {
	if m.regLapGroups.push {
		return m.regLapPushed([]int{u}, []float64{1}, regLapPushEps)
	}
	sums, ng := m.regLapSums(), len(m.members)
	return func(add func(g int, x float64)) {
		if sums == nil {
			return
		}
		for g, x := range sums[u*ng : (u+1)*ng] {
			add(g, x)
		}
	}
}

// regLapPushEps is the eps of the pushes of the regularised-Laplacian
// group signal above RegLaplacianMaxEntries (kernelmath's
// RegLaplacian.Push: a user's entries K(u, v) within eps sqrt(d_u d_v),
// fewer than 2/eps edges visited at gamma 1). docs/scaling.md measured
// the top-10 agreement with the exact sums on YouTube and the cost.
const regLapPushEps = 3e-6

// regLapPushed returns a walk over the regularised-Laplacian signal of x
// (sparse: x[i] at users idx[i]): for each group g, the sum over g's
// members v of (K x)_v, K x pushed within eps and spread over the groups
// of the users it touches, so that it costs the push's neighbourhood,
// not users times groups.
func (m *Model) regLapPushed(idx []int, x []float64, eps float64) func(add func(g int, x float64)) {
	rl, ok := m.regLap.(*kernelmath.RegLaplacian)
	if !ok {
		return func(func(int, float64)) {} // none built: the signal is 0
	}
	vs, ys, _, err := rl.Push(idx, x, eps)
	if err != nil {
		// Unreachable: the model's own users, weights positive and finite.
		panic(fmt.Sprintf("recommend: regularised-Laplacian push: %v", err))
	}
	return func(add func(g int, x float64)) {
		for i, v := range vs {
			for _, g := range m.groups[v] {
				add(g, ys[i])
			}
		}
	}
}

// regLapSums returns, user-major, the regularised Laplacian applied to
// every group's membership indicator (one CG solve a group rather than one
// a user: BlogCatalog's 39 groups against its 10,312 users), computed on
// first use; nil without a regularised Laplacian or above
// RegLaplacianMaxEntries (regLapGroups.push).
func (m *Model) regLapSums() []float64 {
	r := m.regLapGroups
	if m.regLap == nil || r == nil || r.push {
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

// regLapGroups holds regLapSums' result, or says that the signal is
// pushed per user instead (push: users times groups exceed
// RegLaplacianMaxEntries).
type regLapGroups struct {
	once sync.Once
	sums []float64
	push bool
}

// groupNeedsStrength says whether the group scorer needs f(u, .).
func groupNeedsStrength(scorer string) bool { return scorer == GroupMKLR || scorer == GroupLearned }

// features sets x (len(groupFeatures) x len(gs), feature-major; gs nil:
// every group) to the signals of u that GroupLearned weighs, as they are:
// its weights carry the scales (selectGroupScorer), so a group's score
// does not depend on the other groups ranked. rows, f and acc are as for
// groupSignal.
//
// With groupPerUser, gs must hold every group u is not in (or be nil),
// and each signal but size is divided by its largest magnitude over them.
func (m *Model) features(u subject, gs []int, rows bool, f, acc, x []float64) {
	c := len(x) / len(groupFeatures)
	for s := range groupFeatures {
		row := x[s*c : (s+1)*c]
		m.groupSignal(s, u, gs, rows, f, acc, row)
		if !m.groupPerUser || s == sigSize {
			continue
		}
		top := 0.0
		for i, v := range row {
			if !contains(u.groups, groupAt(gs, i)) {
				top = math.Max(top, math.Abs(v))
			}
		}
		if top > 0 && !math.IsInf(top, 0) {
			floats.Scale(1/top, row)
		}
	}
}

// scoreGroups sets dst to the named scorer's score of every group for
// u; f holds f(u, .) when groupNeedsStrength (it is overwritten), and x
// is scratch of len(groupFeatures) x m for GroupLearned (nil: allocated).
func (m *Model) scoreGroups(scorer string, u int, f, dst, x []float64) {
	m.scoreGroupList(scorer, m.subject(u), nil, true, f, nil, dst, x)
}

// scoreGroupList sets dst[i] to the named scorer's score of u and group
// gs[i] (gs nil: every group); rows, f and acc are as for groupSignal,
// and x is scratch of len(groupFeatures) x len(dst) for GroupLearned
// (nil: allocated).
func (m *Model) scoreGroupList(scorer string, u subject, gs []int, rows bool, f, acc, dst, x []float64) {
	if rows && f == nil {
		f = make([]float64, m.ds.N())
	}
	if scorer != GroupLearned {
		m.groupSignal(slices.Index(groupFeatures, scorer), u, gs, rows, f, acc, dst)
		return
	}
	c := len(dst)
	if len(x) < len(groupFeatures)*c {
		x = make([]float64, len(groupFeatures)*c)
	}
	x = x[:len(groupFeatures)*c]
	m.features(u, gs, rows, f, acc, x)
	clear(dst)
	for s, w := range m.groupWeights {
		floats.AddScaled(dst, w, x[s*c:(s+1)*c])
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
// marks the held-out memberships. offset (nil: none) adds to each row's
// w.x: ln(1/q) for a row kept with probability q from a sample of a
// user's groups, which corrects the likelihood for the sampling (a row
// kept with q = 1/m counts as its m copies).
func fitListwise(x []float64, pos []bool, start []int, d int, lambda float64, offset []float64) ([]float64, error) {
	if len(pos) == 0 || len(x) != len(pos)*d || start[len(start)-1] != len(pos) || offset != nil && len(offset) != len(pos) {
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
				if offset != nil {
					z[r] += offset[r]
				}
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
	// PerUser: GroupLearned's signals were divided, for each user, by
	// their largest magnitude over the groups the user is not in (size by
	// the largest size), which needs every group ranked: networks of at
	// most DefaultPrecomputeMaxUsers users whose validation features fit
	// in memory. Larger ones rank candidate groups, over which such a
	// maximum would change, so their signals are taken as they are (fixed
	// scales only): on ego-Facebook the fixed scales alone validated below
	// the per-user ones (MAP .710 against .752, seed 1).
	PerUser bool `json:"per_user_scales"`
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

// GroupWeight is one learned weight of GroupLearned: Weight multiplies
// the signal as it is (what is served), Weight x Scale the signal over
// its scale, as it was fitted (comparable between signals).
type GroupWeight struct {
	Feature string  `json:"feature"`
	Weight  float64 `json:"weight"`
	Scale   float64 `json:"scale"`
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
	// signal of every group a user ranks, 8 bytes each): with many groups
	// the users rank their candidate groups instead of every group
	// (selectGroupScorer).
	groupFeatureBytes = 256 << 20
	// fitMaxQuiet is about how many of a user's groups without a signal
	// besides size and mklr GroupLearned's fit keeps (see pairs in
	// selectGroupScorer).
	fitMaxQuiet = 200
	// fitMaxRows is about how many of a user's groups that are not held
	// out GroupLearned's fit keeps at most (see pairs in
	// selectGroupScorer).
	fitMaxRows = 400
)

// selectGroupScorer ranks the held-out memberships of the validation
// model m for their users (at most maxUsers of them) with every group
// scorer, fits GroupLearned on them, and returns chooseGroupScorer's
// choice. Each user ranks every group it is not in while maxUsers users'
// features fit in groupFeatureBytes, else its candidate groups
// (groupCandidates, as served on demand), users being taken in a seeded
// order until their features fill it. GroupLearned's signals are divided
// by fixed scales for the fit (each signal's largest magnitude over a
// user's groups, averaged over the users; size's over every group), and
// its served weights are the fitted ones over those scales: a weight on
// the signal itself, the same for every user and every set of groups.
func (m *Model) selectGroupScorer(ctx context.Context, held [][2]int, maxUsers int, rng *rand.Rand, report func(done, of int)) (GroupSelection, error) {
	n, ng, nf := m.ds.N(), len(m.members), len(groupFeatures)
	var sel GroupSelection
	relevant := make([][]int, n)
	for _, e := range held {
		relevant[e[0]] = append(relevant[e[0]], e[1])
	}
	users := validationUsers(relevant, maxUsers, rng)
	budget := groupFeatureBytes / (8 * nf) // feature rows
	lists := make([][]int, 0, len(users))
	if len(users)*ng <= budget {
		sel.PerUser = n <= DefaultPrecomputeMaxUsers
		for _, u := range users {
			lists = append(lists, slices.DeleteFunc(m.allGroups(), func(g int) bool { return contains(m.groups[u], g) }))
		}
	} else {
		cm := m.WithCandidates()
		seen, acc := make([]bool, n), make([]float64, n)
		rng.Shuffle(len(users), func(i, j int) { users[i], users[j] = users[j], users[i] })
		for _, u := range users {
			gs := cm.groupCandidates(u, 0, seen, acc)
			if budget -= len(gs); budget < 0 && len(lists) >= 2 {
				break
			}
			lists = append(lists, gs)
		}
		users = users[:len(lists)]
	}
	off := make([]int, len(users)+1) // user i's features at off[i], feature-major
	for i, gs := range lists {
		off[i+1] = off[i] + nf*len(gs)
	}
	sel.Memberships, sel.Users = len(held), len(users)
	m.groupPerUser = sel.PerUser // features reads it
	var done atomic.Int64
	report(0, len(users))
	x := make([]float64, off[len(users)])
	type scratch struct{ f, acc []float64 }
	if err := parallel(ctx, len(users), func() scratch { return scratch{make([]float64, n), make([]float64, ng)} }, func(b scratch, i int) {
		rows := m.rowsFor(users[i], lists[i])
		if rows {
			m.strength.ScoreAll(users[i], b.f)
		}
		m.features(m.subject(users[i]), lists[i], rows, b.f, b.acc, x[off[i]:off[i+1]])
		report(int(done.Add(1)), len(users))
	}); err != nil {
		return sel, err
	}
	block := func(i, s int) []float64 {
		c := len(lists[i])
		return x[off[i]+s*c : off[i]+(s+1)*c]
	}
	scale := groupScales(len(users), block, m.members)
	for i := range users {
		for s := range nf {
			floats.Scale(1/scale[s], block(i, s))
		}
	}
	stats := func(i int, score []float64) (ap, p1 float64) {
		return listStats(lists[i], score, m.groupTie, relevant[users[i]], ng-len(m.groups[users[i]]))
	}
	// pairs returns the (user, candidate group) rows of the users i with
	// keep(i), whether the group is a held-out membership, and where each
	// user's rows start. A user's rows are its groups that are held out or
	// have a signal besides size and mklr (a friend, a co-member, a
	// kernel neighbour among the members), plus every stride-th of the
	// others (fitMaxQuiet of them or so): with thousands of groups the
	// quiet ones, which differ only by size, would make nearly all the
	// rows of each Newton step. Then at most about fitMaxRows of the
	// groups not held out are kept, every step-th, so that a user with
	// thousands of candidate groups costs the fit no more than others.
	// Each kept row stands for the rows its sampling left out: its offset
	// is ln(1/q), q its chance of being kept (fitListwise), so the
	// likelihood is the one over every group, estimated.
	pairs := func(keep func(i int) bool) ([]float64, []bool, []int, []float64) {
		var rows, offset []float64
		var y []bool
		start := []int{0}
		quiet := func(i, j int) bool {
			for _, sig := range []int{1, 2, 3, sigCoMembers, sigKernelMean} {
				if block(i, sig)[j] != 0 {
					return false
				}
			}
			return true
		}
		for i, u := range users {
			if !keep(i) {
				continue
			}
			held := func(j int) bool { return slices.Contains(relevant[u], lists[i][j]) }
			var kept []int
			copies := make(map[int]float64) // a kept row's 1/q, when not 1
			stride, seen := max(1, len(lists[i])/fitMaxQuiet), 0
			for j := range lists[i] {
				if quiet(i, j) && !held(j) {
					if seen++; seen%stride != 0 {
						continue
					}
					copies[j] = float64(stride)
				}
				kept = append(kept, j)
			}
			if others := len(kept) - len(relevant[u]); others > fitMaxRows {
				step, seen := (others+fitMaxRows-1)/fitMaxRows, 0
				kept = slices.DeleteFunc(kept, func(j int) bool {
					if held(j) {
						return false
					}
					seen++
					copies[j] = float64(step) * max(1, copies[j])
					return seen%step != 0
				})
			}
			for _, j := range kept {
				for s := range nf {
					rows = append(rows, block(i, s)[j])
				}
				y = append(y, held(j))
				offset = append(offset, math.Log(max(1, copies[j])))
			}
			start = append(start, len(y))
		}
		return rows, y, start, offset
	}
	learned := func(w []float64, i int, dst []float64) {
		clear(dst)
		for s, ws := range w {
			floats.AddScaled(dst, ws, block(i, s))
		}
	}
	ap, p1 := make([][]float64, len(GroupScorers)), make([][]float64, len(GroupScorers))
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
			rows, pos, start, offset := pairs(train)
			return fitListwise(rows, pos, start, nf, groupLambda, offset)
		}, func(i int, w []float64) {
			score := make([]float64, len(lists[i]))
			learned(w, i, score)
			a, p := stats(i, score)
			ap[c][i] += a / groupRepeats
			p1[c][i] += p / groupRepeats
		})
		if err != nil {
			return sel, err
		}
		rows, pos, start, offset := pairs(func(int) bool { return true })
		w, err := fitListwise(rows, pos, start, nf, groupLambda, offset)
		if err != nil {
			return sel, err
		}
		for s, ws := range w {
			sel.Weights = append(sel.Weights, GroupWeight{Feature: groupFeatures[s], Weight: ws / scale[s], Scale: scale[s]})
		}
	}
	best, cands := chooseGroupScorer(ap, p1, slices.Index(GroupScorers, GroupLearned))
	sel.Scorer, sel.Candidates = GroupScorers[best], cands
	return sel, nil
}

// groupScales returns the scale of each signal of the users' features
// (block(i, s): user i's signal s over its groups): the largest magnitude
// over a user's groups, averaged over the users; for size, the largest
// over every group (members). A scale of 0 or not finite is 1.
func groupScales(users int, block func(i, s int) []float64, members [][]int) []float64 {
	scale := make([]float64, len(groupFeatures))
	for s := range scale {
		if s == sigSize {
			for _, mem := range members {
				scale[s] = math.Max(scale[s], math.Log1p(float64(len(mem))))
			}
		} else {
			for i := range users {
				top := 0.0
				for _, v := range block(i, s) {
					top = math.Max(top, math.Abs(v))
				}
				scale[s] += top / float64(users)
			}
		}
		if !(scale[s] > 0) || math.IsInf(scale[s], 0) {
			scale[s] = 1
		}
	}
	return scale
}

// listStats is rankStats over one user's groups gs (sorted) ranked by
// score (score[i] is gs[i]'s), ties in tie order, with P@1: a relevant
// group that is not in gs counts as ranked after them, in the middle of
// the others of the user's rest groups (rest in all, gs among them),
// where a ranking over gs padded with other groups puts it on average.
func listStats(gs []int, score []float64, tie []int, relevant []int, rest int) (ap, p1 float64) {
	ranks := make([]int, len(relevant))
	for r, g := range relevant {
		i, ok := slices.BinarySearch(gs, g)
		if !ok {
			ranks[r] = len(gs) + (rest-len(gs))/2
			continue
		}
		for j := range gs {
			if score[j] > score[i] || score[j] == score[i] && tie[gs[j]] < tie[g] {
				ranks[r]++
			}
		}
	}
	slices.Sort(ranks)
	for i, r := range ranks {
		ap += float64(i+1) / float64(r+1)
	}
	if len(ranks) > 0 && ranks[0] == 0 {
		p1 = 1
	}
	return ap / float64(len(relevant)), p1
}

// allGroups returns every group's index, in order.
func (m *Model) allGroups() []int {
	out := make([]int, len(m.members))
	for g := range out {
		out[g] = g
	}
	return out
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
