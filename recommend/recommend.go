package recommend

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"sync"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/social"
)

// FriendRec is one recommended friend and why.
type FriendRec struct {
	User string `json:"user"`
	// Score is what the model ranks candidates by (Model.FriendScorer,
	// chosen on held-out training friendships): for mklr f(u, v), the
	// log-odds of friendship on the balanced training sample (about as
	// many non-friend pairs as friends: LogOdds); for kernel the combined
	// kernel K(u, v); for adamic-adar the Adamic-Adar score (plus its
	// tie-break, under 1e-9 of it). Strength is always the strength
	// model's probability that u and v are friends, corrected to the
	// population's rate of friendship (Model.Strength): mklr is trained
	// whichever scorer ranks, and gives the group scores.
	Score    float64 `json:"score"`
	Strength float64 `json:"strength"`
	// LogOdds is f(u, v) of the strength model, in parts: Intercept +
	// KernelTerm + Pairs + the contributions' terms.
	LogOdds   float64 `json:"log_odds"`
	Intercept float64 `json:"intercept"` // b
	// KernelTerm is gamma K(u, v), the combined kernel's own term (mklr's
	// Options.KernelTerm; off, 0, by default).
	KernelTerm float64 `json:"kernel_term,omitempty"`
	// Pairs is the import pairs' part sum_s alpha_s P((u, v), s).
	Pairs float64 `json:"pairs"`
	// Kernel is the combined kernel K_u(u, v), the sum of the
	// contributions' parts theta_t K^t(u, v). Contributions are ordered by
	// Relative, largest first; every base kernel is listed.
	Kernel        float64        `json:"kernel"`
	Contributions []Contribution `json:"contributions"`
	// TypicalLogOdds is the mean of f(u, c) over u's candidates c (the
	// users neither u nor u's friends, those RecommendFriends ranks), and
	// PairsRelative the import pairs' part of LogOdds - TypicalLogOdds: it
	// and the contributions' Relative add up to that difference.
	TypicalLogOdds float64 `json:"typical_log_odds"`
	PairsRelative  float64 `json:"pairs_relative"`
	// Modalities sums the contributions' Relative by the evidence their
	// kernels read, largest first: what the explanation's bars show.
	Modalities []ModalityPart `json:"modalities"`
	// CommonFriends lists up to MaxListed of the friends u and v share;
	// CommonFriendCount counts them all.
	CommonFriends     []string `json:"common_friends"`
	CommonFriendCount int      `json:"common_friend_count"`
}

// Contribution is one base kernel's part of the combined kernel, and of
// the score: mklr gives each base kernel its own term gamma_t K^t(u, v) in
// f besides the combined kernel's (learners/mklr, Options.Base), so a
// kernel whose combination weight theta_t is 0 can still move f. What
// moves f is its Coefficient, gamma_t + gamma theta_t; Relative is what
// that moves f(u, v) by against u's typical candidate, 0 exactly when the
// Coefficient is 0 or K^t(u, v) is the candidates' mean.
type Contribution struct {
	Kernel      string  `json:"kernel"`
	Weight      float64 `json:"weight"`      // theta_t
	Value       float64 `json:"value"`       // K^t(u, v)
	Part        float64 `json:"part"`        // theta_t K^t(u, v)
	Term        float64 `json:"term"`        // gamma_t K^t(u, v), its term in LogOdds
	Coefficient float64 `json:"coefficient"` // gamma_t + gamma theta_t
	// Relative is Coefficient (K^t(u, v) - mean_c K^t(u, c)) over u's
	// candidates c (FriendRec.TypicalLogOdds).
	Relative float64 `json:"relative"`
}

// ModalityPart is one kind of evidence's part of f(u, v) relative to u's
// typical candidate: the sum of its kernels' Relative.
type ModalityPart struct {
	Modality string   `json:"modality"`
	Kernels  []string `json:"kernels"`
	Relative float64  `json:"relative"`
}

// modalities names the evidence each kernel reads. The friends,
// Adamic-Adar and Laplacian kernels all read the friend graph, and their
// terms are nearly collinear (mklr gives the first two opposite signs on
// the demo): only their sum says what common friends do.
var modalities = map[string]string{
	social.KernelVisual: "photos", social.KernelTextual: "tags", social.KernelComments: "comments",
	social.KernelGroups: "groups", social.KernelLocation: "places", social.KernelFaves: "faves",
	social.KernelFriends: "common friends", social.KernelAdamicAdar: "common friends", social.KernelRegLaplacian: "common friends",
}

