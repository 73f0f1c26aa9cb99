package mklr

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

// NegativeMode selects where SampleNegatives draws the negatives of a user
// i from; none is ever i or a friend of i.
type NegativeMode int

// The negative modes.
const (
	// NegHard (the default): the users sharing a friend with i, the
	// candidates a friend ranking faces at its top.
	NegHard NegativeMode = iota
	// NegConservative: the users in no base kernel's top-Neighbours of i
	// (section 7.4.2, the spec's reading).
	NegConservative
	// NegRandom: all users.
	NegRandom
)

func (m NegativeMode) String() string {
	switch m {
	case NegConservative:
		return "conservative"
	case NegHard:
		return "hard"
	case NegRandom:
		return "random"
	}
	return fmt.Sprintf("NegativeMode(%d)", int(m))
}

// NegativeOptions configures SampleNegatives. The zero value is the default.
type NegativeOptions struct {
	// Mode is where the negatives come from (default NegHard).
	Mode NegativeMode
	// Neighbours is N: the users among the N most similar to i under any
	// base kernel are never negatives of i (default 100).
	Neighbours int
	// PerUser is N_e, the negatives drawn for each user (default 20; fewer
	// when fewer candidates are left).
	PerUser int
	// Seed seeds the draws; user i draws from its own stream, so the result
	// does not depend on the number of workers.
	Seed uint64
}

func (o *NegativeOptions) setDefaults() error {
	if o.Neighbours == 0 {
		o.Neighbours = 100
	}
	if o.PerUser == 0 {
		o.PerUser = 20
	}
	if o.Neighbours < 0 || o.PerUser < 0 {
		return fmt.Errorf("%w: mklr: Neighbours (%d) and PerUser (%d) must be positive", learners.ErrInput, o.Neighbours, o.PerUser)
	}
	if o.Mode < NegHard || o.Mode > NegRandom {
		return fmt.Errorf("%w: mklr: unknown negative mode %v", learners.ErrInput, o.Mode)
	}
	return nil
}

// SampleNegatives draws the negative training pairs of section 7.4.2 (see
// the package doc): for every user i, up to PerUser users j that are
// neither i, nor friends of i, nor among the Neighbours most similar users
// of i under any of the base kernels. The pairs come as (i, j), ordered by
// i then j; a pair drawn both ways is kept once, as drawn by the smaller
// user. Errors wrap learners.ErrInput (no kernels, kernels of different
// sizes, friends out of range or self-loops, non-finite kernel entries) or
// are ctx's. Cost: every row of every base kernel once, plus O(n) a row, in
// parallel over users.
func SampleNegatives(ctx context.Context, base []kernelmath.KernelMatrix, friends []learners.Pair, opts NegativeOptions) ([]learners.Pair, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	if len(base) == 0 {
		return nil, fmt.Errorf("%w: mklr: no base kernels to sample negatives from", learners.ErrInput)
	}
	n := base[0].Dim()
	for t, k := range base {
		if k.Dim() != n {
			return nil, fmt.Errorf("%w: mklr: base kernel %d is %d x %d, kernel 0 is %d x %d", learners.ErrInput, t, k.Dim(), k.Dim(), n, n)
		}
	}
	adj, err := adjacency(n, friends)
	if err != nil {
		return nil, err
	}
	drawn := make([][]int, n)
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		firstEr error
	)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newSampler(n)
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				js, err := s.draw(i, base, adj, opts)
				if err != nil {
					errOnce.Do(func() { firstEr = err })
					return
				}
				drawn[i] = js
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if firstEr != nil {
		return nil, firstEr
	}
	seen := make(map[[2]int]bool)
	var out []learners.Pair
	for i, js := range drawn {
		for _, j := range js {
			key := [2]int{min(i, j), max(i, j)}
			if !seen[key] {
				seen[key] = true
				out = append(out, learners.Pair{I: i, J: j})
			}
		}
	}
	return out, nil
}

// adjacency returns the friends of every user, checking the pairs.
func adjacency(n int, friends []learners.Pair) ([][]int, error) {
	adj := make([][]int, n)
	for _, p := range friends {
		if err := checkPair("friend", p, n); err != nil {
			return nil, err
		}
		adj[p.I] = append(adj[p.I], p.J)
		adj[p.J] = append(adj[p.J], p.I)
	}
	return adj, nil
}

// checkPair checks that a pair joins two different users among n.
func checkPair(what string, p learners.Pair, n int) error {
	if p.I < 0 || p.J < 0 || p.I >= n || p.J >= n || p.I == p.J {
		return fmt.Errorf("%w: mklr: %s pair (%d, %d): want two different users in [0, %d)", learners.ErrInput, what, p.I, p.J, n)
	}
	return nil
}

// sampler holds one worker's scratch space.
type sampler struct {
	row, sel []float64
	blocked  []bool
	cand     []int
}

