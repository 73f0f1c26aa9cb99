package recommend

import (
	"cmp"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/social"
)

// Folded is a user folded into a model without retraining: its rows of
// the base kernels against the model's users, computed from its current
// profile and relations with the preprocessing the kernels were built
// with (social.NamedKernel.FoldIn), combined with the model's weights and
// scored by its strength model (mklr's ScoreNew) and scorers. A user the
// model was trained on, folded in with the relations it had, gets the
// scores it has in the model. Friends and groups are ranked among the
// model's users and groups: users added since (other than the one folded
// in) are candidates only once a retrain includes them.
type Folded struct {
	m        *Model
	id       string
	pairs    pairSource
	who      subject
	base     [][]float64 // K^t(u, .)
	combined []float64   // sum_t theta_t K^t(u, .)
	f        []float64   // f(u, .)
	// absent marks the model's users the live data no longer has; nil:
	// none.
	absent []bool
	noData bool
}

// FoldIn folds fu (its id: id) into m. absent (nil, or one entry a user of
// the model) marks users not to recommend: those deleted since training.
// Errors wrap social.ErrNoFoldIn when a base kernel gives no row for a
// user outside it (thesis mode).
func (m *Model) FoldIn(id string, fu *social.FoldUser, absent []bool) (*Folded, error) {
	n := m.ds.N()
	if absent != nil && len(absent) != n {
		return nil, fmt.Errorf("recommend: %d absence marks for %d users", len(absent), n)
	}
	fo := &Folded{m: m, id: id, base: make([][]float64, len(m.kernels)), combined: make([]float64, n), f: make([]float64, n), absent: absent}
	for t, k := range m.kernels {
		fo.base[t] = make([]float64, n)
		if err := k.FoldIn(fu, fo.base[t]); err != nil {
			return nil, err
		}
		for v, x := range fo.base[t] {
			fo.combined[v] += m.weights[t] * x
		}
	}
	if err := m.strength.ScoreNew(fo.combined, fo.base, fo.f); err != nil {
		return nil, err
	}
	fo.pairs = pairSource{index: fu.Index, friends: fu.Friends,
		kernelRow: func(t int, dst []float64) { copy(dst, fo.base[t]) },
		kernel:    func(t, v int) float64 { return fo.base[t][v] },
		scoreRow:  func(dst []float64) { copy(dst, fo.f) },
		score:     func(v int) float64 { return fo.f[v] },
		combined:  func(v int) float64 { return fo.combined[v] }}
	fo.who = subject{index: fu.Index, friends: fu.Friends, groups: fu.Groups,
		combined: func(dst []float64) { copy(dst, fo.combined) },
		regLap:   func() func(add func(g int, x float64)) { return m.regLapFolded(fu) }}
	p := fu.Profile
	fo.noData = len(fu.Friends) == 0 && len(fu.Groups) == 0 && len(fu.Comments) == 0 && fu.SelfComments == 0 &&
		len(p.Photos) == 0 && len(p.Tags) == 0 && len(p.Places) == 0 && len(p.Faves) == 0
	return fo, nil
}

// regLapFolded returns the walk over the regularised-Laplacian signal
// (subject.regLap) of a user outside the kernel: S(u, g) = sum over g's
// members v of K(u, v). A row of K = (I + gamma L)^-1 satisfies
// (1 + gamma) K(u, v) = [u = v] + gamma sum_{w ~ u} K(w, v) / sqrt(d_u d_w),
// so S(u, g) = ([u in g] + gamma sum_{w ~ u} S(w, g) / sqrt(d_u d_w)) /
// (1 + gamma) from its friends' signals (an isolated user: [u in g]):
// their precomputed sums, or above RegLaplacianMaxEntries one push of K
// from its friends, weighted so (regLapPushed, within regLapPushEps).
// APPROXIMATION: the friends' signals and degrees are those of the
// trained graph, without u's own edges in it; for a user of the model
// with unchanged friendships this is its signal to the solver's
// tolerance (to the push's).
func (m *Model) regLapFolded(fu *social.FoldUser) func(add func(g int, x float64)) {
	if m.regLap == nil {
		return func(func(int, float64)) {} // no regularised Laplacian: its signal is 0
	}
	gamma := cmp.Or(m.settings.Kernels.Gamma, 1)
	if !m.regLapGroups.push {
		dst := m.regLapFoldedSums(fu, gamma)
		return func(add func(g int, x float64)) {
			for g, x := range dst {
				add(g, x)
			}
		}
	}
	var idx []int
	var c []float64
	du := float64(len(fu.Friends))
	for _, w := range fu.Friends {
		if dw := len(m.friends[w]); dw > 0 {
			idx = append(idx, w)
			c = append(c, gamma/((1+gamma)*math.Sqrt(du*float64(dw))))
		}
	}
	own := 1.0
	if len(fu.Friends) > 0 {
		own = 1 / (1 + gamma)
	}
	friends := m.regLapPushed(idx, c, regLapPushEps)
	return func(add func(g int, x float64)) {
		for _, g := range fu.Groups {
			add(g, own)
		}
		friends(add)
	}
}

