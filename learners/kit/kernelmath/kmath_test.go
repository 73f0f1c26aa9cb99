package kernelmath

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (tol %g)", what, got, want, tol)
	}
}

// three points on a line in 2-D: (1,0), (0,1), (1,1).
func threePoints() *mat.Dense { return mat.NewDense(3, 2, []float64{1, 0, 0, 1, 1, 1}) }

func TestBaseKernelsByHand(t *testing.T) {
	x := threePoints()
	lin := Linear(x)
	near(t, "linear(0,1)", lin.At(0, 1), 0, 0)
	near(t, "linear(0,2)", lin.At(0, 2), 1, 0)
	near(t, "linear(2,2)", lin.At(2, 2), 2, 0)
	poly := Polynomial(x, 2, 1)
	near(t, "poly(0,2)", poly.At(0, 2), 4, 1e-12)
	near(t, "poly(2,2)", poly.At(2, 2), 9, 1e-12)
	rbf := RBF(x, 2)
	near(t, "rbf(0,1)", rbf.At(0, 1), math.Exp(-1), 1e-12) // ||(1,-1)||^2 = 2
	near(t, "rbf(0,2)", rbf.At(0, 2), math.Exp(-0.5), 1e-12)
	near(t, "rbf(1,1)", rbf.At(1, 1), 1, 0)
	cos := Cosine(x)
	near(t, "cos(0,2)", cos.At(0, 2), 1/math.Sqrt2, 1e-12)
	near(t, "cos(0,0)", cos.At(0, 0), 1, 1e-12)
	hi := Intersection(mat.NewDense(2, 3, []float64{0.5, 0.3, 0.2, 0.1, 0.6, 0.3}))
	near(t, "intersection(0,1)", hi.At(0, 1), 0.1+0.3+0.2, 1e-12)
	near(t, "intersection(0,0)", hi.At(0, 0), 1, 1e-12)
}

func TestCosineZeroRowIsZeroNotNaN(t *testing.T) {
	c := Cosine(mat.NewDense(2, 2, []float64{0, 0, 1, 1}))
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			if math.IsNaN(c.At(i, j)) {
				t.Fatalf("NaN at (%d,%d)", i, j)
			}
		}
	}
	near(t, "cos(0,0) of a zero row", c.At(0, 0), 0, 0)
}

func TestCenterAndHSIC(t *testing.T) {
	k := Linear(threePoints())
	c := Center(k)
	for i := 0; i < 3; i++ {
		s := 0.0
		for j := 0; j < 3; j++ {
			s += c.At(i, j)
		}
		near(t, "row sum of HKH", s, 0, 1e-12)
	}
	// Centred points: mean (2/3, 2/3); (1/3,-2/3), (-2/3,1/3), (1/3,1/3).
	near(t, "Kc(0,0)", c.At(0, 0), 5.0/9, 1e-12)
	near(t, "Kc(0,1)", c.At(0, 1), -4.0/9, 1e-12)
	near(t, "Kc(1,2)", c.At(1, 2), -1.0/9, 1e-12)
	// HSIC(K, K) = ||HKH||_F^2 / (n-1)^2.
	fro := 0.0
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			fro += c.At(i, j) * c.At(i, j)
		}
	}
	near(t, "HSIC(K,K)", HSIC(k, k), fro/4, 1e-12)
	near(t, "alignment(K,K)", Alignment(k, k), 1, 1e-12)
	near(t, "alignment(K,2K)", CenteredAlignment(k, scaled(k, 2)), 1, 1e-12)
	near(t, "alignment(I, J)", Alignment(identity(3), mat.NewSymDense(3, []float64{0, 1, 1, 1, 0, 1, 1, 1, 0})), 0, 0)
}

func scaled(k *mat.SymDense, a float64) *mat.SymDense {
	out := mat.NewSymDense(k.SymmetricDim(), nil)
	out.ScaleSym(a, k)
	return out
}

func identity(n int) *mat.SymDense {
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		k.SetSym(i, i, 1)
	}
	return k
}

