// Package forest is a random forest of binary classification trees
// (Breiman 2001) as Kumar's thesis uses it for random-forest TS-MKL
// (shared/specs/kumar-thesis.md section 1.9): every tree is a CART tree
// grown on a bootstrap sample of the training size (drawn with
// replacement), each split tries a random subset of mtry features (all of
// them when p <= mtry, which is plain bagging) and takes the threshold of
// maximum information gain (the entropy criterion, not Gini) among the
// midpoints between consecutive distinct sorted values; a node is split
// while a split leaves at least MinLeaf bootstrap samples on each side and
// gains information, and is otherwise a leaf voting its majority class.
// The forest predicts by majority vote; Fraction (Fractions, for many
// samples) gives the fraction of trees voting for the positive class, the
// similarity of random-forest TS-MKL.
//
// It is shared code, not a learner: it registers nothing.
//
// Choices the thesis leaves open ([I]): MinLeaf bounds the bootstrap
// samples (duplicates counted) of each child, as MATLAB's MinLeafSize
// does; a node whose sampled features offer no split with positive gain
// is a leaf, as in Breiman's code (no further features are tried); a leaf
// with as many positive as negative samples votes by a coin of the tree's
// random stream, as R's randomForest breaks ties at random.
//
// Growing follows Breiman's code: every feature is sorted once over all
// samples; a tree keeps, per feature, its in-bag samples in sorted order
// and partitions these lists stably at every split, so that finding the
// best threshold of a feature in a node is one scan (O(p N) work per
// level of the tree, no sorting). Bootstrap duplicates are weights, not
// copies. The entropy terms are n log n of integer counts, from a table.
//
// Fit is deterministic given Options.Seed: tree t draws from its own
// random stream (seed, t), whatever goroutine grows it and in whatever
// order. Trees are grown on Options.Workers goroutines, and the context is
// checked before every tree; the fraction of trees grown is reported to
// learners.Progress (one report at a time, from the growing goroutines).
package forest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// Options configures Fit. The zero value of a field means its default
// (the thesis' settings).
type Options struct {
	Trees   int // number of trees (default 500)
	MinLeaf int // minimum bootstrap samples in a leaf (default 3)
	Mtry    int // features tried per split (default 10; all when p <= Mtry)
	Seed    uint64
	// Workers grow trees in parallel (default GOMAXPROCS); the forest does
	// not depend on it.
	Workers int
}

// Forest is a trained random forest over p features.
type Forest struct {
	p     int
	trees []tree
}

// tree is a binary tree in an array: node 0 is the root, and the children
// of an inner node are left and left+1.
type tree struct{ nodes []node }

type node struct {
	feature int32   // split feature; leafNo or leafYes at a leaf
	left    int32   // index of the left child (inner nodes)
	thr     float64 // an inner node sends z[feature] <= thr left
}

// The feature of a leaf voting negative, and positive.
const (
	leafNo  = -1
	leafYes = -2
)

// data is what every tree of a fit shares (read only).
type data struct {
	n, p  int
	cols  [][]float64 // cols[f][i] = feature f of sample i
	order [][]int32   // order[f]: the samples sorted by feature f (ties by index)
	y     []bool
	xlogx []float64 // xlogx[k] = k log k, k = 0..n
	opt   Options
}

// Fit grows a forest on the rows of x (n samples, p features) with the
// classes y (true = positive). Errors wrap learners.ErrInput for bad input
// or are the context's.
func Fit(ctx context.Context, x *mat.Dense, y []bool, opt Options) (*Forest, error) {
	d, err := newData(x, y, opt)
	if err != nil {
		return nil, err
	}
	opt = d.opt
	f := &Forest{p: d.p, trees: make([]tree, opt.Trees)}
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex // guards firstErr, done and the progress reports
	var firstErr error
	done := 0
	for range opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newGrower(d)
			for {
				t := int(next.Add(1)) - 1
				if t >= opt.Trees {
					return
				}
				if err := ctx.Err(); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
					return
				}
				f.trees[t] = g.grow(rand.New(rand.NewPCG(opt.Seed, uint64(t))))
				mu.Lock()
				done++
				learners.Progress(ctx, float64(done)/float64(opt.Trees))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return f, nil
}

