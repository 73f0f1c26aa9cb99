package kernelmath

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/internal/metrics"
	"gonum.org/v1/gonum/mat"
)

// kmBlobs returns n points in d dimensions around k well separated centres
// (centre c at 10 along axis c), point i in cluster i % k.
func kmBlobs(n, k, d int, seed uint64) (*mat.Dense, []int) {
	r := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, d, nil)
	truth := make([]int, n)
	for i := range n {
		truth[i] = i % k
		for f := range d {
			v := 0.5 * r.NormFloat64()
			if f == truth[i]%d {
				v += 10 * float64(1+truth[i]/d)
			}
			x.Set(i, f, v)
		}
	}
	return x, truth
}

func kmRun(t *testing.T, f func() (*Clustering, error)) *Clustering {
	t.Helper()
	c, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestKMeansByHand(t *testing.T) {
	// {0, 1} and {10, 11}: centres 0.5 and 10.5, objective 4 * 0.25 = 1.
	x := mat.NewDense(4, 1, []float64{0, 10, 1, 11})
	c := kmRun(t, func() (*Clustering, error) { return KMeans(context.Background(), x, 2, KMeansOptions{Seed: 1}) })
	if c.Labels[0] != c.Labels[2] || c.Labels[1] != c.Labels[3] || c.Labels[0] == c.Labels[1] {
		t.Errorf("labels %v", c.Labels)
	}
	near(t, "objective", c.Objective, 1, 1e-12)
	// The kernel form on the linear kernel: the same clusters and objective.
	kc := kmRun(t, func() (*Clustering, error) {
		return KernelKMeans(context.Background(), Linear(x), 2, KMeansOptions{Seed: 1})
	})
	if metrics.ClusteringAccuracy(c.Labels, kc.Labels) != 1 {
		t.Errorf("kernel k-means labels %v, k-means %v", kc.Labels, c.Labels)
	}
	near(t, "kernel objective", kc.Objective, 1, 1e-12)
}

func TestKMeansRecoversBlobs(t *testing.T) {
	ctx := context.Background()
	x, truth := kmBlobs(90, 3, 3, 1)
	c := kmRun(t, func() (*Clustering, error) { return KMeans(ctx, x, 3, KMeansOptions{Seed: 7}) })
	if acc := metrics.ClusteringAccuracy(truth, c.Labels); acc != 1 {
		t.Errorf("k-means accuracy %g", acc)
	}
	for name, k := range map[string]*mat.SymDense{"linear": Linear(x), "rbf": RBF(x, 20)} {
		kc := kmRun(t, func() (*Clustering, error) { return KernelKMeans(ctx, k, 3, KMeansOptions{Seed: 7}) })
		if acc := metrics.ClusteringAccuracy(truth, kc.Labels); acc != 1 {
			t.Errorf("kernel k-means (%s) accuracy %g", name, acc)
		}
	}
	// A kernel with no features behind it: two blocks of mutual similarity
	// 1 (plus the identity) are the two clusters.
	k := mat.NewSymDense(7, nil)
	for i := range 7 {
		for j := i; j < 7; j++ {
			if (i < 3) == (j < 3) {
				k.SetSym(i, j, 1)
			}
		}
		k.SetSym(i, i, 2)
	}
	kc := kmRun(t, func() (*Clustering, error) { return KernelKMeans(ctx, k, 2, KMeansOptions{}) })
	if acc := metrics.ClusteringAccuracy([]int{0, 0, 0, 1, 1, 1, 1}, kc.Labels); acc != 1 {
		t.Errorf("block kernel: labels %v", kc.Labels)
	}
	// Objective by hand: every point is at squared distance
	// K_ii - 2 mean_j K_ij + mean K = 2 - 2(m+1)/m + (m+1)/m = 1 - 1/m from
	// its block's centre, m the block size: 3(2/3) + 4(3/4) = 5.
	near(t, "block objective", kc.Objective, 5, 1e-12)
}

func TestKMeansDeterministicPerSeed(t *testing.T) {
	x, _ := kmBlobs(60, 4, 2, 2) // overlapping in 2-D: starts matter
	for _, seed := range []uint64{1, 2, 3} {
		opt := KMeansOptions{Seed: seed, Restarts: 3}
		a := kmRun(t, func() (*Clustering, error) { return KMeans(context.Background(), x, 4, opt) })
		b := kmRun(t, func() (*Clustering, error) { return KMeans(context.Background(), x, 4, opt) })
		if !slices.Equal(a.Labels, b.Labels) || a.Objective != b.Objective {
			t.Errorf("seed %d: two runs differ", seed)
		}
	}
}

// Identical points: every cluster still gets a member (empty clusters are
// refilled) and the objective is 0.
func TestKMeansEmptyClustersRefilled(t *testing.T) {
	x := mat.NewDense(6, 2, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	c := kmRun(t, func() (*Clustering, error) { return KMeans(context.Background(), x, 3, KMeansOptions{}) })
	seen := map[int]bool{}
	for _, l := range c.Labels {
		seen[l] = true
	}
	if len(seen) != 3 || c.Objective != 0 {
		t.Errorf("labels %v, objective %g", c.Labels, c.Objective)
	}
}

func kmHonoured(t *testing.T, name string, c *Clustering, must, cannot []Pair) {
	t.Helper()
	for _, p := range must {
		if c.Labels[p.I] != c.Labels[p.J] {
			t.Errorf("%s: must-link %v broken", name, p)
		}
	}
	for _, p := range cannot {
		if c.Labels[p.I] == c.Labels[p.J] {
			t.Errorf("%s: cannot-link %v broken", name, p)
		}
	}
	if c.Violations != 0 {
		t.Errorf("%s: %d violations reported", name, c.Violations)
	}
}

// kmBestPartition enumerates all labelings into k clusters and returns the
// least objective among those honouring the constraints.
func kmBestPartition(x *mat.Dense, k int, must, cannot []Pair) float64 {
	n, _ := x.Dims()
	labels := make([]int, n)
	best := math.Inf(1)
	for code := 0; code < int(math.Pow(float64(k), float64(n))); code++ {
		for i, v := 0, code; i < n; i, v = i+1, v/k {
			labels[i] = v % k
		}
		ok := true
		for _, p := range must {
			ok = ok && labels[p.I] == labels[p.J]
		}
		for _, p := range cannot {
			ok = ok && labels[p.I] != labels[p.J]
		}
		if !ok {
			continue
		}
		sp := &featureSpace{x: x, centres: mat.NewDense(k, 1, nil), count: make([]int, k)}
		sp.update(labels)
		obj := 0.0
		for i, c := range labels {
			if sp.count[c] > 0 {
				obj += sp.centreDist(i, c)
			}
		}
		best = min(best, obj)
	}
	return best
}

func TestCOPKMeansByHand(t *testing.T) {
	// 0, 1 | 10, 11 are the natural clusters; the constraints tie 0 to 10
	// and keep 0 from 1.
	x := mat.NewDense(4, 1, []float64{0, 1, 10, 11})
	must, cannot := []Pair{{0, 2}}, []Pair{{0, 1}}
	c := kmRun(t, func() (*Clustering, error) {
		return KMeans(context.Background(), x, 2, KMeansOptions{MustLink: must, CannotLink: cannot})
	})
	kmHonoured(t, "by hand", c, must, cannot)
	// {0, 10, 11}: mean 7, 49 + 9 + 16 = 74; {0, 10} | {1, 11}: 50 + 50 =
	// 100. Enumeration agrees.
	near(t, "objective", c.Objective, 74, 1e-9)
	near(t, "enumeration", kmBestPartition(x, 2, must, cannot), 74, 1e-9)
}

// Constraints drawn from the true labels, as in the clustering protocol,
// on blobs that overlap: every constraint holds, for features and kernels,
// and on small problems the result is the best feasible partition.
func TestCOPKMeansHonoursRandomConstraints(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 10))
	x, truth := kmBlobs(60, 3, 2, 4)
	n := len(truth)
	var must, cannot []Pair
	for range 40 {
		i, j := r.IntN(n), r.IntN(n)
		if i == j {
			continue
		}
		if truth[i] == truth[j] {
			must = append(must, Pair{i, j})
		} else {
			cannot = append(cannot, Pair{i, j})
		}
	}
	opt := KMeansOptions{Seed: 5, MustLink: must, CannotLink: cannot}
	c := kmRun(t, func() (*Clustering, error) { return KMeans(ctx, x, 3, opt) })
	kmHonoured(t, "features", c, must, cannot)
	kc := kmRun(t, func() (*Clustering, error) { return KernelKMeans(ctx, RBF(x, 10), 3, opt) })
	kmHonoured(t, "kernel", kc, must, cannot)

	for trial := range 5 {
		small := mat.NewDense(7, 1, nil)
		for i := range 7 {
			small.Set(i, 0, r.NormFloat64()*3)
		}
		must := []Pair{{0, 1 + trial%3}}
		cannot := []Pair{{2, 3}, {0, 4}, {5, 6}}
		c := kmRun(t, func() (*Clustering, error) {
			return KMeans(ctx, small, 2, KMeansOptions{Seed: uint64(trial), MustLink: must, CannotLink: cannot})
		})
		kmHonoured(t, "small", c, must, cannot)
		near(t, "small objective vs enumeration", c.Objective, kmBestPartition(small, 2, must, cannot), 1e-9)
	}
}

