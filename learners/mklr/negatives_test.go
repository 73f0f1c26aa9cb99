package mklr

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

func TestKthLargest(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for trial := 0; trial < 300; trial++ {
		n := 1 + r.IntN(60)
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(r.IntN(1 + trial%7)) // many ties, often all equal
		}
		sorted := slices.Clone(v)
		sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
		k := 1 + r.IntN(n)
		if got := kthLargest(slices.Clone(v), k); got != sorted[k-1] {
			t.Fatalf("kthLargest(%v, %d) = %g, want %g", v, k, got, sorted[k-1])
		}
	}
}

func denseOf(rows [][]float64) kernelmath.KernelMatrix {
	n := len(rows)
	k := mat.NewSymDense(n, nil)
	for i := range rows {
		for j := i; j < n; j++ {
			k.SetSym(i, j, rows[i][j])
		}
	}
	return kernelmath.DenseKernel{K: k}
}

// Six users, two kernels, N = 2, one friendship (0, 4), worked by hand. A
// user is blocked for i when K(i, j) >= the 2nd largest of row i (self
// excluded) and K(i, j) > the row's minimum:
//
//	K1 rows      2nd largest, min   blocked by K1   by K2   friend   candidates
//	0: 5 3 3 1 0 0     3, 0           1 2                    4        3 5
//	1: 3 5 2 0 0 0     2, 0           0 2                             3 4 5
//	2: 3 2 5 0 0 1     2, 0           0 1                             3 4 5
//	3: 1 0 0 5 4 0     1, 0           0 4             5               1 2
//	4: 0 0 0 4 5 0     0, 0           3                      0        1 2 5
//	5: 0 0 1 0 0 5     0, 0           2               3               0 1 4
//
// (K2 is the identity plus K2(3, 5) = 1: its other rows are all at their
// minimum and block nobody.) With PerUser above every count all
// candidates are drawn, and each pair drawn both ways is kept once, as
// drawn by the smaller user.
func TestSampleNegativesByHand(t *testing.T) {
	k1 := denseOf([][]float64{
		{5, 3, 3, 1, 0, 0},
		{3, 5, 2, 0, 0, 0},
		{3, 2, 5, 0, 0, 1},
		{1, 0, 0, 5, 4, 0},
		{0, 0, 0, 4, 5, 0},
		{0, 0, 1, 0, 0, 5},
	})
	k2, err := kernelmath.NewSparseSym(6, []kernelmath.Triplet{{I: 0, J: 0, V: 1}, {I: 1, J: 1, V: 1}, {I: 2, J: 2, V: 1}, {I: 3, J: 3, V: 1}, {I: 4, J: 4, V: 1}, {I: 5, J: 5, V: 1}, {I: 3, J: 5, V: 1}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := SampleNegatives(context.Background(), []kernelmath.KernelMatrix{k1, k2}, []learners.Pair{{I: 0, J: 4}}, NegativeOptions{Mode: NegConservative, Neighbours: 2, PerUser: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []learners.Pair{{I: 0, J: 3}, {I: 0, J: 5}, {I: 1, J: 3}, {I: 1, J: 4}, {I: 1, J: 5}, {I: 2, J: 3}, {I: 2, J: 4}, {I: 2, J: 5}, {I: 4, J: 5}}
	if !slices.Equal(got, want) {
		t.Errorf("negatives %v, want %v", got, want)
	}
	// With one draw a user, each user's draw is one of its candidates.
	cands := map[int][]int{0: {3, 5}, 1: {3, 4, 5}, 2: {3, 4, 5}, 3: {1, 2}, 4: {1, 2, 5}, 5: {0, 1, 4}}
	got, err = SampleNegatives(context.Background(), []kernelmath.KernelMatrix{k1, k2}, []learners.Pair{{I: 0, J: 4}}, NegativeOptions{Mode: NegConservative, Neighbours: 2, PerUser: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if !slices.Contains(cands[p.I], p.J) {
			t.Errorf("user %d drew %d, not one of its candidates %v", p.I, p.J, cands[p.I])
		}
	}
}

// topN returns the users j != i among the n most similar to i by brute
// force (sorting), with the ties and zero rule of the package doc.
func topN(k kernelmath.KernelMatrix, i, n int) map[int]bool {
	row := make([]float64, k.Dim())
	k.Row(i, row)
	var others []float64
	lo := math.Inf(1)
	for j, v := range row {
		if j != i {
			others = append(others, v)
			lo = min(lo, v)
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(others)))
	tau := others[min(n, len(others))-1]
	out := map[int]bool{}
	for j, v := range row {
		if j != i && v >= tau && v > lo {
			out[j] = true
		}
	}
	return out
}

func TestSampleNegativesProperties(t *testing.T) {
	c := newCommunity(t, 80, 4, 6, 9)
	// A second kernel: RBF of other random features.
	r := rand.New(rand.NewPCG(9, 1))
	x := mat.NewDense(80, 2, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = r.NormFloat64()
	}
	base := []kernelmath.KernelMatrix{c.k, kernelmath.DenseKernel{K: kernelmath.RBF(x, 1)}}
	opts := NegativeOptions{Mode: NegConservative, Neighbours: 10, PerUser: 4, Seed: 5}
	sample := func(o NegativeOptions, procs int) []learners.Pair {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		neg, err := SampleNegatives(context.Background(), base, c.pos, o)
		if err != nil {
			t.Fatal(err)
		}
		return neg
	}
	neg := sample(opts, 2)
	friends := map[learners.Pair]bool{}
	for _, p := range c.pos {
		friends[p], friends[learners.Pair{I: p.J, J: p.I}] = true, true
	}
	perUser := map[int]int{}
	seen := map[learners.Pair]bool{}
	for _, p := range neg {
		perUser[p.I]++
		switch {
		case p.I == p.J:
			t.Errorf("self pair %v", p)
		case friends[p]:
			t.Errorf("friends %v drawn as negatives", p)
		case seen[p] || seen[learners.Pair{I: p.J, J: p.I}]:
			t.Errorf("pair %v drawn twice", p)
		}
		seen[p] = true
		for b, k := range base {
			if topN(k, p.I, opts.Neighbours)[p.J] {
				t.Errorf("negative %v is in kernel %d's top %d of user %d", p, b, opts.Neighbours, p.I)
			}
		}
	}
	checkDraws(t, neg, perUser, opts, 80*opts.PerUser/2, sample)
}

// checkDraws checks what every negative mode promises of the draws of 80
// users: at most PerUser each, at least atLeast in all, the same pairs on
// 1 worker as on 2 (sample(opts, procs)), other pairs for another seed.
func checkDraws(t *testing.T, neg []learners.Pair, perUser map[int]int, opts NegativeOptions, atLeast int, sample func(NegativeOptions, int) []learners.Pair) {
	t.Helper()
	for u, cnt := range perUser {
		if cnt > opts.PerUser {
			t.Errorf("user %d drew %d negatives, want at most %d", u, cnt, opts.PerUser)
		}
	}
	if len(neg) < atLeast {
		t.Errorf("only %d negatives for 80 users drawing %d each", len(neg), opts.PerUser)
	}
	if !slices.Equal(neg, sample(opts, 1)) {
		t.Error("the negatives depend on the number of workers")
	}
	other := opts
	other.Seed++
	if slices.Equal(neg, sample(other, 2)) {
		t.Errorf("seeds %d and %d drew the same negatives", opts.Seed, other.Seed)
	}
}

// Hard negatives share a friend with their user and random ones need not;
// neither mode draws a friend or the user, and both are deterministic per
// seed whatever the number of workers.
func TestSampleNegativesModes(t *testing.T) {
	c := newCommunity(t, 80, 4, 6, 9)
	friends := c.pos[:len(c.pos)/4] // a sparse graph: not everyone is two hops away
	adj := map[int]map[int]bool{}
	for _, p := range friends {
		for _, e := range [][2]int{{p.I, p.J}, {p.J, p.I}} {
			if adj[e[0]] == nil {
				adj[e[0]] = map[int]bool{}
			}
			adj[e[0]][e[1]] = true
		}
	}
	shareFriend := func(i, j int) bool {
		for f := range adj[i] {
			if adj[f][j] {
				return true
			}
		}
		return false
	}
	for _, mode := range []NegativeMode{NegHard, NegRandom} {
		t.Run(mode.String(), func(t *testing.T) {
			opts := NegativeOptions{Mode: mode, PerUser: 5, Seed: 5}
			sample := func(o NegativeOptions, procs int) []learners.Pair {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				neg, err := SampleNegatives(context.Background(), []kernelmath.KernelMatrix{c.k}, friends, o)
				if err != nil {
					t.Fatal(err)
				}
				return neg
			}
			neg := sample(opts, 2)
			far := 0
			perUser := map[int]int{}
			for _, p := range neg {
				perUser[p.I]++
				switch {
				case p.I == p.J:
					t.Errorf("self pair %v", p)
				case adj[p.I][p.J]:
					t.Errorf("friends %v drawn as negatives", p)
				case !shareFriend(p.I, p.J):
					far++
					if mode == NegHard {
						t.Errorf("hard negative %v shares no friend", p)
					}
				}
			}
			if mode == NegRandom && far == 0 {
				t.Error("no random negative is beyond two hops")
			}
			checkDraws(t, neg, perUser, opts, 80*opts.PerUser/4, sample)
		})
	}
}

func TestSampleNegativesBadInput(t *testing.T) {
	k := denseOf([][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}})
	nan := denseOf([][]float64{{1, math.NaN(), 0}, {math.NaN(), 1, 0}, {0, 0, 1}})
	small := denseOf([][]float64{{1, 0}, {0, 1}})
	ctx := context.Background()
	cases := map[string]struct {
		base    []kernelmath.KernelMatrix
		friends []learners.Pair
		opts    NegativeOptions
	}{
		"no kernels":          {nil, nil, NegativeOptions{}},
		"size mismatch":       {[]kernelmath.KernelMatrix{k, small}, nil, NegativeOptions{}},
		"friend out of range": {[]kernelmath.KernelMatrix{k}, []learners.Pair{{I: 0, J: 3}}, NegativeOptions{}},
		"friend self-loop":    {[]kernelmath.KernelMatrix{k}, []learners.Pair{{I: 1, J: 1}}, NegativeOptions{}},
		"NaN entry":           {[]kernelmath.KernelMatrix{nan}, nil, NegativeOptions{Mode: NegConservative}},
		"negative N":          {[]kernelmath.KernelMatrix{k}, nil, NegativeOptions{Neighbours: -1}},
		"negative PerUser":    {[]kernelmath.KernelMatrix{k}, nil, NegativeOptions{PerUser: -2}},
		"unknown mode":        {[]kernelmath.KernelMatrix{k}, nil, NegativeOptions{Mode: NegativeMode(9)}},
	}
	for name, cs := range cases {
		if _, err := SampleNegatives(ctx, cs.base, cs.friends, cs.opts); !errors.Is(err, learners.ErrInput) {
			t.Errorf("%s: got %v, want an error wrapping learners.ErrInput", name, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := SampleNegatives(cctx, []kernelmath.KernelMatrix{k}, nil, NegativeOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}

// friendsOfFriends against a brute-force two-hop set, on a network whose
// users' neighbourhoods are both sparse (listed and sorted) and dense (a hub's
// friends reach most users: listed by a scan).
func TestFriendsOfFriendsSparseAndDense(t *testing.T) {
	const n = 2000
	r := rand.New(rand.NewPCG(4, 4))
	var friends []learners.Pair
	for i := 1; i < n; i++ {
		friends = append(friends, learners.Pair{I: i, J: r.IntN(i)})
		if i%3 == 0 {
			friends = append(friends, learners.Pair{I: i, J: 0}) // user 0 is a hub
		}
	}
	adj, err := adjacency(n, friends)
	if err != nil {
		t.Fatal(err)
	}
	s := newSampler(n)
	kinds := map[bool]int{}
	for i := 0; i < n; i++ {
		s.friendsOfFriends(i, adj)
		near := map[int]bool{i: true}
		for _, f := range adj[i] {
			near[f] = true
		}
		var want []int
		for j := 0; j < n; j++ {
			if near[j] {
				continue
			}
			for _, f := range adj[i] {
				if slices.Contains(adj[f], j) {
					want = append(want, j)
					break
				}
			}
		}
		if !slices.Equal(s.cand, want) {
			t.Fatalf("user %d: friends of friends %v, want %v", i, s.cand, want)
		}
		if slices.Contains(s.blocked, true) {
			t.Fatalf("user %d: marks left set", i)
		}
		kinds[len(want)*scanFraction >= n]++
	}
	if kinds[true] == 0 || kinds[false] == 0 {
		t.Fatalf("neighbourhoods dense %d, sparse %d: want both", kinds[true], kinds[false])
	}
}
