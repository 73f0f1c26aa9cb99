package hsicnpk

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// ---- data ----

var corel struct {
	once sync.Once
	ml   *dataset.MultiLabel
	err  error
}

// corelWindow returns the visual features and the tf-idf tag kernel of the
// first n Corel5k images carrying keyword kw (the text-stage candidates of
// the query kw). idf = log(N / df) over the whole corpus (spec A.7). It
// skips the test when the data is absent.
func corelWindow(tb testing.TB, kw string, n int) (*mat.Dense, *mat.SymDense) {
	tb.Helper()
	corel.once.Do(func() {
		dir, ok := dataset.DataDir()
		if !ok {
			corel.err = errNoData
			return
		}
		corel.ml, corel.err = dataset.LoadCorel5k(dir)
	})
	if corel.err == errNoData {
		tb.Skip("Corel5k data not found (../shared/data or $KERNELRANK_SHARED_DATA): skipping the real-data test")
	}
	if corel.err != nil {
		tb.Fatal(corel.err)
	}
	ml := corel.ml
	q := -1
	for i, name := range ml.LabelNames {
		if name == kw {
			q = i
		}
	}
	if q < 0 {
		tb.Fatalf("no keyword %q", kw)
	}
	df := make([]float64, len(ml.LabelNames))
	for _, y := range ml.Y {
		for _, l := range y {
			df[l]++
		}
	}
	var rows []int
	for i, y := range ml.Y {
		for _, l := range y {
			if l == q {
				rows = append(rows, i)
				break
			}
		}
		if len(rows) == n {
			break
		}
	}
	if len(rows) < n {
		tb.Fatalf("only %d images carry %q", len(rows), kw)
	}
	x := mat.NewDense(n, len(ml.X[0]), nil)
	tags := mat.NewDense(n, len(ml.LabelNames), nil)
	for r, i := range rows {
		x.SetRow(r, ml.X[i])
		s := 0.0
		for _, l := range ml.Y[i] {
			w := math.Log(float64(len(ml.Y)) / df[l])
			tags.Set(r, l, w)
			s += w * w
		}
		for _, l := range ml.Y[i] {
			tags.Set(r, l, tags.At(r, l)/math.Sqrt(s))
		}
	}
	return x, kernelmath.Linear(tags)
}

type noDataError struct{}

func (noDataError) Error() string { return "no data" }

var errNoData error = noDataError{}

// syntheticWindow mimics a Corel5k window: n images with 8 of 499 binary
// visual "blob" features and 1 to 5 keywords (of 120) each, both drawn mostly
// from one of 8 latent topics, so that tags and visual features are related
// but noisy; every image carries keyword 0 (the query). Tag vectors are
// normalised tf-idf.
func syntheticWindow(n int, seed uint64) (*mat.Dense, *mat.SymDense) {
	r := rand.New(rand.NewPCG(seed, 77))
	const blobs, words, topics = 499, 120, 8
	x := mat.NewDense(n, blobs, nil)
	tagIdx := make([][]int, n)
	df := make([]float64, words)
	for i := 0; i < n; i++ {
		tp := r.IntN(topics)
		for c := 0; c < 8; c++ {
			b := r.IntN(blobs)
			if r.Float64() < 0.7 {
				b = tp*40 + r.IntN(40)
			}
			x.Set(i, b, 1)
		}
		seen := map[int]bool{0: true}
		tagIdx[i] = []int{0}
		for c, m := 0, r.IntN(5); c < m; c++ {
			w := 1 + r.IntN(words-1)
			if r.Float64() < 0.7 {
				w = 1 + tp*12 + r.IntN(12)
			}
			if !seen[w] {
				seen[w] = true
				tagIdx[i] = append(tagIdx[i], w)
			}
		}
		for _, w := range tagIdx[i] {
			df[w]++
		}
	}
	tags := mat.NewDense(n, words, nil)
	for i, ws := range tagIdx {
		s := 0.0
		for _, w := range ws {
			v := math.Log(float64(n)*4/df[w]) + 1e-3 // corpus-like idf, never 0
			tags.Set(i, w, v)
			s += v * v
		}
		for _, w := range ws {
			tags.Set(i, w, tags.At(i, w)/math.Sqrt(s))
		}
	}
	return x, kernelmath.Linear(tags)
}