// newData checks the input, fills in the default options and sorts the
// features.
func newData(x *mat.Dense, y []bool, opt Options) (*data, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: forest: no samples", learners.ErrInput)
	}
	n, p := x.Dims()
	switch {
	case n == 0 || p == 0:
		return nil, fmt.Errorf("%w: forest: %d samples of %d features", learners.ErrInput, n, p)
	case len(y) != n:
		return nil, fmt.Errorf("%w: forest: %d classes for %d samples", learners.ErrInput, len(y), n)
	case n > math.MaxInt32:
		return nil, fmt.Errorf("%w: forest: %d samples, at most %d", learners.ErrInput, n, math.MaxInt32)
	case opt.Trees < 0 || opt.MinLeaf < 0 || opt.Mtry < 0 || opt.Workers < 0:
		return nil, fmt.Errorf("%w: forest: negative option in %+v", learners.ErrInput, opt)
	}
	opt.Trees = cmp.Or(opt.Trees, 500)
	opt.MinLeaf = cmp.Or(opt.MinLeaf, 3)
	opt.Mtry = min(cmp.Or(opt.Mtry, 10), p)
	opt.Workers = min(cmp.Or(opt.Workers, runtime.GOMAXPROCS(0)), opt.Trees)
	d := &data{n: n, p: p, cols: make([][]float64, p), order: make([][]int32, p), y: y, xlogx: make([]float64, n+1), opt: opt}
	for f := range p {
		col := mat.Col(nil, f, x)
		for i, v := range col {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: forest: sample %d feature %d is %v", learners.ErrInput, i, f, v)
			}
		}
		ord := make([]int32, n)
		for i := range ord {
			ord[i] = int32(i)
		}
		slices.SortFunc(ord, func(a, b int32) int { return cmp.Or(cmp.Compare(col[a], col[b]), cmp.Compare(a, b)) })
		d.cols[f], d.order[f] = col, ord
	}
	for k := 1; k <= n; k++ {
		d.xlogx[k] = float64(k) * math.Log(float64(k))
	}
	return d, nil
}

// grower holds one goroutine's scratch, reused from tree to tree.
type grower struct {
	d      *data
	w      []int32   // bootstrap multiplicity of each sample
	order  [][]entry // per feature: the in-bag samples, each node's in a contiguous sorted run
	left   []bool    // scratch of a partition: does sample i go left
	tmp    []entry
	feats  []int
	nodes  []node
	stack  []span
	picked []int
}

// entry is an in-bag sample in a feature's order list, with what a scan
// of the list needs, so that it reads the list alone: the feature's value,
// and the bootstrap count times 2 plus 1 for a positive.
type entry struct {
	v  float64
	i  int32
	wy int32
}

// span is a node to grow: its index, the run [lo, hi) of its samples in
// every order list, and their bootstrap count and positives among them.
type span struct {
	node, lo, hi int
	total, pos   int32
}

func newGrower(d *data) *grower {
	g := &grower{d: d, w: make([]int32, d.n), order: make([][]entry, d.p), left: make([]bool, d.n), tmp: make([]entry, d.n),
		feats: make([]int, d.p)}
	for f := range g.order {
		g.order[f] = make([]entry, 0, d.n)
	}
	return g
}

// ent is n times the entropy (in nats) of a node of n samples, q of them
// positive: n log n - q log q - (n-q) log(n-q).
func (d *data) ent(n, q int32) float64 { return d.xlogx[n] - d.xlogx[q] - d.xlogx[n-q] }

// grow grows one tree on a bootstrap sample drawn from its random stream.
func (g *grower) grow(rng *rand.Rand) tree {
	clear(g.w)
	for range g.d.n {
		g.w[rng.IntN(g.d.n)]++
	}
	return g.build(rng)
}

// build grows a tree on the samples weighted by g.w.
func (g *grower) build(rng *rand.Rand) tree {
	g.inBag()
	for f := range g.feats {
		g.feats[f] = f
	}
	root := span{hi: len(g.order[0])}
	for _, e := range g.order[0] {
		w := e.wy >> 1
		root.total += w
		root.pos += w * (e.wy & 1)
	}
	g.nodes = append(g.nodes[:0], node{})
	g.stack = append(g.stack[:0], root)
	for len(g.stack) > 0 {
		s := g.stack[len(g.stack)-1]
		g.stack = g.stack[:len(g.stack)-1]
		feature, cut, thr, wl, pl, ok := -1, 0, 0.0, int32(0), int32(0), false
		if g.splittable(s) {
			feature, cut, thr, wl, pl, ok = g.bestSplit(s, rng)
		}
		if !ok {
			vote := 2*s.pos > s.total
			if 2*s.pos == s.total {
				vote = rng.IntN(2) == 1
			}
			g.nodes[s.node] = node{feature: leafNo}
			if vote {
				g.nodes[s.node].feature = leafYes
			}
			continue
		}
		l := len(g.nodes)
		g.nodes[s.node] = node{feature: int32(feature), left: int32(l), thr: thr}
		g.nodes = append(g.nodes, node{}, node{})
		left := span{l, s.lo, cut, wl, pl}
		right := span{l + 1, cut, s.hi, s.total - wl, s.pos - pl}
		// Children that are leaves need no sorted runs: two of them, no partition.
		if g.splittable(left) || g.splittable(right) {
			g.partition(s, feature, cut)
		}
		// Right child pushed first: the left one is grown first.
		g.stack = append(g.stack, right, left)
	}
	return tree{nodes: slices.Clone(g.nodes)}
}

// inBag fills the order lists with the samples of positive weight.
func (g *grower) inBag() {
	d := g.d
	for f := range d.p {
		ord, col := g.order[f][:0], d.cols[f]
		for _, i := range d.order[f] {
			if w := g.w[i]; w > 0 {
				wy := 2 * w
				if d.y[i] {
					wy++
				}
				ord = append(ord, entry{col[i], i, wy})
			}
		}
		g.order[f] = ord
	}
}

