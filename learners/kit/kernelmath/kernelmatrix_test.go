package kernelmath

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// checkKernelMatrix compares every method of k with the dense matrix want.
func checkKernelMatrix(t *testing.T, name string, k KernelMatrix, want *mat.SymDense, tol float64) {
	t.Helper()
	n := want.SymmetricDim()
	if k.Dim() != n {
		t.Fatalf("%s: Dim = %d, want %d", name, k.Dim(), n)
	}
	row := make([]float64, n)
	for i := 0; i < n; i++ {
		k.Row(i, row)
		for j := 0; j < n; j++ {
			if math.Abs(row[j]-want.At(i, j)) > tol || math.Abs(k.At(i, j)-want.At(i, j)) > tol {
				t.Fatalf("%s: (%d,%d): Row %g, At %g, want %g", name, i, j, row[j], k.At(i, j), want.At(i, j))
			}
		}
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sin(float64(3*i + 1))
	}
	got := make([]float64, n)
	k.Apply(got, x)
	var wantAx mat.VecDense
	wantAx.MulVec(want, mat.NewVecDense(n, x))
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	var wantSums mat.VecDense
	wantSums.MulVec(want, mat.NewVecDense(n, ones))
	diag, sums := k.Diag(), k.RowSums()
	for i := 0; i < n; i++ {
		if math.Abs(got[i]-wantAx.AtVec(i)) > tol*float64(n) {
			t.Errorf("%s: Apply[%d] = %g, want %g", name, i, got[i], wantAx.AtVec(i))
		}
		if math.Abs(sums[i]-wantSums.AtVec(i)) > tol*float64(n) {
			t.Errorf("%s: RowSums[%d] = %g, want %g", name, i, sums[i], wantSums.AtVec(i))
		}
		if math.Abs(diag[i]-want.At(i, i)) > tol {
			t.Errorf("%s: Diag[%d] = %g, want %g", name, i, diag[i], want.At(i, i))
		}
	}
}