func newSampler(n int) *sampler {
	return &sampler{row: make([]float64, n), sel: make([]float64, 0, n), blocked: make([]bool, n), cand: make([]int, 0, n)}
}

// draw returns the negatives of user i, sorted.
func (s *sampler) draw(i int, base []kernelmath.KernelMatrix, adj [][]int, opts NegativeOptions) ([]int, error) {
	if opts.Mode == NegHard {
		s.friendsOfFriends(i, adj)
	} else {
		clear(s.blocked)
		s.blocked[i] = true
		for _, j := range adj[i] {
			s.blocked[j] = true
		}
		if opts.Mode == NegConservative {
			if err := s.blockNeighbours(i, base, opts.Neighbours); err != nil {
				return nil, err
			}
		}
		s.cand = s.cand[:0]
		for j, b := range s.blocked {
			if !b {
				s.cand = append(s.cand, j)
			}
		}
	}
	r := rand.New(rand.NewPCG(opts.Seed, uint64(i)))
	k := min(opts.PerUser, len(s.cand))
	for a := 0; a < k; a++ {
		b := a + r.IntN(len(s.cand)-a)
		s.cand[a], s.cand[b] = s.cand[b], s.cand[a]
	}
	out := slices.Clone(s.cand[:k])
	slices.Sort(out)
	return out, nil
}

// friendsOfFriends sets s.cand to the friends of i's friends but i and
// its friends, ascending, in time linear in that neighbourhood (never
// O(n): a network of a million users has a million of them to draw), or in
// O(n) when the neighbourhood holds at least n/scanFraction users, where
// reading the marks in order is cheaper than sorting them. It leaves
// s.blocked all false, as it finds it.
func (s *sampler) friendsOfFriends(i int, adj [][]int) {
	s.cand = s.cand[:0]
	for _, f := range adj[i] {
		for _, j := range adj[f] {
			if !s.blocked[j] {
				s.blocked[j] = true
				s.cand = append(s.cand, j)
			}
		}
	}
	dense := len(s.cand)*scanFraction >= len(s.blocked)
	if dense {
		s.cand = s.cand[:0]
		for j, b := range s.blocked {
			if b {
				s.cand = append(s.cand, j)
				s.blocked[j] = false
			}
		}
	} else {
		for _, j := range s.cand {
			s.blocked[j] = false
		}
	}
	s.blocked[i] = true
	for _, j := range adj[i] {
		s.blocked[j] = true
	}
	s.cand = slices.DeleteFunc(s.cand, func(j int) bool { return s.blocked[j] })
	s.blocked[i] = false
	for _, j := range adj[i] {
		s.blocked[j] = false
	}
	if !dense {
		slices.Sort(s.cand)
	}
}

// scanFraction: a two-hop neighbourhood of at least 1/scanFraction of the
// users is listed by a scan of the marks rather than sorted (BlogCatalog's
// hold 60% of its users on average).
const scanFraction = 16

// blockNeighbours blocks the users in some base kernel's top-n of i.
func (s *sampler) blockNeighbours(i int, base []kernelmath.KernelMatrix, n int) error {
	for t, k := range base {
		k.Row(i, s.row)
		s.sel = s.sel[:0]
		lo := math.Inf(1)
		for j, v := range s.row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: mklr: base kernel %d has %v at (%d, %d)", learners.ErrInput, t, v, i, j)
			}
			if j != i {
				s.sel = append(s.sel, v)
				lo = min(lo, v)
			}
		}
		if len(s.sel) == 0 {
			continue
		}
		tau := kthLargest(s.sel, min(n, len(s.sel)))
		for j, v := range s.row {
			if j != i && v >= tau && v > lo {
				s.blocked[j] = true
			}
		}
	}
	return nil
}

// kthLargest returns the k-th largest value of v (1 <= k <= len(v)),
// reordering v: quickselect with a median-of-three pivot and a three-way
// partition, so that the long runs of equal values of sparse kernel rows
// cost O(n), not O(n^2).
func kthLargest(v []float64, k int) float64 {
	lo, hi, want := 0, len(v), k-1 // v[lo:hi] holds the (want+1)-th largest
	for {
		pivot := median3(v[lo], v[lo+(hi-lo)/2], v[hi-1])
		// v[lo:gt] > pivot, v[gt:i] == pivot, v[lt:hi] < pivot.
		gt, i, lt := lo, lo, hi
		for i < lt {
			switch {
			case v[i] > pivot:
				v[gt], v[i] = v[i], v[gt]
				gt++
				i++
			case v[i] < pivot:
				lt--
				v[i], v[lt] = v[lt], v[i]
			default:
				i++
			}
		}
		switch {
		case want < gt:
			hi = gt
		case want >= lt:
			lo = lt
		default:
			return pivot
		}
	}
}

func median3(a, b, c float64) float64 {
	return max(min(a, b), min(max(a, b), c))
}