// Three points that cannot link pairwise, in two clusters: no feasible
// assignment exists; the result breaks exactly one cannot-link.
func TestCOPKMeansInfeasibleReportsViolations(t *testing.T) {
	x := mat.NewDense(3, 1, []float64{0, 1, 2})
	cannot := []Pair{{0, 1}, {1, 2}, {0, 2}}
	c := kmRun(t, func() (*Clustering, error) {
		return KMeans(context.Background(), x, 2, KMeansOptions{CannotLink: cannot})
	})
	if c.Violations != 1 {
		t.Errorf("violations %d, want 1 (labels %v)", c.Violations, c.Labels)
	}
}

func TestKMeansErrors(t *testing.T) {
	ctx := context.Background()
	x := mat.NewDense(3, 1, []float64{0, 1, 2})
	nan := mat.NewDense(2, 1, []float64{0, math.NaN()})
	for name, tc := range map[string]struct {
		x   *mat.Dense
		k   int
		opt KMeansOptions
	}{
		"no points":       {nil, 1, KMeansOptions{}},
		"k zero":          {x, 0, KMeansOptions{}},
		"k above n":       {x, 4, KMeansOptions{}},
		"NaN":             {nan, 1, KMeansOptions{}},
		"pair range":      {x, 2, KMeansOptions{MustLink: []Pair{{0, 3}}}},
		"self pair":       {x, 2, KMeansOptions{CannotLink: []Pair{{1, 1}}}},
		"contradiction":   {x, 2, KMeansOptions{MustLink: []Pair{{0, 1}, {1, 2}}, CannotLink: []Pair{{0, 2}}}},
		"too few groups":  {x, 3, KMeansOptions{MustLink: []Pair{{0, 1}}}},
		"kernel mismatch": {x, 2, KMeansOptions{}},
	} {
		var err error
		if name == "kernel mismatch" {
			_, err = KernelKMeans(ctx, mat.NewSymDense(2, []float64{1, math.Inf(1), math.Inf(1), 1}), 1, tc.opt)
		} else {
			_, err = KMeans(ctx, tc.x, tc.k, tc.opt)
		}
		if !errors.Is(err, ErrInput) {
			t.Errorf("%s: got %v, want ErrInput", name, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := KMeans(cctx, x, 2, KMeansOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}

// TestKernelKMeansPCAStart: a planted 150/50 split along a weak common
// direction (K = a^2 y y^T + diag(r_i^2), the shape of the kernel SimpleNPKL
// learns on a1a: one class direction over many private ones with very
// unequal norms). Within a cluster c of m points the centre is (a y_c,
// r^2 / m), so the planted objective is sum_c R_c (1 - 1/m_c), R_c the sum
// of r_i^2 over c. k-means++ seeds on the high-norm points and its ten
// restarts end in a split off one point with a higher objective; the
// PCA-guided start finds the planted partition.
func TestKernelKMeansPCAStart(t *testing.T) {
	const n, a = 200, 0.3
	rng := rand.New(rand.NewPCG(3, 4))
	k := mat.NewSymDense(n, nil)
	y := make([]float64, n)
	truth := make([]int, n)
	var sum [2]float64
	var size [2]float64
	for i := range n {
		y[i] = 1
		if i%4 == 0 {
			y[i], truth[i] = -1, 1
		}
	}
	for i := range n {
		for j := i; j < n; j++ {
			v := a * a * y[i] * y[j]
			if i == j {
				r := 4 * rng.Float64()
				v += r * r
				sum[truth[i]] += r * r
				size[truth[i]]++
			}
			k.SetSym(i, j, v)
		}
	}
	planted := sum[0]*(1-1/size[0]) + sum[1]*(1-1/size[1])
	ctx := context.Background()
	opt := KMeansOptions{Seed: 1}
	old, err := cluster(ctx, &kernelSpace{k: k, s: mat.NewDense(n, 2, nil), t: make([]float64, 2), count: make([]int, 2)}, n, 2, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(old.Objective > planted+1) {
		t.Fatalf("k-means++ restarts alone reach objective %g, the planted partition %g: the case no longer tests the PCA start", old.Objective, planted)
	}
	c := kmRun(t, func() (*Clustering, error) { return KernelKMeans(ctx, k, 2, opt) })
	if acc := metrics.ClusteringAccuracy(truth, c.Labels); acc != 1 {
		t.Errorf("accuracy %g against the planted partition, want 1 (labels %v)", acc, c.Labels)
	}
	near(t, "objective", c.Objective, planted, 1e-9*planted)
}