// modality is the evidence kernel reads: its modalities entry, else its
// own name (a kernel added later).
func modality(kernel string) string {
	if m, ok := modalities[kernel]; ok {
		return m
	}
	return kernel
}

// GroupRec is one recommended group and why.
type GroupRec struct {
	Group string `json:"group"`
	// Score is what the model ranks groups by (Model.GroupScorer, chosen
	// on held-out training memberships; GroupScorers documents each): for
	// mklr s(g, u), the expected number of u's friends in g; for learned
	// the logistic regression's log-odds but its intercept.
	Score   float64 `json:"score"`
	Members int     `json:"members"`
	// Friends lists up to MaxListed of u's friends in the group;
	// FriendCount counts them all.
	Friends     []string `json:"friends"`
	FriendCount int      `json:"friend_count"`
	// Scorer is the group scorer that ranked the group and Signals what
	// it read: the scorer's own signal (Weight 1), or for learned each
	// signal's weight (its scale fixed at training folded in), value as it
	// is and Part, which add up to Score.
	Scorer  string        `json:"scorer"`
	Signals []GroupSignal `json:"signals"`
}

// GroupSignal is one signal's part of a group's score (groupFeatures
// describes each).
type GroupSignal struct {
	Signal string  `json:"signal"`
	Weight float64 `json:"weight"`
	Value  float64 `json:"value"`
	Part   float64 `json:"part"` // Weight * Value
}

// MaxListed caps the users an explanation names.
const MaxListed = 10

// Friends is the answer of RecommendFriends: the top k, best first, or
// none and the Reason why.
type Friends struct {
	Items  []FriendRec `json:"items"`
	Reason string      `json:"reason,omitempty"`
}

// Groups is the answer of RecommendGroups.
type Groups struct {
	Items  []GroupRec `json:"items"`
	Reason string     `json:"reason,omitempty"`
}

func checkArgs(m *Model, u, k int) error {
	if u < 0 || u >= m.ds.N() {
		return fmt.Errorf("%w: user index %d out of range [0, %d)", learners.ErrInput, u, m.ds.N())
	}
	if k < 1 {
		return fmt.Errorf("%w: k must be at least 1, got %d", learners.ErrInput, k)
	}
	return nil
}

func noDataReason(id string) string {
	return fmt.Sprintf("user %s has no friends, groups, photos, tags, places, faves or comments: there is nothing to recommend from", id)
}

// RecommendFriends ranks the users that are neither u nor u's friends by
// the model's friend scorer (FriendScores) and returns the top k (fewer when there are fewer), ties in a
// seeded order. A user with no data at all gets no items and a reason.
func (m *Model) RecommendFriends(u, k int) (*Friends, error) {
	if err := checkArgs(m, u, k); err != nil {
		return nil, err
	}
	return m.friendsAnswer(m.ds.Users[u].ID, m.noData[u], m.pairsOf(u), func() ([]int, []float64) { return m.topFriends(u, k) }), nil
}

// friendsAnswer is RecommendFriends' answer for the user id (u) with
// noData set when it has no data at all, rank giving its top friends and
// their scores.
func (m *Model) friendsAnswer(id string, noData bool, u pairSource, rank func() ([]int, []float64)) *Friends {
	if noData {
		return &Friends{Items: []FriendRec{}, Reason: noDataReason(id)}
	}
	top, score := rank()
	if len(top) == 0 {
		return &Friends{Items: []FriendRec{}, Reason: fmt.Sprintf("user %s is already friends with every other user", id)}
	}
	out := &Friends{Items: make([]FriendRec, len(top))}
	typ := m.typicalCandidate(u)
	for r, v := range top {
		out.Items[r] = m.explain(u, v, typ)
		out.Items[r].Score = score[r]
	}
	return out
}

// pairSource is what an explanation reads of u: a user of the model
// (pairsOf) or one folded into it (foldin.go).
type pairSource struct {
	index   int   // in the model; -1 for a user folded in that it lacks
	friends []int // visible, sorted
	// kernelRow sets u's row of base kernel t, kernel gives one entry of
	// it; scoreRow sets f(u, .), score gives f(u, v); combined gives the
	// combined kernel's entry.
	kernelRow       func(t int, dst []float64)
	kernel          func(t, v int) float64
	scoreRow        func(dst []float64)
	score, combined func(v int) float64
	// own: u as the model has it, whose typical candidate comes from the
	// row sums kept with the model (typicalCandidate).
	own bool
}