// splittable says whether a node may be split: it holds both classes and
// MinLeaf samples for each side.
func (g *grower) splittable(s span) bool {
	return s.pos > 0 && s.pos < s.total && s.total >= 2*int32(g.d.opt.MinLeaf)
}

// bestSplit tries mtry random features on the node and returns the split
// of maximum information gain: the feature, the end of the left run in
// the feature's order (a position in [s.lo, s.hi)), the threshold, and
// the count and positives on the left. ok is false when no split gains
// information with MinLeaf samples a side.
func (g *grower) bestSplit(s span, rng *rand.Rand) (feature, cut int, thr float64, bestWl, bestPl int32, ok bool) {
	d := g.d
	total, pos := s.total, s.pos
	minLeaf := int32(d.opt.MinLeaf)
	// A split must lower the summed entropy by more than rounding.
	best := d.ent(total, pos) - 1e-9*float64(total)
	feats := g.feats
	if d.opt.Mtry < d.p {
		for k := range d.opt.Mtry { // a partial Fisher-Yates shuffle
			j := k + rng.IntN(d.p-k)
			feats[k], feats[j] = feats[j], feats[k]
		}
		feats = feats[:d.opt.Mtry]
	}
	// The features in ascending order, so that ties between them go the
	// same way whatever the shuffle left: the lowest feature wins.
	g.picked = append(g.picked[:0], feats...)
	slices.Sort(g.picked)
	for _, f := range g.picked {
		ord := g.order[f][s.lo:s.hi]
		var wl, pl int32
		for k := 0; k < len(ord)-1; k++ {
			e := &ord[k]
			w := e.wy >> 1
			wl += w
			pl += w * (e.wy & 1)
			v, next := e.v, ord[k+1].v
			if wl < minLeaf || v == next {
				continue
			}
			if total-wl < minLeaf {
				break
			}
			if crit := d.ent(wl, pl) + d.ent(total-wl, pos-pl); crit < best {
				best, feature, cut, bestWl, bestPl, ok = crit, f, s.lo+k+1, wl, pl, true
				if thr = v + (next-v)/2; thr >= next { // adjacent floats
					thr = v
				}
			}
		}
	}
	return feature, cut, thr, bestWl, bestPl, ok
}

// partition moves, in every feature's order list, the node's samples that
// go left (the run [s.lo, cut) of feature's list) before those that go
// right, keeping each side sorted.
func (g *grower) partition(s span, feature, cut int) {
	for k, e := range g.order[feature][s.lo:s.hi] {
		g.left[e.i] = s.lo+k < cut
	}
	for f, ord := range g.order {
		if f == feature {
			continue
		}
		run := ord[s.lo:s.hi]
		l, r := 0, 0
		tmp := g.tmp[:len(run)]
		for _, e := range run {
			if g.left[e.i] {
				run[l] = e
				l++
			} else {
				tmp[r] = e
				r++
			}
		}
		copy(run[l:], tmp[:r])
	}
}

// P returns the number of features.
func (f *Forest) P() int { return f.p }

// Trees returns the number of trees.
func (f *Forest) Trees() int { return len(f.trees) }

// predict returns the vote of the tree on z.
func (t *tree) predict(z []float64) bool {
	k := 0
	for {
		nd := &t.nodes[k]
		if nd.feature < 0 {
			return nd.feature == leafYes
		}
		k = int(nd.left)
		if z[nd.feature] > nd.thr {
			k++
		}
	}
}

// Votes returns the number of trees voting positive on z, which holds P
// values.
func (f *Forest) Votes(z []float64) (int, error) {
	if len(z) != f.p {
		return 0, fmt.Errorf("%w: forest: %d values for %d features", learners.ErrInput, len(z), f.p)
	}
	v := 0
	for t := range f.trees {
		if f.trees[t].predict(z) {
			v++
		}
	}
	return v, nil
}

// Fractions sets dst[r] to the fraction of trees voting positive on row r
// of z (len(dst) rows of P values). It walks one tree over all the rows
// before the next, which keeps the tree in cache: many rows are faster
// this way than by Fraction.
func (f *Forest) Fractions(dst []float64, z *mat.Dense) error {
	if r, c := z.Dims(); r != len(dst) || c != f.p {
		return fmt.Errorf("%w: forest: %d x %d values for %d rows of %d features", learners.ErrInput, r, c, len(dst), f.p)
	}
	clear(dst)
	for t := range f.trees {
		for r := range dst {
			if f.trees[t].predict(z.RawRowView(r)) {
				dst[r]++
			}
		}
	}
	for r := range dst {
		dst[r] /= float64(len(f.trees))
	}
	return nil
}

// Fraction returns the fraction of trees voting positive on z.
func (f *Forest) Fraction(z []float64) (float64, error) {
	v, err := f.Votes(z)
	return float64(v) / float64(len(f.trees)), err
}

// Predict is the forest's majority vote on z (a tie is negative).
func (f *Forest) Predict(z []float64) (bool, error) {
	v, err := f.Votes(z)
	return 2*v > len(f.trees), err
}