// window returns the Corel5k "sky" window, or the synthetic one (reported)
// when the data is absent: for benchmarks, which must run anyway.
func window(tb testing.TB, n int) (*mat.Dense, *mat.SymDense, string) {
	if dir, ok := dataset.DataDir(); ok {
		if _, err := dataset.LoadCorel5k(dir); err == nil {
			x, kt := corelWindow(tb, "sky", n)
			return x, kt, "corel5k-sky"
		}
	}
	x, kt := syntheticWindow(n, 1)
	return x, kt, "synthetic"
}

// randomProblem returns small random features and a tag kernel over n
// points with a few overlapping tags.
func randomProblem(n, d, tags int, seed uint64) (*mat.Dense, *mat.SymDense) {
	r := rand.New(rand.NewPCG(seed, 5))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, r.NormFloat64())
		}
	}
	t := mat.NewDense(n, tags, nil)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < tags; j++ {
			if r.Float64() < 0.4 {
				v := 0.5 + r.Float64()
				t.Set(i, j, v)
				s += v * v
			}
		}
		if s == 0 {
			t.Set(i, r.IntN(tags), 1)
			s = 1
		}
		for j := 0; j < tags; j++ {
			t.Set(i, j, t.At(i, j)/math.Sqrt(s))
		}
	}
	return x, kernelmath.Linear(t)
}

// ---- an independent dense reference of the scaled problem ----

// reference is eq. 6.2 with the package's documented scaling, built from
// the definitions with dense matrices and the slow KNNPairs, sharing no code
// with problem.go.
type reference struct {
	n     int
	m     *mat.SymDense // H K_t H / ||H K_t H||_F
	pairs []learners.Pair
	dd    []float64
	c, b  float64
}

func newReference(x *mat.Dense, kt *mat.SymDense, k int, mutual bool, c, budget float64) *reference {
	n, _ := x.Dims()
	d2 := kernelmath.SqDistances(x)
	pairs := kernelmath.KNNPairs(d2, k, mutual)
	mean := 0.0
	for _, p := range pairs {
		mean += d2.At(p.I, p.J)
	}
	mean /= float64(len(pairs))
	dd := make([]float64, len(pairs))
	for e, p := range pairs {
		dd[e] = d2.At(p.I, p.J) / mean
	}
	m := kernelmath.Center(kt)
	m.ScaleSym(1/math.Sqrt(kernelmath.Frobenius(m, m)), m)
	dbar := 0.0
	for _, p := range pairs {
		dbar += m.At(p.I, p.I) + m.At(p.J, p.J) - 2*m.At(p.I, p.J)
	}
	dbar /= float64(len(pairs))
	return &reference{n: n, m: m, pairs: pairs, dd: dd, c: c, b: budget / (dbar * dbar)}
}

func (r *reference) dist(k *mat.SymDense, e int) float64 {
	p := r.pairs[e]
	return k.At(p.I, p.I) + k.At(p.J, p.J) - 2*k.At(p.I, p.J)
}

// primal is P(K) = -tr(M K) + C/2 sum max(0, viol)^2.
func (r *reference) primal(k *mat.SymDense) float64 {
	v := -kernelmath.Frobenius(r.m, k)
	for e := range r.pairs {
		if x := r.dist(k, e) - r.dd[e]; x > 0 {
			v += r.c / 2 * x * x
		}
	}
	return v
}

// aMatrix returns A = M - sum alpha_e A^e.
func (r *reference) aMatrix(alpha []float64) *mat.SymDense {
	a := mat.NewSymDense(r.n, nil)
	a.CopySym(r.m)
	for e, p := range r.pairs {
		w := alpha[e]
		a.SetSym(p.I, p.I, a.At(p.I, p.I)-w)
		a.SetSym(p.J, p.J, a.At(p.J, p.J)-w)
		a.SetSym(p.I, p.J, a.At(p.I, p.J)+w)
	}
	return a
}

