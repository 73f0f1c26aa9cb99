package kernelmath

import (
	"fmt"
	"math"
)

// Push approximates K x for a sparse non-negative x (x[i] at vertices
// idx[i]) by local forward push, touching only a neighbourhood of x's
// support: the cost depends on eps, not on the graph's size.
//
// K x = D^-1/2 PPR(D^1/2 x), where PPR(s) = alpha sum_k (1-alpha)^k P^k s
// is personalised PageRank with restart alpha = 1/(1+gamma) on the
// column-stochastic walk P = A D^-1 (since N^k = D^-1/2 (A D^-1)^k D^1/2).
// The push of Andersen, Chung and Lang (2006) keeps an estimate q and a
// residual r, starting from q = 0, r = s = D^1/2 x, with the invariant
// PPR(s) = q + PPR(r); pushing a vertex v moves alpha r_v into q_v and
// spreads (1-alpha) r_v A_wv / d_v to its neighbours w. It pushes every
// vertex whose residual exceeds eps m d_v, m = |s|_1, so on return r_v <=
// eps m d_v everywhere. The residual's own share is then kept where it
// lies: Push returns y = D^-1/2 (q + r), which loses none of the mass
// (PPR keeps it) where q alone would drop what lies beyond the frontier
// (on YouTube's groups, summing q ranked a user's top 10 groups as the
// exact sums do for far fewer users; docs/scaling.md). Since
// alpha r_v <= PPR(r)_v <= d_v max_w r_w/d_w (PPR is reversible:
// PPR(e_w)_v / d_v = PPR(e_v)_w / d_w),
//
//	|(K x)_v - y_v| <= eps m sqrt(d_v),    sum_v sqrt(d_v) ((K x)_v - y_v) = 0,
//
// and Push returns the residual mass |r|_1 (at most m) beside. Each push
// moves more than alpha eps m d_v into q, whose total stays below m, so
// the pushes visit fewer than 1/(alpha eps) edges (unit weights; weights
// below 1 allow more row entries a unit of degree): independent of x and
// of n. An isolated vertex's K row is e_v (L is 0 there), and is returned
// as such.
//
// The vertices are returned in the order first touched (those of x
// first), each once, with their values. Push is safe for concurrent use.
func (r *RegLaplacian) Push(idx []int, x []float64, eps float64) (out []int, val []float64, residual float64, err error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return nil, nil, 0, fmt.Errorf("reglaplacian push: eps must be positive and finite, got %v", eps)
	}
	if len(idx) != len(x) {
		return nil, nil, 0, fmt.Errorf("reglaplacian push: %d vertices for %d values", len(idx), len(x))
	}
	n := r.Dim()
	w := r.pushScratch(n)
	defer r.pool.Put(w)
	touch := func(v int) {
		if !w.seen[v] {
			w.seen[v] = true
			w.touched = append(w.touched, v)
		}
	}
	// Isolated vertices take their x as it is; the rest start the residual.
	mass := 0.0
	for i, v := range idx {
		switch {
		case v < 0 || v >= n:
			w.reset()
			return nil, nil, 0, fmt.Errorf("reglaplacian push: vertex %d outside [0, %d)", v, n)
		case !(x[i] >= 0) || math.IsInf(x[i], 0):
			w.reset()
			return nil, nil, 0, fmt.Errorf("reglaplacian push: value %v at vertex %d is not non-negative and finite", x[i], v)
		}
		touch(v)
		if s := r.invSqrt[v]; s == 0 {
			w.q[v] += x[i]
		} else {
			w.r[v] += x[i] / s
			mass += x[i] / s
		}
	}
	alpha := 1 / (1 + r.gamma)
	limit := eps * mass // r_v above limit d_v is pushed
	// due says whether v must be pushed: d_v = 1/invSqrt_v^2.
	due := func(v int) bool {
		s := r.invSqrt[v]
		return s != 0 && w.r[v]*s*s > limit
	}
	for _, v := range w.touched {
		if due(v) {
			w.queued[v] = true
			w.queue = append(w.queue, v)
		}
	}
	for head := 0; head < len(w.queue); head++ {
		v := w.queue[head]
		w.queued[v] = false
		rv := w.r[v]
		w.r[v] = 0
		w.q[v] += alpha * rv
		s := r.invSqrt[v]
		spread := (1 - alpha) * rv * s * s
		cols, vals := r.adj.RowNonzeros(v)
		for p, c := range cols {
			u := int(c)
			touch(u)
			w.r[u] += spread * vals[p]
			if !w.queued[u] && due(u) {
				w.queued[u] = true
				w.queue = append(w.queue, u)
			}
		}
	}
	out = make([]int, len(w.touched))
	val = make([]float64, len(w.touched))
	for i, v := range w.touched {
		out[i] = v
		residual += w.r[v]
		if s := r.invSqrt[v]; s != 0 {
			val[i] = (w.q[v] + w.r[v]) * s
		} else {
			val[i] = w.q[v]
		}
	}
	w.reset()
	return out, val, residual, nil
}

// PushRow is Push for x = e_i: row i of K, within eps sqrt(d_i d_v) of
// each entry K(i, v) (m = sqrt(d_i)).
func (r *RegLaplacian) PushRow(i int, eps float64) (out []int, val []float64, residual float64, err error) {
	return r.Push([]int{i}, []float64{1}, eps)
}

// pushWork is Push's scratch: dense over the vertices, and cleared after
// use only where touched, so a push costs what it touches.
type pushWork struct {
	q, r           []float64
	seen, queued   []bool
	touched, queue []int
}

// pushScratch returns scratch for n vertices, all clear.
func (r *RegLaplacian) pushScratch(n int) *pushWork {
	if w, ok := r.pool.Get().(*pushWork); ok {
		return w
	}
	return &pushWork{q: make([]float64, n), r: make([]float64, n), seen: make([]bool, n), queued: make([]bool, n)}
}

// reset clears what a push touched.
func (w *pushWork) reset() {
	for _, v := range w.touched {
		w.q[v], w.r[v], w.seen[v], w.queued[v] = 0, 0, false, false
	}
	w.touched, w.queue = w.touched[:0], w.queue[:0]
}
