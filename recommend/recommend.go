package recommend

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"sync"

	"github.com/kernelrank/kernelrank/learners"
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
	// term, largest first (the term, not the part, moves the score);
	// every base kernel with a non-zero weight theta_t or term gamma_t is
	// listed.
	Kernel        float64        `json:"kernel"`
	Contributions []Contribution `json:"contributions"`
	// CommonFriends lists up to MaxListed of the friends u and v share;
	// CommonFriendCount counts them all.
	CommonFriends     []string `json:"common_friends"`
	CommonFriendCount int      `json:"common_friend_count"`
}

// Contribution is one base kernel's part of the combined kernel, and of
// the score: mklr gives each base kernel its own term gamma_t K^t(u, v) in
// f besides the combined kernel's (learners/mklr, Options.Base).
type Contribution struct {
	Kernel string  `json:"kernel"`
	Weight float64 `json:"weight"` // theta_t
	Value  float64 `json:"value"`  // K^t(u, v)
	Part   float64 `json:"part"`   // theta_t K^t(u, v)
	Term   float64 `json:"term"`   // gamma_t K^t(u, v), its term in LogOdds
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

func (m *Model) noDataReason(u int) string {
	return fmt.Sprintf("user %s has no friends, groups, photos, tags, places, faves or comments: there is nothing to recommend from", m.ds.Users[u].ID)
}

// RecommendFriends ranks the users that are neither u nor u's friends by
// the model's friend scorer (FriendScores) and returns the top k (fewer when there are fewer), ties in a
// seeded order. A user with no data at all gets no items and a reason.
func (m *Model) RecommendFriends(u, k int) (*Friends, error) {
	if err := checkArgs(m, u, k); err != nil {
		return nil, err
	}
	if m.noData[u] {
		return &Friends{Items: []FriendRec{}, Reason: m.noDataReason(u)}, nil
	}
	top, score := m.topFriends(u, k)
	if len(top) == 0 {
		return &Friends{Items: []FriendRec{}, Reason: fmt.Sprintf("user %s is already friends with every other user", m.ds.Users[u].ID)}, nil
	}
	out := &Friends{Items: make([]FriendRec, len(top))}
	for r, v := range top {
		common := intersect(m.friends[u], m.friends[v])
		rec := FriendRec{
			User: m.ds.Users[v].ID, Score: score[r], Strength: m.Strength(u, v),
			CommonFriends: m.userIDs(common), CommonFriendCount: len(common),
		}
		m.explainScore(u, v, &rec)
		out.Items[r] = rec
	}
	return out, nil
}

// explainScore sets rec's combined kernel, its contributions and f(u, v)
// in parts.
func (m *Model) explainScore(u, v int, rec *FriendRec) {
	gamma := m.strength.BaseWeights()
	terms := 0.0
	for t, k := range m.kernels {
		w, g := m.weights[t], 0.0
		if gamma != nil {
			g = gamma[t]
		}
		if w != 0 || g != 0 {
			val := k.K.At(u, v)
			rec.Contributions = append(rec.Contributions, Contribution{k.Name, w, val, w * val, g * val})
			rec.Kernel += w * val
			terms += g * val
		}
	}
	slices.SortStableFunc(rec.Contributions, func(a, b Contribution) int { return cmp.Compare(b.Term, a.Term) })
	rec.LogOdds = m.strength.Score(u, v)
	rec.Intercept = m.strength.Bias()
	rec.KernelTerm = m.strength.Gamma() * m.combined.At(u, v)
	// mklr does not expose the import pairs' sum alone: it is what the
	// other parts leave of f (TestFriendScoreParts checks it against the
	// pair kernel).
	rec.Pairs = rec.LogOdds - rec.Intercept - rec.KernelTerm - terms
}

// RecommendGroups ranks the groups u is not in by the model's group
// scorer (GroupScores) and returns the top k, ties in a seeded order.
func (m *Model) RecommendGroups(u, k int) (*Groups, error) {
	if err := checkArgs(m, u, k); err != nil {
		return nil, err
	}
	switch {
	case len(m.members) == 0:
		return &Groups{Items: []GroupRec{}, Reason: "the data set has no groups"}, nil
	case m.noData[u]:
		return &Groups{Items: []GroupRec{}, Reason: m.noDataReason(u)}, nil
	}
	top, score := m.topGroups(u, k)
	if len(top) == 0 {
		return &Groups{Items: []GroupRec{}, Reason: fmt.Sprintf("user %s is in every group", m.ds.Users[u].ID)}, nil
	}
	out := &Groups{Items: make([]GroupRec, len(top))}
	for r, g := range top {
		friends := intersect(m.friends[u], m.members[g])
		out.Items[r] = GroupRec{
			Group: m.ds.Groups[g], Score: score[r], Members: len(m.members[g]),
			Friends: m.userIDs(friends), FriendCount: len(friends),
		}
	}
	return out, nil
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
// churn the garbage collector. seen and acc are all false and zero between
// uses (rankCandidates).
type requestBuffers struct {
	users, users2, groups, features, acc []float64
	seen                                 []bool
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

// topGroups is topFriends for groups.
func (m *Model) topGroups(u, k int) ([]int, []float64) {
	if m.top != nil && k <= m.top.groups.k {
		return m.top.groups.row(u, k)
	}
	return m.cachedRanking(2*u+1, k, func(k int) ([]int, []float64) {
		b := getBuffers(m.ds.N(), len(m.members))
		defer buffers.Put(b)
		m.groupScores(u, b.groups, b.users, b.features)
		return m.rankGroups(u, k, b.groups)
	})
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

// groupScoresOf sets score[g] = s(g, u) (GroupMKLR) from row = f(u, .),
// which it overwrites: the expected number of u's friends among g's
// visible members j != u, 1 for a visible friend, Strength(u, j) for the
// others (score has one entry per group). DEVIATION: section 7.4.3 sums f
// itself; with mklr's intercept (about -2.5) every member adds a negative
// term and the largest groups rank last. Summing the uncorrected
// sigmoid(f), fitted on balanced pairs, gives every member a sizeable share
// and ranks big groups first. The prior-corrected strengths, with friends
// counted as friends, rank neither by size (docs/evaluation.md, "The group
// score").
func (m *Model) groupScoresOf(u int, row, score []float64) {
	for j, f := range row {
		row[j] = sigmoid(f - m.offset)
	}
	for _, j := range m.friends[u] {
		row[j] = 1
	}
	for g, members := range m.members {
		s := 0.0
		for _, j := range members {
			if j != u {
				s += row[j]
			}
		}
		score[g] = s
	}
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
