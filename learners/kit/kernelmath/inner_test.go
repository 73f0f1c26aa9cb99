package kernelmath

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// X = [1 0; 1 1; 0 1] and the path 0-1-2: X X' = [1 1 0; 1 2 1; 0 1 1],
// <XX', S> = 2 (1 + 1) = 4, ||XX'||^2 = ||X'X||^2 = ||[2 1; 1 2]||^2 = 10,
// ||S||^2 = 4; centred, with row sums (2, 4, 2) and (1, 2, 1):
// 4 - (2/3) 12 + 8 * 4 / 9 = -4/9.
func TestFrobeniusInnerProductsByHand(t *testing.T) {
	g, err := NewGram(3, 2, []Triplet{{0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {2, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSparseSym(3, []Triplet{{0, 1, 1}, {1, 2, 1}})
	if err != nil {
		t.Fatal(err)
	}
	ip, err := FrobeniusInnerProducts(context.Background(), []KernelMatrix{g, s}, false, InnerOptions{FactorsFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ip.Method != MethodFactors || ip.StdErr != nil {
		t.Errorf("method %q, stderr %v: want exact factors", ip.Method, ip.StdErr)
	}
	if sw, _ := FrobeniusInnerProducts(context.Background(), []KernelMatrix{g, s}, false, InnerOptions{}); sw.Method != MethodRows {
		t.Errorf("3 points, below DefaultFactorsFrom: method %q, want %q", sw.Method, MethodRows)
	}
	for _, c := range []struct {
		a, b int
		want float64
	}{{0, 0, 10}, {0, 1, 4}, {1, 1, 4}} {
		if got := ip.G.At(c.a, c.b); got != c.want {
			t.Errorf("<K%d, K%d> = %g, want %g", c.a, c.b, got, c.want)
		}
	}
	ip, err = FrobeniusInnerProducts(context.Background(), []KernelMatrix{g, s}, true, InnerOptions{FactorsFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := ip.G.At(0, 1); math.Abs(got+4.0/9) > 1e-15 {
		t.Errorf("centred <K0, K1> = %.17g, want -4/9", got)
	}
}

// Every factored form and scaling, against the dense inner products.
func TestFrobeniusInnerProductsFactorsMatchDense(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	n := 75
	g, gd := randomGram(n, 20, 0.2, r)
	h, hd := randomGram(n, 31, 0.1, r)
	s, sd := randomSparse(n, 0.1, r)
	z := mat.NewDense(n, 6, nil)
	y := mat.NewDense(n, 4, nil)
	for i := 0; i < n; i++ {
		for c := 0; c < 6; c++ {
			z.Set(i, c, r.NormFloat64())
		}
		for c := 0; c < 4; c++ {
			y.Set(i, c, r.NormFloat64())
		}
	}
	c := make([]float64, n)
	for i := range c {
		c[i] = 0.37
	}
	constG, err := RowScaled(h, c) // the default mode's constant scaling
	if err != nil {
		t.Fatal(err)
	}
	ks := []KernelMatrix{g, constG, s, NewLowRank(z), CosineScaled(NewLowRank(y)), CosineScaled(g), CosineScaled(s)}
	ds := []*mat.SymDense{gd, scaled(hd, 0.37), sd, Linear(z), NormalizeCosine(Linear(y)), NormalizeCosine(gd), NormalizeCosine(sd)}
	for k, km := range ks {
		if _, ok := factorOf(km); !ok {
			t.Fatalf("kernel %d (%T) has no factored form", k, km)
		}
	}
	for _, centred := range []bool{false, true} {
		ip, err := FrobeniusInnerProducts(context.Background(), ks, centred, InnerOptions{FactorsFrom: 1})
		if err != nil {
			t.Fatal(err)
		}
		if ip.Method != MethodFactors {
			t.Fatalf("method %q, want %q", ip.Method, MethodFactors)
		}
		for a := range ds {
			for b := range ds {
				want := Frobenius(ds[a], ds[b])
				if centred {
					want = Frobenius(Center(ds[a]), Center(ds[b]))
				}
				if math.Abs(ip.G.At(a, b)-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Errorf("centred=%v <K%d,K%d> = %.12g, want %.12g", centred, a, b, ip.G.At(a, b), want)
				}
			}
		}
	}
	prev := runtime.GOMAXPROCS(1)
	one, _ := FrobeniusInnerProducts(context.Background(), ks, true, InnerOptions{FactorsFrom: 1})
	runtime.GOMAXPROCS(4)
	four, _ := FrobeniusInnerProducts(context.Background(), ks, true, InnerOptions{FactorsFrom: 1})
	runtime.GOMAXPROCS(prev)
	if !mat.Equal(one.G, four.G) {
		t.Error("inner products depend on GOMAXPROCS")
	}
}

// A kernel without a factored form: swept up to SweepMax (exact), above it
// its pairs are estimated from sampled rows, within a few standard errors
// of the exact value, while the factored pairs stay exact.
func TestFrobeniusInnerProductsUnfactored(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	n := 400
	g, gd := randomGram(n, 40, 0.1, r)
	dense := Linear(mat.NewDense(n, 3, randomVector(3*n, r)))
	shifted, err := RowScaled(g, constant(n, 1))
	if err != nil {
		t.Fatal(err)
	}
	ks := []KernelMatrix{g, DenseKernel{dense}, shifted.Shifted(0.5)}
	want := []*mat.SymDense{gd, dense, mat.NewSymDense(n, nil)}
	want[2].AddSym(gd, eye(n, 0.5))
	if _, ok := factorOf(ks[2]); ok {
		t.Fatal("a shifted kernel has a factored form")
	}
	ctx := context.Background()
	exact, err := FrobeniusInnerProducts(ctx, ks, true, InnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if exact.Method != MethodRows {
		t.Fatalf("n = %d below SweepMax: method %q", n, exact.Method)
	}
	est, err := FrobeniusInnerProducts(ctx, ks, true, InnerOptions{SweepMax: 100, SampleRows: 200, Seed: 7, FactorsFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	if est.Method != MethodSampled || est.SampledRows != 200 {
		t.Fatalf("method %q from %d rows, want %q from 200", est.Method, est.SampledRows, MethodSampled)
	}
	for a := range ks {
		for b := range ks {
			w := Frobenius(Center(want[a]), Center(want[b]))
			if math.Abs(exact.G.At(a, b)-w) > 1e-9*math.Abs(w) {
				t.Errorf("swept <K%d,K%d> = %.12g, want %.12g", a, b, exact.G.At(a, b), w)
			}
			got, se := est.G.At(a, b), est.StdErr.At(a, b)
			switch {
			case a == 0 && b == 0:
				if se != 0 || math.Abs(got-w) > 1e-9*math.Abs(w) {
					t.Errorf("factored pair estimated: %g (stderr %g), want %g exactly", got, se, w)
				}
			case !(se > 0) || math.Abs(got-w) > 4*se:
				t.Errorf("sampled <K%d,K%d> = %g, stderr %g, exact %g", a, b, got, se, w)
			}
		}
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := FrobeniusInnerProducts(ctx2, ks[:1], false, InnerOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	if _, err := FrobeniusInnerProducts(ctx, []KernelMatrix{g, DenseKernel{randomSym(3, 1)}}, false, InnerOptions{}); err == nil {
		t.Error("mismatched sizes accepted")
	}
	if _, err := FrobeniusInnerProducts(ctx, nil, false, InnerOptions{}); err == nil {
		t.Error("no kernels accepted")
	}
}

func randomVector(n int, r *rand.Rand) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = r.NormFloat64()
	}
	return out
}

func constant(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func eye(n int, v float64) *mat.SymDense {
	out := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		out.SetSym(i, i, v)
	}
	return out
}