// pairsOf returns user u of the model as a pairSource.
func (m *Model) pairsOf(u int) pairSource {
	return pairSource{index: u, friends: m.friends[u], own: true,
		kernelRow: func(t int, dst []float64) { m.kernels[t].K.Row(u, dst) },
		kernel:    func(t, v int) float64 { return m.kernels[t].K.At(u, v) },
		scoreRow:  func(dst []float64) { m.strength.ScoreAll(u, dst) },
		score:     func(v int) float64 { return m.strength.Score(u, v) },
		combined:  func(v int) float64 { return m.combined.At(u, v) }}
}

// ExplainFriend explains the strength model's f(u, v) for any pair of
// users, friends or not, as RecommendFriends explains its items (Score is
// left 0: it is the friend scorer's, for candidates only).
func (m *Model) ExplainFriend(u, v int) (FriendRec, error) {
	if err := checkArgs(m, u, 1); err != nil {
		return FriendRec{}, err
	}
	if v < 0 || v >= m.ds.N() || v == u {
		return FriendRec{}, fmt.Errorf("%w: user index %d out of range [0, %d) or the user itself", learners.ErrInput, v, m.ds.N())
	}
	src := m.pairsOf(u)
	return m.explain(src, v, m.typicalCandidate(src)), nil
}

// typical holds the means over u's candidates (the users neither u nor
// u's friends, those RecommendFriends ranks) of each kernel's row and of
// f: the typical candidate the explanations compare with.
type typical struct {
	kernel []float64
	f      float64
}

// typicalCandidate returns u's typical candidate: for a user of the model
// from the row sums kept with it (typicalBySums), in time independent of
// the network's size; for a user folded in, whose rows the model does not
// sum, from its rows (typicalByRows).
func (m *Model) typicalCandidate(u pairSource) typical {
	if u.own {
		return m.typicalBySums(u)
	}
	return m.typicalByRows(u)
}

// typicalByRows returns u's typical candidate from a row of each kernel
// and of f: O(n) a request.
func (m *Model) typicalByRows(u pairSource) typical {
	b := getBuffers(m.ds.N(), 0)
	defer buffers.Put(b)
	row := b.users
	mean := func() float64 {
		s, n := 0.0, 0
		for c, x := range row {
			if c != u.index && !contains(u.friends, c) {
				s += x
				n++
			}
		}
		return s / float64(max(n, 1))
	}
	out := typical{kernel: make([]float64, len(m.kernels))}
	for t := range m.kernels {
		u.kernelRow(t, row)
		out.kernel[t] = mean()
	}
	u.scoreRow(row)
	out.f = mean()
	return out
}

// typicalBySums returns the typical candidate of u, a user of the model,
// as typicalByRows does (to rounding), in O(|friends| (kernels + |S|)): a
// sum over u's candidates is the sum over every user (kernelSums, and
// for f's import part mklr's ImportSum) less u's own entry and its
// friends'. f is linear in the kernels: b + sum_t (gamma_t + gamma
// theta_t) K^t plus the import part.
func (m *Model) typicalBySums(u pairSource) typical {
	n := m.ds.N()
	out := typical{kernel: make([]float64, len(m.kernels))}
	cands := n - 1 - len(u.friends)
	if cands < 1 {
		return out // no candidates: every mean 0, as typicalByRows gives
	}
	sums := m.kernelSums()
	f := float64(n)*m.strength.Bias() + m.strength.ImportSum(u.index) - u.score(u.index)
	for _, v := range u.friends {
		f -= u.score(v)
	}
	for t := range m.kernels {
		s := sums[t][u.index] - u.kernel(t, u.index)
		for _, v := range u.friends {
			s -= u.kernel(t, v)
		}
		out.kernel[t] = s / float64(cands)
		_, coef := m.coefficient(t)
		f += coef * sums[t][u.index]
	}
	out.f = f / float64(cands)
	return out
}

// kernelSums returns each base kernel's row sums, sum_v K^t(u, v) (one
// product with the ones vector a kernel, n floats), computed on first use
// and shared by the model's copies.
func (m *Model) kernelSums() [][]float64 {
	s := m.rowSums
	s.once.Do(func() {
		s.kernel = make([][]float64, len(m.kernels))
		for t, k := range m.kernels {
			s.kernel[t] = k.K.RowSums()
		}
	})
	return s.kernel
}

