package recommend

import (
	"log/slog"
	"sync"
	"time"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/mklr"
)

// LargeGroupMembers: the mklr and kernel-mean signals of a group with
// more members than this, for a user ranking its candidate groups, come
// from a walk of the user's sparse kernel rows (largeSignal) instead of
// one entry a member, so that large groups alone do not make a ranking
// read f(u, .) and K(u, .) over every user (rowsFor weighs the walk).
const LargeGroupMembers = 256

// largeGroups holds largeSums, computed on first use (by the group
// validation, and when a served model's group scorer sums members: mklr,
// learned) and shared by the model's copies.
type largeGroups struct {
	once sync.Once
	min  int // groups of more members are large
	s    *largeSums
}

// largeSums is what the member sums of the large groups need: the sparse
// rows of the base kernels and their weights in the combined kernel and
// in the strength model's score, and each large group's members with
// import features (mklr's ZeroFeatures false).
type largeSums struct {
	index []int // group -> its index among the large groups, -1 for the others
	rows  []func(i int, visit func(j int, v float64))
	costs []func(i int) int // the visits of rows[t](i)
	// theta weighs the kernels in the combined kernel, terms in f
	// (gamma theta_t + gamma_t: the combined kernel's term and each base
	// kernel's).
	theta, terms []float64
	near         [][]int32 // a large group's members with import features
}

// largeSums returns the model's large-group sums, computed on first use;
// nil when there are no large groups, a base kernel with a weight is not
// sparse (a Gram), or the strength model's kernel terms are not the
// model's base kernels: the signals are then summed one member at a time,
// or from whole rows.
func (m *Model) largeSums() *largeSums {
	l := m.large
	if l == nil {
		return nil
	}
	l.once.Do(func() {
		s := &largeSums{index: make([]int, len(m.members))}
		for g, mem := range m.members {
			s.index[g] = -1
			if len(mem) <= l.min {
				continue
			}
			s.index[g] = len(s.near)
			var near []int32
			for _, j := range mem {
				if !m.strength.ZeroFeatures(j) {
					near = append(near, int32(j))
				}
			}
			s.near = append(s.near, near)
		}
		base := m.baseKernels()
		gamma, baseW := m.strength.Gamma(), m.strength.BaseWeights()
		if len(s.near) == 0 || len(baseW) != 0 && len(baseW) != len(base) {
			return
		}
		for t, k := range base {
			w := gamma * m.weights[t]
			if len(baseW) > 0 {
				w += baseW[t]
			}
			if w == 0 && m.weights[t] == 0 {
				continue
			}
			row, cost, ok := kernelmath.SparseRows(k)
			if !ok {
				return
			}
			s.rows, s.costs = append(s.rows, row), append(s.costs, cost)
			s.theta, s.terms = append(s.theta, m.weights[t]), append(s.terms, w)
		}
		l.s = s
	})
	return l.s
}

// isLarge says whether g is a large group.
func (s *largeSums) isLarge(g int) bool { return s != nil && s.index[g] >= 0 }

// walkCost is how many users largeSignal visits for u and the large
// groups among gs that u is not in: u's sparse rows, and the groups'
// members with import features unless u's import part is the same for
// every user.
func (m *Model) walkCost(s *largeSums, u int, gs []int) int {
	c, any := 0, false
	tensor := m.strength.Pair() == mklr.PairTensor && m.strength.ZeroFeatures(u)
	for _, g := range gs {
		if s.isLarge(g) && !contains(m.groups[u], g) {
			any = true
			if !tensor {
				c += len(s.near[s.index[g]])
			}
		}
	}
	if !any {
		return 0
	}
	for _, cost := range s.costs {
		c += cost(u)
	}
	return c
}

// bytes is what the sums take: the index and the lists of members with
// import features.
func (s *largeSums) bytes() int {
	b := 8 * len(s.index)
	for _, near := range s.near {
		b += 4*len(near) + 24
	}
	return b
}

// cachedSums returns whether groupSignal takes a group's member sums for
// subject u from largeSums: a large group u is not in, when the candidate
// groups gs are ranked one entry a member (not rows) for a user of the
// model.
func (m *Model) cachedSums(u subject, gs []int, rows bool) func(g int) bool {
	s := m.largeSums()
	if rows || gs == nil || !u.own || s == nil {
		return func(int) bool { return false }
	}
	return func(g int) bool { return s.isLarge(g) && !contains(u.groups, g) }
}