// closedForm is Theorem 6.34: argmax tr(A K) over {K PSD, tr KK <= B}.
func closedForm(a *mat.SymDense, b float64) *mat.SymDense {
	ap, _, err := kernelmath.ProjectPSD(a)
	if err != nil {
		panic(err)
	}
	nrm := math.Sqrt(kernelmath.Frobenius(ap, ap))
	k := mat.NewSymDense(a.SymmetricDim(), nil)
	if nrm > 0 {
		k.ScaleSym(math.Sqrt(b)/nrm, ap)
	}
	return k
}

// dual is D(alpha) = -sqrt(B) ||A_+||_F - alpha.d^2 - ||alpha||^2 / (2C);
// with a basis v (low rank) A is replaced by V^T A V.
func (r *reference) dual(alpha []float64, v *mat.Dense) float64 {
	a := r.aMatrix(alpha)
	if v != nil {
		var av, vav mat.Dense
		av.Mul(a, v)
		vav.Mul(v.T(), &av)
		_, q := v.Dims()
		a = mat.NewSymDense(q, nil)
		for i := 0; i < q; i++ {
			for j := i; j < q; j++ {
				a.SetSym(i, j, (vav.At(i, j)+vav.At(j, i))/2)
			}
		}
	}
	ap, _, err := kernelmath.ProjectPSD(a)
	if err != nil {
		panic(err)
	}
	val := -math.Sqrt(r.b) * math.Sqrt(kernelmath.Frobenius(ap, ap))
	for e, a := range alpha {
		val -= a*r.dd[e] + a*a/(2*r.c)
	}
	return val
}

// bruteForce minimises the primal by projected gradient with Nesterov
// momentum and a fixed step 1/L (L = C (2 + 2 max degree)), from K = 0,
// until the iterates stop moving: slow, simple, independent.
func (r *reference) bruteForce(maxIter int) *mat.SymDense {
	n := r.n
	deg := make([]int, n)
	for _, p := range r.pairs {
		deg[p.I]++
		deg[p.J]++
	}
	maxDeg := 0
	for _, d := range deg {
		maxDeg = max(maxDeg, d)
	}
	step := 1 / (r.c * float64(2+2*maxDeg))
	k := mat.NewSymDense(n, nil)
	prev := mat.NewSymDense(n, nil)
	y := mat.NewSymDense(n, nil)
	for it := 1; it <= maxIter; it++ {
		// gradient at y: -M + sum C max(0, viol) A^e
		g := mat.NewSymDense(n, nil)
		g.ScaleSym(-1, r.m)
		for e, p := range r.pairs {
			if v := r.dist(y, e) - r.dd[e]; v > 0 {
				w := r.c * v
				g.SetSym(p.I, p.I, g.At(p.I, p.I)+w)
				g.SetSym(p.J, p.J, g.At(p.J, p.J)+w)
				g.SetSym(p.I, p.J, g.At(p.I, p.J)-w)
			}
		}
		z := mat.NewSymDense(n, nil)
		z.AddSym(y, scaledSym(g, -step))
		proj, _, err := kernelmath.ProjectPSD(z)
		if err != nil {
			panic(err)
		}
		if nrm := math.Sqrt(kernelmath.Frobenius(proj, proj)); nrm > math.Sqrt(r.b) {
			proj.ScaleSym(math.Sqrt(r.b)/nrm, proj)
		}
		prev.CopySym(k)
		k.CopySym(proj)
		mom := float64(it-1) / float64(it+2)
		y.AddSym(k, scaledSym(subSym(k, prev), mom))
		if d := math.Sqrt(kernelmath.Frobenius(subSym(k, prev), subSym(k, prev))); d < 1e-14 && it > 100 {
			break
		}
	}
	return k
}

func scaledSym(a *mat.SymDense, s float64) *mat.SymDense {
	out := mat.NewSymDense(a.SymmetricDim(), nil)
	out.ScaleSym(s, a)
	return out
}

func subSym(a, b *mat.SymDense) *mat.SymDense {
	out := mat.NewSymDense(a.SymmetricDim(), nil)
	out.AddSym(a, scaledSym(b, -1))
	return out
}

func relDiff(a, b float64) float64 { return math.Abs(a-b) / math.Max(1, math.Abs(b)) }

func frobDiff(a, b *mat.SymDense) float64 {
	d := subSym(a, b)
	return math.Sqrt(kernelmath.Frobenius(d, d))
}