// rowSums holds kernelSums' result.
type rowSums struct {
	once   sync.Once
	kernel [][]float64
}

// coefficient returns base kernel t's own term's coefficient in f,
// gamma_t, and its whole coefficient: that and its share gamma theta_t of
// the combined kernel's term.
func (m *Model) coefficient(t int) (own, coef float64) {
	if gamma := m.strength.BaseWeights(); gamma != nil {
		own = gamma[t]
	}
	return own, own + m.strength.Gamma()*m.weights[t]
}

// explain returns v's explanation for u but its Score: the common
// friends, the combined kernel, its contributions and f(u, v) in parts,
// absolute and relative to u's typical candidate.
func (m *Model) explain(u pairSource, v int, typ typical) FriendRec {
	common := intersect(u.friends, m.friends[v])
	rec := FriendRec{User: m.ds.Users[v].ID, Strength: sigmoid(u.score(v) - m.offset), CommonFriends: m.userIDs(common), CommonFriendCount: len(common)}
	terms, relative := 0.0, 0.0
	for t, k := range m.kernels {
		w, val := m.weights[t], u.kernel(t, v)
		g, coef := m.coefficient(t)
		c := Contribution{Kernel: k.Name, Weight: w, Value: val, Part: w * val, Term: g * val, Coefficient: coef, Relative: coef * (val - typ.kernel[t])}
		rec.Contributions = append(rec.Contributions, c)
		rec.Kernel += c.Part
		terms += c.Term
		relative += c.Relative
	}
	slices.SortStableFunc(rec.Contributions, func(a, b Contribution) int { return cmp.Compare(b.Relative, a.Relative) })
	for _, c := range rec.Contributions {
		name := modality(c.Kernel)
		i := slices.IndexFunc(rec.Modalities, func(p ModalityPart) bool { return p.Modality == name })
		if i < 0 {
			i = len(rec.Modalities)
			rec.Modalities = append(rec.Modalities, ModalityPart{Modality: name})
		}
		rec.Modalities[i].Kernels = append(rec.Modalities[i].Kernels, c.Kernel)
		rec.Modalities[i].Relative += c.Relative
	}
	slices.SortStableFunc(rec.Modalities, func(a, b ModalityPart) int { return cmp.Compare(b.Relative, a.Relative) })
	rec.LogOdds = u.score(v)
	rec.Intercept = m.strength.Bias()
	rec.KernelTerm = m.strength.Gamma() * u.combined(v)
	// mklr does not expose the import pairs' sum alone: it is what the
	// other parts leave of f (TestFriendScoreParts checks it against the
	// pair kernel).
	rec.Pairs = rec.LogOdds - rec.Intercept - rec.KernelTerm - terms
	rec.TypicalLogOdds = typ.f
	rec.PairsRelative = rec.LogOdds - typ.f - relative
	return rec
}

// RecommendGroups ranks the groups u is not in by the model's group
// scorer (GroupScores) and returns the top k, ties in a seeded order.
func (m *Model) RecommendGroups(u, k int) (*Groups, error) {
	if err := checkArgs(m, u, k); err != nil {
		return nil, err
	}
	return m.groupsAnswer(m.ds.Users[u].ID, m.noData[u], m.subject(u), func(f []float64) { m.strength.ScoreAll(u, f) }, func() ([]int, []float64) { return m.topGroups(u, k) }), nil
}

// groupsAnswer is RecommendGroups' answer for the user id (u) with noData
// set when it has no data at all; fRow sets f(u, .), rank gives its top
// groups and their scores.
func (m *Model) groupsAnswer(id string, noData bool, u subject, fRow func([]float64), rank func() ([]int, []float64)) *Groups {
	switch {
	case len(m.members) == 0:
		return &Groups{Items: []GroupRec{}, Reason: "the data set has no groups"}
	case noData:
		return &Groups{Items: []GroupRec{}, Reason: noDataReason(id)}
	}
	top, score := rank()
	if len(top) == 0 {
		return &Groups{Items: []GroupRec{}, Reason: fmt.Sprintf("user %s is in every group", id)}
	}
	out := &Groups{Items: make([]GroupRec, len(top))}
	signals := m.groupSignals(u, fRow, top, score)
	for r, g := range top {
		friends := intersect(u.friends, m.members[g])
		out.Items[r] = GroupRec{
			Group: m.ds.Groups[g], Score: score[r], Members: len(m.members[g]),
			Friends: m.userIDs(friends), FriendCount: len(friends),
			Scorer: m.groupScorer, Signals: signals[r],
		}
	}
	return out
}