func TestGramByHand(t *testing.T) {
	// X = [1 0 1; 0 2 0; 1 1 0], (1,1) given as 1.5 + 0.5.
	g, err := NewGram(3, 3, []Triplet{{0, 0, 1}, {0, 2, 1}, {1, 1, 1.5}, {1, 1, 0.5}, {2, 0, 1}, {2, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewSymDense(3, []float64{
		2, 0, 1,
		0, 4, 2,
		1, 2, 2,
	})
	checkKernelMatrix(t, "Gram", g, want, 1e-15)
	checkKernelMatrix(t, "Gram.Sparse", g.Sparse(), want, 1e-15)
	if g.FactorNNZ() != 5 || g.Sparse().NNZ() != 7 {
		t.Errorf("FactorNNZ = %d, Sparse().NNZ = %d, want 5 and 7", g.FactorNNZ(), g.Sparse().NNZ())
	}
	if _, err := NewGram(3, 2, []Triplet{{0, 2, 1}}); err == nil {
		t.Error("column out of range accepted")
	}
}

// randomGram returns a random sparse Gram kernel and its dense form.
func randomGram(n, m int, density float64, r *rand.Rand) (*Gram, *mat.SymDense) {
	x := mat.NewDense(n, m, nil)
	var e []Triplet
	for i := 0; i < n; i++ {
		for k := 0; k < m; k++ {
			if r.Float64() < density {
				v := r.Float64()
				x.Set(i, k, v)
				e = append(e, Triplet{i, k, v})
			}
		}
	}
	g, err := NewGram(n, m, e)
	if err != nil {
		panic(err)
	}
	return g, Linear(x)
}

func TestKernelTypesMatchDense(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	g, gd := randomGram(17, 9, 0.3, r)
	checkKernelMatrix(t, "random Gram", g, gd, 1e-12)
	checkKernelMatrix(t, "random Gram.Sparse", g.Sparse(), gd, 1e-12)
	s, sd := randomSparse(17, 0.25, r)
	checkKernelMatrix(t, "SparseSym", s, sd, 1e-12)
	dense := randomSym(17, 5)
	checkKernelMatrix(t, "DenseKernel", DenseKernel{dense}, dense, 1e-12)
	checkKernelMatrix(t, "KernelDense", DenseKernel{KernelDense(g)}, gd, 1e-12)

	z := mat.NewDense(17, 4, nil)
	for i := 0; i < 17; i++ {
		for c := 0; c < 4; c++ {
			z.Set(i, c, r.NormFloat64())
		}
	}
	checkKernelMatrix(t, "LowRank", NewLowRank(z), Linear(z), 1e-12)

	// Cosine: K_ij / sqrt(K_ii K_jj), a zero row stays zero.
	zero, _ := NewGram(3, 2, []Triplet{{0, 0, 3}, {0, 1, 4}, {2, 0, 1}})
	checkKernelMatrix(t, "CosineScaled", CosineScaled(zero), mat.NewSymDense(3, []float64{
		1, 0, 0.6,
		0, 0, 0,
		0.6, 0, 1,
	}), 1e-15)
	checkKernelMatrix(t, "CosineScaled random", CosineScaled(g), NormalizeCosine(gd), 1e-12)

	// Row scaling: (D K + K D)/2 + 0.5 I.
	d := []float64{1, 2, 3}
	rs, err := RowScaled(DenseKernel{mat.NewSymDense(3, []float64{1, 2, 3, 2, 4, 5, 3, 5, 6})}, d)
	if err != nil {
		t.Fatal(err)
	}
	checkKernelMatrix(t, "RowScaled", rs.Shifted(0.5), mat.NewSymDense(3, []float64{
		1 + 0.5, 2 * 1.5, 3 * 2,
		2 * 1.5, 8 + 0.5, 5 * 2.5,
		3 * 2, 5 * 2.5, 18 + 0.5,
	}), 1e-15)
	if _, err := RowScaled(g, d); err == nil {
		t.Error("RowScaled accepted 3 scales for a 17 x 17 kernel")
	}

	sum, err := NewKernelSum([]float64{0.5, -2}, []KernelMatrix{g, s})
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewSymDense(17, nil)
	want.AddSym(scaled(gd, 0.5), scaled(sd, -2))
	checkKernelMatrix(t, "KernelSum", sum, want, 1e-12)
	if _, err := NewKernelSum([]float64{1}, []KernelMatrix{g, s}); err == nil {
		t.Error("KernelSum accepted 1 weight for 2 kernels")
	}
}

func TestKernelInnerProducts(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	n := 75 // three sweep chunks, the last one partial
	g, gd := randomGram(n, 20, 0.2, r)
	s, sd := randomSparse(n, 0.1, r)
	dense := randomSym(n, 13)
	ks := []KernelMatrix{g, s, DenseKernel{dense}, CosineScaled(g)}
	ds := []*mat.SymDense{gd, sd, dense, NormalizeCosine(gd)}
	for _, centred := range []bool{false, true} {
		got, err := KernelInnerProducts(context.Background(), ks, centred)
		if err != nil {
			t.Fatal(err)
		}
		for a := range ds {
			for b := range ds {
				want := Frobenius(ds[a], ds[b])
				if centred {
					want = Frobenius(Center(ds[a]), Center(ds[b]))
				}
				if math.Abs(got.At(a, b)-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Errorf("centred=%v <K%d,K%d> = %.12g, want %.12g", centred, a, b, got.At(a, b), want)
				}
			}
		}
	}
	// The same bits whatever the number of workers.
	prev := runtime.GOMAXPROCS(1)
	one, _ := KernelInnerProducts(context.Background(), ks, true)
	runtime.GOMAXPROCS(4)
	four, _ := KernelInnerProducts(context.Background(), ks, true)
	runtime.GOMAXPROCS(prev)
	if !mat.Equal(one, four) {
		t.Error("inner products depend on GOMAXPROCS")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := KernelInnerProducts(ctx, ks, false); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	if _, err := KernelInnerProducts(context.Background(), []KernelMatrix{g, DenseKernel{randomSym(3, 1)}}, false); err == nil {
		t.Error("mismatched sizes accepted")
	}
}

func TestKernelRowMax(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	s, sd := randomSparse(40, 0.2, r)
	got, err := KernelRowMax(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		near(t, "row max", got[i], floats.Max(mat.Row(nil, i, sd)), 0)
	}
}

func TestRegLaplacianClosedForm(t *testing.T) {
	// One edge 0-1 and an isolated vertex 2, gamma = 1: N = [0 1; 1 0] on the
	// edge, M = 2I - N, M^-1 = [2 1; 1 2]/3; the isolated vertex keeps e_2.
	adj, _ := NewSparseSym(3, []Triplet{{0, 1, 1}})
	rl, err := NewRegLaplacian(adj, 1, 1e-12)
	if err != nil {
		t.Fatal(err)
	}
	checkKernelMatrix(t, "RegLaplacian", rl, mat.NewSymDense(3, []float64{
		2.0 / 3, 1.0 / 3, 0,
		1.0 / 3, 2.0 / 3, 0,
		0, 0, 1,
	}), 1e-12)
	for _, c := range []struct {
		gamma, tol float64
		e          []Triplet
	}{{0, 1e-8, nil}, {1, 0, nil}, {1, 1e-8, []Triplet{{1, 1, 1}}}, {1, 1e-8, []Triplet{{0, 1, -1}}}} {
		a, _ := NewSparseSym(3, c.e)
		if _, err := NewRegLaplacian(a, c.gamma, c.tol); err == nil {
			t.Errorf("gamma %v tol %v entries %v accepted", c.gamma, c.tol, c.e)
		}
	}
}

func TestRegLaplacianMatchesDenseInverse(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n, gamma = 30, 2.5
	var e []Triplet
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if r.Float64() < 0.15 {
				e = append(e, Triplet{i, j, 0.5 + r.Float64()})
			}
		}
	}
	adj, _ := NewSparseSym(n, e)
	deg := adj.RowSums()
	m := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		if deg[i] == 0 {
			m.SetSym(i, i, 1)
			continue
		}
		m.SetSym(i, i, 1+gamma)
		for j := i + 1; j < n; j++ {
			if w := adj.At(i, j); w != 0 {
				m.SetSym(i, j, -gamma*w/math.Sqrt(deg[i]*deg[j]))
			}
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(m); err != nil {
		t.Fatal(err)
	}
	want := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			want.SetSym(i, j, inv.At(i, j))
		}
	}
	rl, err := NewRegLaplacian(adj, gamma, 1e-12)
	if err != nil {
		t.Fatal(err)
	}
	checkKernelMatrix(t, "RegLaplacian random", rl, want, 1e-10)
	vals, _, err := Eigen(want)
	if err != nil {
		t.Fatal(err)
	}
	if vals[0] < 1/(1+2*gamma)-1e-12 || vals[n-1] > 1+1e-12 {
		t.Errorf("spectrum [%g, %g] outside [1/(1+2 gamma), 1]", vals[0], vals[n-1])
	}
}