func TestProjectPSD(t *testing.T) {
	// A = R diag(3, -2) R^T with R a rotation by 30 degrees: A_+ = 3 r1 r1^T.
	c, s := math.Cos(math.Pi/6), math.Sin(math.Pi/6)
	a := mat.NewSymDense(2, []float64{3*c*c - 2*s*s, 3*c*s + 2*s*c, 3*c*s + 2*s*c, 3*s*s - 2*c*c})
	p, vals, err := ProjectPSD(a)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "lambda_min", vals[0], -2, 1e-12)
	near(t, "A+(0,0)", p.At(0, 0), 3*c*c, 1e-12)
	near(t, "A+(0,1)", p.At(0, 1), 3*c*s, 1e-12)
	near(t, "A+(1,1)", p.At(1, 1), 3*s*s, 1e-12)
	psd, err := IsPSD(p, 1e-10)
	if err != nil || !psd {
		t.Fatalf("projection not PSD: %v %v", psd, err)
	}
	if psd, _ := IsPSD(a, 1e-10); psd {
		t.Fatal("indefinite matrix reported PSD")
	}
}

func randomSym(n int, seed uint64) *mat.SymDense {
	r := rand.New(rand.NewPCG(seed, 1))
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a.SetSym(i, j, r.NormFloat64())
		}
	}
	return a
}

func TestTopKMatchesDense(t *testing.T) {
	a := randomSym(80, 7)
	all, _, err := Eigen(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, which := range []Which{Largest, Smallest} {
		vals, vecs, err := TopK(SymOperator(a), 6, which, LanczosOptions{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		for c, v := range vals {
			want := all[c]
			if which == Largest {
				want = all[len(all)-1-c]
			}
			near(t, "eigenvalue", v, want, 1e-8)
			// residual ||A v - lambda v||
			vec := mat.NewVecDense(80, mat.Col(nil, c, vecs))
			var av mat.VecDense
			av.MulVec(a, vec)
			av.AddScaledVec(&av, -v, vec)
			near(t, "residual", mat.Norm(&av, 2), 0, 1e-7)
			near(t, "norm", mat.Norm(vec, 2), 1, 1e-10)
		}
	}
}

func TestTopKBadK(t *testing.T) {
	if _, _, err := TopK(SymOperator(identity(3)), 4, Largest, LanczosOptions{}); err == nil {
		t.Fatal("k > n accepted")
	}
	if _, _, err := TopK(SymOperator(identity(3)), 0, Largest, LanczosOptions{}); err == nil {
		t.Fatal("k = 0 accepted")
	}
}

func TestPathLaplacianClosedForm(t *testing.T) {
	// Path graph on n vertices: eigenvalues 2 - 2 cos(pi k / n), k = 0..n-1.
	n := 40
	var pairs []Pair
	for i := 0; i+1 < n; i++ {
		pairs = append(pairs, Pair{i, i + 1})
	}
	g := NewGraph(n, pairs, func(Pair) float64 { return 1 })
	vals, vecs, err := g.SmallestLaplacianEigen(5, 1)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range vals {
		near(t, "path eigenvalue", v, 2-2*math.Cos(math.Pi*float64(k)/float64(n)), 1e-9)
	}
	// First eigenvector is constant.
	for i := 0; i < n; i++ {
		near(t, "null vector", math.Abs(vecs.At(i, 0)), 1/math.Sqrt(float64(n)), 1e-12)
	}
}

func TestLaplacianComponentsGiveRepeatedZero(t *testing.T) {
	// Two disjoint triangles plus an isolated vertex: eigenvalue 0 three times, then 3 (x4).
	pairs := []Pair{{0, 1}, {1, 2}, {0, 2}, {3, 4}, {4, 5}, {3, 5}}
	g := NewGraph(7, pairs, func(Pair) float64 { return 1 })
	if got := len(g.Components()); got != 3 {
		t.Fatalf("components = %d, want 3", got)
	}
	vals, _, err := g.SmallestLaplacianEigen(4, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0, 0, 0, 3} {
		near(t, "eigenvalue", vals[i], want, 1e-9)
	}
	dense := g.LaplacianDense()
	near(t, "L(0,0)", dense.At(0, 0), 2, 0)
	near(t, "L(0,1)", dense.At(0, 1), -1, 0)
	near(t, "L(6,6)", dense.At(6, 6), 0, 0)
}

func TestKNNPairs(t *testing.T) {
	// Points on a line at 0, 1, 3, 10: 1-NN of 0 is 1, of 1 is 0, of 3 is 1, of 10 is 3.
	x := mat.NewDense(4, 1, []float64{0, 1, 3, 10})
	d := SqDistances(x)
	got := KNNPairs(d, 1, false)
	want := []Pair{{0, 1}, {1, 2}, {2, 3}}
	if len(got) != len(want) {
		t.Fatalf("pairs = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pairs = %v, want %v", got, want)
		}
	}
	mutual := KNNPairs(d, 1, true)
	if len(mutual) != 1 || mutual[0] != (Pair{0, 1}) {
		t.Fatalf("mutual pairs = %v, want [{0 1}]", mutual)
	}
}

func TestPSDPartMatchesProjectPSD(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for _, shift := range []float64{3, -3, 0, 100, -100} {
		n := 40
		a := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				a.SetSym(i, j, r.NormFloat64())
			}
			a.SetSym(i, i, a.At(i, i)+shift)
		}
		got, err := PSDPart(a)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := ProjectPSD(a)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if d := math.Abs(got.At(i, j) - want.At(i, j)); d > 1e-9 {
					t.Fatalf("shift %g: (%d,%d) off by %g", shift, i, j, d)
				}
			}
		}
	}
}