// largeSignal sets dst[i] for each group gs[i] with cached(gs[i])
// (cachedSums; the others are left) to signal sig (0: mklr, or
// sigKernelMean) of the model's user u, exactly (up to the order of the
// additions), from the users whose terms differ from a stranger's:
//
//   - kernel-mean: K(u, j) is 0 unless j shares a feature with u (the
//     sparse rows of the base Grams: u's two-hop users and co-members), so
//     the sum over g's members is the sum over those users in g;
//   - mklr: the sum over g's members j of h(j), 1 for a friend and
//     sigmoid(f(u, j) - offset) for the others. f(u, j) = b + T(u, j) +
//     P(u, j), T the kernel terms, P the imports' part (mklr). T(u, j) is
//     0 unless j shares a feature with u, and P(u, j) is ImportBase(u)
//     unless j has import features (and, for the tensor pair kernel, u
//     too). So every other member adds the same h0 = sigmoid(b +
//     ImportBase(u) - offset), and the sum is |g| h0 plus h(j) - h0 over
//     u's friends, the users sharing a feature with u and the group's
//     members with import features.
//
// acc has one entry a group, all zero, and is left so.
func (m *Model) largeSignal(sig int, u int, gs []int, cached func(g int) bool, acc, dst []float64) {
	var large []int
	for _, g := range gs {
		if cached(g) {
			large = append(large, g)
		}
	}
	if len(large) == 0 {
		return
	}
	s := m.largeSums()
	buf := getBuffers(m.ds.N(), 0)
	defer buffers.Put(buf)
	// kern[j] = K(u, j) and terms[j] = T(u, j) for the users marked.
	seen, kern, terms := buf.seen, buf.users, buf.users2
	var marked []int
	mark := func(j int) {
		if !seen[j] {
			seen[j], kern[j], terms[j] = true, 0, 0
			marked = append(marked, j)
		}
	}
	for r, row := range s.rows {
		theta, w := s.theta[r], s.terms[r]
		row(u, func(j int, v float64) {
			mark(j)
			kern[j] += theta * v
			terms[j] += w * v
		})
	}
	b := m.strength.Bias()
	h0 := sigmoid(b + m.strength.ImportBase(u) - m.offset)
	if sig == 0 {
		for _, j := range m.friends[u] {
			mark(j)
		}
		if m.strength.Pair() != mklr.PairTensor || !m.strength.ZeroFeatures(u) {
			for _, g := range large {
				for _, j := range s.near[s.index[g]] {
					mark(int(j))
				}
			}
		}
	}
	res := make([]float64, len(marked)) // kernel-mean: K(u, j); mklr: h(j) - h0
	for i, j := range marked {
		switch {
		case sig == sigKernelMean:
			res[i] = kern[j]
		case contains(m.friends[u], j):
			res[i] = 1 - h0
		default:
			res[i] = sigmoid(b+terms[j]+m.strength.ImportPart(u, j)-m.offset) - h0
		}
		seen[j] = false
	}
	sums := make([]float64, len(large))
	m.spread(large, acc, sums, func(add func(g int, x float64)) {
		for i, j := range marked {
			if j == u {
				continue
			}
			for _, g := range m.groups[j] {
				if s.isLarge(g) {
					add(g, res[i])
				}
			}
		}
	})
	r := 0
	for i, g := range gs {
		if !cached(g) {
			continue
		}
		if size := float64(len(m.members[g])); sig == sigKernelMean {
			dst[i] = sums[r] / size
		} else {
			dst[i] = size*h0 + sums[r]
		}
		r++
	}
}

// logLargeGroups computes the large-group sums, so that no request waits
// for them, and logs what they hold.
func (m *Model) logLargeGroups(log *slog.Logger) {
	start := time.Now()
	s := m.largeSums()
	if s == nil {
		return
	}
	near, members := 0, 0
	for g, i := range s.index {
		if i >= 0 {
			near, members = near+len(s.near[i]), members+len(m.members[g])
		}
	}
	log.Info("large-group sums kept", "groups", len(s.near), "members", members, "with_import_features", near,
		"bytes", s.bytes(), "took", time.Since(start).Round(time.Millisecond))
}