// regLapFoldedSums is regLapFolded's signal from the precomputed sums, one
// entry a group.
func (m *Model) regLapFoldedSums(fu *social.FoldUser, gamma float64) []float64 {
	ng := len(m.members)
	dst := make([]float64, ng)
	sums := m.regLapSums()
	for _, g := range fu.Groups {
		dst[g] = 1
	}
	if len(fu.Friends) == 0 {
		return dst
	}
	du := float64(len(fu.Friends))
	for g := range dst {
		s := 0.0
		for _, w := range fu.Friends {
			if dw := len(m.friends[w]); dw > 0 {
				s += sums[w*ng+g] / math.Sqrt(du*float64(dw))
			}
		}
		dst[g] = (dst[g] + gamma*s) / (1 + gamma)
	}
	return dst
}

// Scores returns f(u, v) for the model's users v (not to be modified).
func (fo *Folded) Scores() []float64 { return fo.f }

// friendScores sets dst to the model's friend scorer's scores.
func (fo *Folded) friendScores(dst []float64) {
	m := fo.m
	switch m.scorer {
	case ScorerKernel:
		copy(dst, fo.combined)
	case ScorerAdamicAdar:
		m.adamicAdarOver(fo.who.friends, dst)
		addTieBreak(dst, fo.combined)
	default:
		copy(dst, fo.f)
	}
}

// excluded says whether v is no candidate: the user itself, a friend, or
// absent from the live data.
func (fo *Folded) excluded(v int) bool {
	return v == fo.who.index || contains(fo.who.friends, v) || fo.absent != nil && fo.absent[v]
}

// FriendRanking returns the model's users ranked as RecommendFriends
// ranks them, the first k, and their scores.
func (fo *Folded) FriendRanking(k int) ([]int, []float64) {
	score := make([]float64, fo.m.ds.N())
	fo.friendScores(score)
	top := topK(score, fo.m.userTie, k, fo.excluded)
	return top, pick(score, top)
}

// RecommendFriends is Model.RecommendFriends for the folded user.
func (fo *Folded) RecommendFriends(k int) (*Friends, error) {
	if k < 1 {
		return nil, fmt.Errorf("%w: k must be at least 1, got %d", learners.ErrInput, k)
	}
	return fo.m.friendsAnswer(fo.id, fo.noData, fo.pairs, func() ([]int, []float64) { return fo.FriendRanking(k) }), nil
}

// GroupRanking returns the model's groups the user is not in ranked as
// RecommendGroups ranks them, the first k, and their scores.
func (fo *Folded) GroupRanking(k int) ([]int, []float64) {
	m := fo.m
	score, f := make([]float64, len(m.members)), make([]float64, m.ds.N())
	copy(f, fo.f)
	m.scoreGroupList(m.groupScorer, fo.who, nil, true, f, nil, score, nil)
	top := topK(score, m.groupTie, k, func(g int) bool { return contains(fo.who.groups, g) })
	return top, pick(score, top)
}

// RecommendGroups is Model.RecommendGroups for the folded user.
func (fo *Folded) RecommendGroups(k int) (*Groups, error) {
	if k < 1 {
		return nil, fmt.Errorf("%w: k must be at least 1, got %d", learners.ErrInput, k)
	}
	return fo.m.groupsAnswer(fo.id, fo.noData, fo.who, fo.pairs.scoreRow, func() ([]int, []float64) { return fo.GroupRanking(k) }), nil
}