// groupSignals returns what the group scorer read for each of u's top
// groups (score: their scores): one signal, the score itself, for a
// single scorer; learned's weighted signals, computed again for u and
// those groups (fRow sets f(u, .)).
func (m *Model) groupSignals(u subject, fRow func([]float64), top []int, score []float64) [][]GroupSignal {
	out := make([][]GroupSignal, len(top))
	if m.groupScorer != GroupLearned {
		for r := range top {
			out[r] = []GroupSignal{{Signal: m.groupScorer, Weight: 1, Value: score[r], Part: score[r]}}
		}
		return out
	}
	gs := slices.Clone(top)
	slices.Sort(gs)
	if m.groupPerUser { // its signals are scaled over every group
		gs = m.allGroups()
	}
	b := getBuffers(m.ds.N(), len(m.members))
	defer buffers.Put(b)
	rows := m.rowsOf(u, gs)
	if rows {
		fRow(b.users)
	}
	c := len(gs)
	x := b.features[:len(groupFeatures)*c]
	m.features(u, gs, rows, b.users, b.groupAcc, x)
	for r, g := range top {
		i, _ := slices.BinarySearch(gs, g)
		for s, w := range m.groupWeights {
			v := x[s*c+i]
			out[r] = append(out[r], GroupSignal{Signal: groupFeatures[s], Weight: w, Value: v, Part: w * v})
		}
		slices.SortStableFunc(out[r], func(a, b GroupSignal) int { return cmp.Compare(b.Part, a.Part) })
	}
	return out
}

// topFriends returns u's k best friend candidates and their scores: the
// precomputed ones when there are k, else the cached ones (WithCache), else
// ranked now, over the candidates only with WithCandidates.
func (m *Model) topFriends(u, k int) ([]int, []float64) {
	if m.top != nil && k <= m.top.friends.k {
		return m.top.friends.row(u, k)
	}
	return m.cachedRanking(2*u, k, func(k int) ([]int, []float64) {
		b := getBuffers(m.ds.N(), 0)
		defer buffers.Put(b)
		if m.candidates != nil {
			return m.rankCandidates(u, k, b.seen, b.acc)
		}
		return m.rankFriends(u, k, b.users, b.users2)
	})
}

// requestBuffers are the scratch of one ranking: rankings on demand reuse
// them (a ranking of YouTube's groups needs 2 MB), so that requests do not
// churn the garbage collector. seen, acc and groupAcc are all false and
// zero between uses (friendCandidates, groupSignal).
type requestBuffers struct {
	users, users2, groups, features, acc, groupAcc []float64
	seen                                           []bool
}

var buffers sync.Pool

// getBuffers returns pooled buffers for n users and ng groups.
func getBuffers(n, ng int) *requestBuffers {
	b, _ := buffers.Get().(*requestBuffers)
	if b == nil {
		b = &requestBuffers{}
	}
	grow := func(s *[]float64, n int) {
		if cap(*s) < n {
			*s = make([]float64, n)
		}
		*s = (*s)[:n]
	}
	grow(&b.users, n)
	grow(&b.users2, n)
	grow(&b.acc, n)
	if cap(b.seen) < n {
		b.seen = make([]bool, n)
	}
	b.seen = b.seen[:n]
	grow(&b.groups, ng)
	grow(&b.groupAcc, ng)
	grow(&b.features, len(groupFeatures)*ng)
	return b
}

// rankFriends ranks the users that are neither u nor u's friends by the
// friend scorer and returns the top k and their scores; score and scratch
// (nil: allocated when needed) have length N.
func (m *Model) rankFriends(u, k int, score, scratch []float64) ([]int, []float64) {
	m.friendScores(m.scorer, u, score, scratch)
	top := topK(score, m.userTie, k, func(v int) bool { return v == u || contains(m.friends[u], v) })
	return top, pick(score, top)
}

// topGroups is topFriends for groups: ranked now over u's candidate
// groups only with WithCandidates.
func (m *Model) topGroups(u, k int) ([]int, []float64) {
	if m.top != nil && k <= m.top.groups.k {
		return m.top.groups.row(u, k)
	}
	return m.cachedRanking(2*u+1, k, func(k int) ([]int, []float64) {
		b := getBuffers(m.ds.N(), len(m.members))
		defer buffers.Put(b)
		return m.rankGroupsWith(u, k, b, false)
	})
}

