package simplenpkl

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kernelrank/kernelrank/learners"
)

// Components says which sampled pairs join connected components in
// SampleConstraints.
type Components int

const (
	// AllPairs: every sampled pair, must-link or cannot-link, joins its two
	// components (spec 3.10.1's default procedure).
	AllPairs Components = iota
	// MustLinks: only must-links join components, the connected components
	// of the similarity graph S of [XNJR02], whose rule [HJL07] and the
	// thesis cite. It draws about twice as many pairs for the same ratio.
	MustLinks
)

// SampleConstraints draws the side information of the thesis experiments
// (section 3.5.1, spec 3.10.1): uniformly random unordered pairs of distinct
// points without replacement, a must-link when the labels agree and a
// cannot-link otherwise, until the sampled pairs (or, with MustLinks, the
// must-links among them) leave at most ratio * n connected components
// (union-find; ratio 0.7 in the thesis, after [HJL07]). Deterministic given
// seed.
func SampleConstraints(labels []int, ratio float64, seed uint64, over Components) (must, cannot []learners.Pair, err error) {
	n := len(labels)
	if n < 2 || !(ratio > 0 && ratio <= 1) {
		return nil, nil, fmt.Errorf("%w: sampling constraints needs n >= 2 labels and a ratio in (0, 1], got n = %d, ratio = %g", learners.ErrInput, n, ratio)
	}
	target := int(math.Floor(ratio * float64(n)))
	if over == MustLinks {
		// Must-links cannot join points of different classes.
		classes := map[int]bool{}
		for _, l := range labels {
			classes[l] = true
		}
		if target < len(classes) {
			return nil, nil, fmt.Errorf("%w: must-links cannot leave %d components of %d points in %d classes", learners.ErrInput, max(target, 1), n, len(classes))
		}
	}
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	comps := n
	s := newPairSampler(labels, seed)
	for comps > max(target, 1) {
		p := s.next()
		if over == MustLinks && labels[p.I] != labels[p.J] {
			continue
		}
		if a, b := find(p.I), find(p.J); a != b {
			parent[a] = b
			comps--
		}
	}
	must, cannot = s.split()
	return must, cannot, nil
}

// SamplePairs draws exactly count random constrained pairs, as the thesis
// reports for Adult (Table 3.7: 4,104 pairs for a1a), where the
// connected-components rule gives far fewer (spec 3.10.1, 9.5).
func SamplePairs(labels []int, count int, seed uint64) (must, cannot []learners.Pair, err error) {
	n := len(labels)
	if n < 2 || count < 1 || count > n*(n-1)/2 {
		return nil, nil, fmt.Errorf("%w: cannot draw %d distinct pairs of %d points", learners.ErrInput, count, n)
	}
	s := newPairSampler(labels, seed)
	for len(s.seen) < count {
		s.next()
	}
	must, cannot = s.split()
	return must, cannot, nil
}

type pairSampler struct {
	labels []int
	rng    *rand.Rand
	seen   map[learners.Pair]bool
	order  []learners.Pair
}

func newPairSampler(labels []int, seed uint64) *pairSampler {
	return &pairSampler{labels: labels, rng: rand.New(rand.NewPCG(seed, 0xc0ffee)), seen: map[learners.Pair]bool{}}
}

// next draws a new pair (i < j) uniformly among those not drawn yet.
func (s *pairSampler) next() learners.Pair {
	n := len(s.labels)
	for {
		i, j := s.rng.IntN(n), s.rng.IntN(n)
		if i == j {
			continue
		}
		p := learners.Pair{I: min(i, j), J: max(i, j)}
		if !s.seen[p] {
			s.seen[p] = true
			s.order = append(s.order, p)
			return p
		}
	}
}

func (s *pairSampler) split() (must, cannot []learners.Pair) {
	for _, p := range s.order {
		if s.labels[p.I] == s.labels[p.J] {
			must = append(must, p)
		} else {
			cannot = append(cannot, p)
		}
	}
	return must, cannot
}
