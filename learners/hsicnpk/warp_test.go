package hsicnpk

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// 1 x 1 by hand: k~ = k - k (1 + l k)^-1 l k = k / (1 + l k); with k = 2,
// l = 0.5: 1. For an unseen pair with kappa_x = 3, kappa_y = 4, k_xy = 5:
// 5 - 4 * 0.5 * 3 / (1 + 0.5 * 2) = 2.
func TestWarpByHand(t *testing.T) {
	w, err := WarpLaplacian(mat.NewSymDense(1, []float64{2}), mat.NewSymDense(1, []float64{0.5}))
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Kernel([]float64{2}, []float64{2}, 2); math.Abs(got-1) > 1e-15 {
		t.Fatalf("k~(x1, x1) = %g, want 1", got)
	}
	if got := w.Kernel([]float64{3}, []float64{4}, 5); math.Abs(got-2) > 1e-15 {
		t.Fatalf("k~(x, y) = %g, want 2", got)
	}
}

// On the training points the warped kernel is (I + K_x L)^-1 K_x (push
// K_x (I + L K_x)^-1 L K_x = K_x L (I + K_x L)^-1 K_x through and collect),
// which is (K_x^-1 + L)^-1 when K_x is invertible (Sindhwani et al. 2005).
func TestWarpTrainingPointsClosedForm(t *testing.T) {
	x, kt := randomProblem(12, 3, 5, 8)
	out, err := newLearner(t, `{"k": 3}`).Fit(context.Background(), &learners.Input{Features: x, Target: kt})
	if err != nil {
		t.Fatal(err)
	}
	kx := kernelmath.RBF(x, 2) // invertible for distinct points
	l := AffinityLaplacian(out.Kernel)
	w, err := Warp(kx, out.Kernel)
	if err != nil {
		t.Fatal(err)
	}
	n := 12
	// (I + K_x L) X = K_x, solved independently.
	var a mat.Dense
	a.Mul(kx, l)
	for i := 0; i < n; i++ {
		a.Set(i, i, a.At(i, i)+1)
	}
	var want mat.Dense
	if err := want.Solve(&a, kx); err != nil {
		t.Fatal(err)
	}
	// (K_x^-1 + L)^-1.
	var kinv, sum, want2 mat.Dense
	if err := kinv.Inverse(kx); err != nil {
		t.Fatal(err)
	}
	sum.Add(&kinv, l)
	if err := want2.Inverse(&sum); err != nil {
		t.Fatal(err)
	}
	warped := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			got := w.Kernel(mat.Col(nil, i, kx), mat.Col(nil, j, kx), kx.At(i, j))
			if math.Abs(got-want.At(i, j)) > 1e-10 || math.Abs(got-want2.At(i, j)) > 1e-8 {
				t.Fatalf("k~(x%d, x%d) = %.12g, want %.12g = %.12g", i, j, got, want.At(i, j), want2.At(i, j))
			}
			if j >= i {
				warped.SetSym(i, j, got)
			}
		}
	}
	if ok, _ := kernelmath.IsPSD(warped, 1e-10); !ok {
		t.Fatal("warped kernel on the training points is not PSD")
	}
	// An unseen point: symmetric in its arguments and equal to the formula.
	r := rand.New(rand.NewPCG(2, 2))
	kapX, kapY := make([]float64, n), make([]float64, n)
	for i := range kapX {
		kapX[i], kapY[i] = r.Float64(), r.Float64()
	}
	if a, b := w.Kernel(kapX, kapY, 0.3), w.Kernel(kapY, kapX, 0.3); math.Abs(a-b) > 1e-12 {
		t.Fatalf("k~(x, y) = %g but k~(y, x) = %g", a, b)
	}
}

// The thesis' L = diag(K^ 1) - K^ is -K^ for the learned kernel, which is
// centred: the reason Warp uses the clipped affinity (see Warp).
func TestLiteralLaplacianOfLearnedKernelIsMinusK(t *testing.T) {
	x, kt := randomProblem(15, 3, 5, 9)
	out, err := newLearner(t, "").Fit(context.Background(), &learners.Input{Features: x, Target: kt})
	if err != nil {
		t.Fatal(err)
	}
	k := out.Kernel
	for i := 0; i < 15; i++ {
		s := 0.0
		for j := 0; j < 15; j++ {
			s += k.At(i, j)
		}
		if math.Abs(s) > 1e-9*math.Sqrt(kernelmath.Frobenius(k, k)) {
			t.Fatalf("row %d of the learned kernel sums to %g, not 0", i, s)
		}
	}
	l := AffinityLaplacian(k)
	if ok, _ := kernelmath.IsPSD(l, 1e-10); !ok {
		t.Fatal("the affinity Laplacian is not PSD")
	}
}

func TestWarpBadInput(t *testing.T) {
	k2 := mat.NewSymDense(2, []float64{1, 0, 0, 1})
	k3 := mat.NewSymDense(3, nil)
	nan := mat.NewSymDense(2, []float64{1, math.NaN(), math.NaN(), 1})
	for name, c := range map[string][2]*mat.SymDense{
		"nil":      {nil, k2},
		"mismatch": {k2, k3},
		"NaN":      {nan, k2},
	} {
		if _, err := WarpLaplacian(c[0], c[1]); !errors.Is(err, learners.ErrInput) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	// I + L K_x singular: L = -K_x^-1.
	if _, err := WarpLaplacian(k2, mat.NewSymDense(2, []float64{-1, 0, 0, -1})); !errors.Is(err, ErrSingularWarp) {
		t.Errorf("singular: err = %v", err)
	}
	w, _ := WarpLaplacian(k2, k2)
	defer func() {
		if recover() == nil {
			t.Error("wrong kappa length did not panic")
		}
	}()
	w.Kernel([]float64{1}, []float64{1, 2}, 0)
}