// rankGroupsWith ranks u's groups now, with the scratch b: every group,
// or u's candidate groups only with WithCandidates (unless the learned
// scorer scales its signals per user, over every group). haveF says
// that b.users holds f(u, .) already.
func (m *Model) rankGroupsWith(u, k int, b *requestBuffers, haveF bool) ([]int, []float64) {
	if m.candidates == nil || m.groupPerUser {
		if groupNeedsStrength(m.groupScorer) && !haveF {
			m.strength.ScoreAll(u, b.users)
		}
		m.scoreGroups(m.groupScorer, u, b.users, b.groups, b.features)
		return m.rankGroups(u, k, b.groups)
	}
	gs := m.groupCandidates(u, k, b.seen, b.acc)
	rows := groupNeedsStrength(m.groupScorer) && m.rowsFor(u, gs) // the other scorers sum no member
	if rows {
		m.strength.ScoreAll(u, b.users)
	}
	score := b.groups[:len(gs)]
	m.scoreGroupList(m.groupScorer, m.subject(u), gs, rows, b.users, b.groupAcc, score, b.features)
	return pickTop(gs, score, m.groupTie, k)
}

// GroupScores sets score[g] to the score RecommendGroups ranks g by for
// u, the model's group scorer's (GroupScorer; score has one entry per
// group).
func (m *Model) GroupScores(u int, score []float64) {
	m.groupScores(u, score, make([]float64, m.ds.N()), nil)
}

// groupScores is GroupScores with scratch: f of length N, x as for
// scoreGroups.
func (m *Model) groupScores(u int, score, f, x []float64) {
	if groupNeedsStrength(m.groupScorer) {
		m.strength.ScoreAll(u, f)
	}
	m.scoreGroups(m.groupScorer, u, f, score, x)
}

// rankGroups ranks the groups u is not in by their scores in
// score (GroupScores) and returns the top k and their scores.
func (m *Model) rankGroups(u, k int, score []float64) ([]int, []float64) {
	top := topK(score, m.groupTie, k, func(g int) bool { return contains(m.groups[u], g) })
	return top, pick(score, top)
}

func pick(score []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for r, i := range idx {
		out[r] = score[i]
	}
	return out
}

// topK returns the k best indices of score not excluded, best first; among
// equal scores the lower tie rank wins (a seeded permutation: never the
// index, which follows the ids).
func topK(score []float64, tie []int, k int, excluded func(int) bool) []int {
	h := &minHeap{score: score, tie: tie}
	for i := range score {
		if excluded(i) {
			continue
		}
		if h.Len() < k {
			heap.Push(h, i)
		} else if h.less(h.idx[0], i) {
			h.idx[0] = i
			heap.Fix(h, 0)
		}
	}
	out := make([]int, h.Len())
	for r := len(out) - 1; r >= 0; r-- {
		out[r] = heap.Pop(h).(int)
	}
	return out
}

// minHeap keeps the worst of the best k at the top.
type minHeap struct {
	idx   []int
	score []float64
	tie   []int
}

// less says whether i ranks below j.
func (h *minHeap) less(i, j int) bool {
	if h.score[i] != h.score[j] {
		return h.score[i] < h.score[j]
	}
	return h.tie[i] > h.tie[j]
}

func (h *minHeap) Len() int           { return len(h.idx) }
func (h *minHeap) Less(a, b int) bool { return h.less(h.idx[a], h.idx[b]) }
func (h *minHeap) Swap(a, b int)      { h.idx[a], h.idx[b] = h.idx[b], h.idx[a] }
func (h *minHeap) Push(x any)         { h.idx = append(h.idx, x.(int)) }
func (h *minHeap) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}

// userIDs names up to MaxListed users.
func (m *Model) userIDs(users []int) []string {
	out := make([]string, 0, min(len(users), MaxListed))
	for _, v := range users[:min(len(users), MaxListed)] {
		out = append(out, m.ds.Users[v].ID)
	}
	return out
}

func contains(sorted []int, v int) bool {
	_, ok := slices.BinarySearch(sorted, v)
	return ok
}

// intersect returns the common elements of two sorted lists.
func intersect(a, b []int) []int {
	var out []int
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}