// On what npk-fused projects, a clipped low-rank kernel (few negative
// eigenvalues, many at zero), PSDPart's update of the negative side agrees
// with the full eigendecomposition's projection to 1e-12 of the largest
// entry.
func TestPSDPartOfAClippedKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 1))
	n, p := 120, 30
	y := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			y.Set(i, j, r.NormFloat64())
		}
	}
	a := Clip(Center(Linear(y)))
	got, err := PSDPart(a)
	if err != nil {
		t.Fatal(err)
	}
	want, vals, err := ProjectPSD(a)
	if err != nil {
		t.Fatal(err)
	}
	neg := sort.Search(n, func(i int) bool { return vals[i] > 0 })
	if !(vals[0] < -1) || !(neg > 0 && neg < n/2) {
		t.Fatalf("smallest eigenvalue %g, %d not positive: want a clipped kernel far from PSD with the smaller side negative", vals[0], neg)
	}
	top := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			top = math.Max(top, math.Abs(want.At(i, j)))
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if d := math.Abs(got.At(i, j) - want.At(i, j)); d > 1e-12*top {
				t.Fatalf("(%d,%d) off by %g (largest entry %g)", i, j, d, top)
			}
		}
	}
}

// AddWeightedOuter adds Y diag(w) Y^T, which FromEigen (Dsyrk) forms
// directly: the two agree to rounding, zero weights included.
func TestAddWeightedOuterMatchesFromEigen(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 5))
	n, p := 50, 12
	y := mat.NewDense(n, p, nil)
	w := make([]float64, p)
	for c := range w {
		if c%4 != 0 {
			w[c] = r.Float64() * 10
		}
		for i := 0; i < n; i++ {
			y.Set(i, c, r.NormFloat64())
		}
	}
	base := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			base.SetSym(i, j, r.NormFloat64())
		}
	}
	got := mat.NewSymDense(n, nil)
	got.CopySym(base)
	AddWeightedOuter(got, y, w)
	want := FromEigen(w, y, math.Inf(-1))
	want.AddSym(want, base)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if d := math.Abs(got.At(i, j) - want.At(i, j)); d > 1e-12*math.Max(1, math.Abs(want.At(i, j))) {
				t.Fatalf("(%d,%d) = %v, want %v", i, j, got.At(i, j), want.At(i, j))
			}
		}
	}
}
