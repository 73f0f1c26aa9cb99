package pfskl

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// golden is spec A.13's 8 points; point 0 is +1, point 7 is -1.
func golden(t *testing.T, p int) (*Spectrum, []int, *mat.Dense) {
	t.Helper()
	x := mat.NewDense(8, 2, []float64{0, 0, 0.4, 0.1, 0.7, 0.5, 1.0, 0.6, 1.5, 1.0, 1.9, 1.2, 2.1, 1.7, 2.6, 1.9})
	sp, err := NewSpectrum(context.Background(), x, GraphParams{K: 2, P: p, Eps: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	return sp, []int{0, 7}, mat.NewDense(2, 1, []float64{1, -1})
}

func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol {
			t.Fatalf("%s[%d] = %.12g, want %.12g (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

func TestGoldenGraph(t *testing.T) {
	sp, lab, y := golden(t, 1)
	if sp.Edges != 9 || len(sp.Components) != 1 {
		t.Fatalf("%d edges, %d components; want 9 and 1", sp.Edges, len(sp.Components))
	}
	if math.Abs(sp.Sigma2-0.381111111111) > 1e-11 {
		t.Fatalf("sigma_g^2 = %.12g, want 0.381111111111", sp.Sigma2)
	}
	near(t, "eigenvalues", sp.Gamma, []float64{0, 0.0905221554, 0.4944152148, 0.9024751006, 1.4156792493, 1.5815892878, 1.6727974125, 1.8425215797}, 1e-9)
	a := sp.TargetSpectrum(lab, y)
	near(t, "A_ii", a, []float64{0.0009723415, 0.5789600056, 0.0000201117, 0.4463358746, 0.0086856432, 0.9377270494, 0.0054191113, 0.0218798627}, 1e-9)
	sum := 0.0
	for _, v := range a {
		sum += v
	}
	if math.Abs(sum-2) > 1e-12 {
		t.Fatalf("sum A_ii = %v, want n_l = 2", sum)
	}
	k := sp.alignment(a, 1, 4)
	near(t, "sums", []float64{k.xbar, k.ybar, k.zhat, k.uhat, k.scale}, []float64{1.791672069, 489.9230026, 25.05648259, 2, 0.03826886317}, 2e-6)
	if math.Abs(k.mu-682.8241579) > 1e-5 {
		t.Fatalf("mu* = %.10g, want 682.8241579", k.mu)
	}
	// Spec A.6 caveat 2: mu* is a stationary point, here a local minimum of the alignment.
	if math.Abs(k.kta+0.3703) > 1e-4 {
		t.Fatalf("alignment at s* = %.5f, want -0.3703", k.kta)
	}
}

func TestGoldenDecisionValues(t *testing.T) {
	cases := []struct {
		name  string
		p     int
		kta   bool
		c, mu float64
		want  []float64
	}{
		{"SKL_KTA p=1", 1, true, 1, 1, []float64{0.4014251541, 0.3347960837, 0.1737294838, -0.2366044487, -0.4531679855, -0.5596699562}},
		{"SKL_KTA p=2", 2, true, 1, 1, []float64{0.8609595465, 0.7388170906, 0.2914674137, -0.3130048778, -0.7908731551, -0.9426692863}},
		{"SKL C=1 mu=1", 1, false, 1, 1, []float64{0.2450428925, 0.2294173578, 0.1097945613, -0.0355430504, -0.1476984710, -0.1778803825}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp, lab, y := golden(t, tc.p)
			res, err := sp.Fit(lab, y, tc.kta, tc.c, tc.mu)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "f", mat.Col(nil, 0, res.F), tc.want, 1e-8)
			if !tc.kta {
				near(t, "lambda*", res.Lambda, []float64{21.04928, 0.78825498, 0, 0, 0, 0, 0, 0}, 1e-5)
			}
		})
	}
}

// TestParameterFree is Proposition 4 (spec A.16 item 2): the faithful
// SKL_KTA decision values are the same for every C, mu*(C) = mu*(1) C^2,
// and they equal the simplified K~_ul K~_ll^-1 y_l.
func TestParameterFree(t *testing.T) {
	sp, lab, y := golden(t, 1)
	simple := simplified(t, sp, lab, y)
	for _, c := range []float64{1e-3, 0.1, 1, 10, 1e3} {
		res, err := sp.Fit(lab, y, true, c, 1)
		if err != nil {
			t.Fatal(err)
		}
		f := mat.Col(nil, 0, res.F)
		for i := range f {
			if rel := math.Abs(f[i]-simple[i]) / math.Abs(simple[i]); rel > 1e-10 {
				t.Fatalf("C = %g: f[%d] = %.15g, simplified %.15g (relative %.2g)", c, i, f[i], simple[i], rel)
			}
		}
		if rel := math.Abs(res.Mu-682.8241579*c*c) / (682.8241579 * c * c); rel > 1e-8 {
			t.Fatalf("C = %g: mu* = %g, want 682.8241579 C^2", c, res.Mu)
		}
	}
}

// simplified is f_u = K~_ul K~_ll^-1 y_l with K~ = U diag(w) U', by a
// separate route: the full K~ formed and sliced, solved by LU.
func simplified(t *testing.T, sp *Spectrum, lab []int, y *mat.Dense) []float64 {
	a := sp.TargetSpectrum(lab, y)
	w := make([]float64, len(a))
	for i := range a {
		w[i] = math.Sqrt(a[i] / (2 * sp.B[i]))
	}
	k := sp.Kernel(w)
	unl := []int{1, 2, 3, 4, 5, 6}
	kll := mat.NewDense(2, 2, nil)
	for r, i := range lab {
		for c, j := range lab {
			kll.Set(r, c, k.At(i, j))
		}
	}
	var alpha mat.Dense
	if err := alpha.Solve(kll, y); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(unl))
	for r, i := range unl {
		for c, j := range lab {
			out[r] += k.At(i, j) * alpha.At(c, 0)
		}
	}
	return out
}

// TestMuStationary checks spec A.6 caveat 4: s* = mu*^-1/2 zeroes the
// derivative of the unclipped alignment in s (a central difference).
func TestMuStationary(t *testing.T) {
	sp, lab, y := golden(t, 2)
	k := sp.alignment(sp.TargetSpectrum(lab, y), 3, 4)
	h := 1e-6 * math.Abs(k.sStar)
	d := (k.alignmentAt(k.sStar+h) - k.alignmentAt(k.sStar-h)) / (2 * h)
	scale := math.Abs(k.alignmentAt(k.sStar)) / math.Abs(k.sStar)
	if math.Abs(d) > 1e-6*scale {
		t.Fatalf("d alignment / ds at s* = %g (scale %g), want 0", d, scale)
	}
}

// TestClosedFormMinimises checks eq. (8): no feasible +-1e-4 move of any
// lambda_i lowers F(lambda) = 1/2 sum A_ii/(lambda_i + 1/C) + mu sum lambda_i b_i.
func TestClosedFormMinimises(t *testing.T) {
	sp, lab, y := golden(t, 1)
	a := sp.TargetSpectrum(lab, y)
	for _, cm := range [][2]float64{{1, 1}, {10, 0.01}, {0.1, 1e-4}} {
		c, mu := cm[0], cm[1]
		res, err := sp.Fit(lab, y, false, c, mu)
		if err != nil {
			t.Fatal(err)
		}
		obj := func(lam []float64) float64 {
			s := 0.0
			for i := range lam {
				s += 0.5*a[i]/(lam[i]+1/c) + mu*lam[i]*sp.B[i]
			}
			return s
		}
		base := obj(res.Lambda)
		if math.Abs(base-res.Objective) > 1e-12*math.Abs(base) {
			t.Fatalf("Objective %v, F(lambda*) %v", res.Objective, base)
		}
		for i := range res.Lambda {
			for _, step := range []float64{-1e-4, 1e-4} {
				lam := append([]float64(nil), res.Lambda...)
				if lam[i]+step < 0 {
					continue
				}
				lam[i] += step
				if v := obj(lam); v < base-1e-15 {
					t.Fatalf("C=%g mu=%g: moving lambda_%d by %g lowers F from %v to %v", c, mu, i, step, base, v)
				}
			}
		}
	}
}

// TestDisconnected: two far clusters give two components, eigenvalue 0
// twice with the exact null-space basis, and a kernel that does not
// connect them; predictions are still finite.
func TestDisconnected(t *testing.T) {
	x := mat.NewDense(8, 1, []float64{0, 0.1, 0.3, 0.4, 100, 100.2, 100.3, 100.5})
	sp, err := NewSpectrum(context.Background(), x, GraphParams{K: 2, P: 1, Eps: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Components) != 2 || sp.Gamma[0] != 0 || sp.Gamma[1] != 0 || !(sp.Gamma[2] > 1e-3) {
		t.Fatalf("components %v, eigenvalues %v", sp.Components, sp.Gamma)
	}
	// The null-space columns are D^1/2 1_comp / ||.||: zero off their component.
	for i := 4; i < 8; i++ {
		if sp.U.At(i, 0) != 0 {
			t.Fatalf("null vector 0 is %v at point %d of the other component", sp.U.At(i, 0), i)
		}
	}
	res, err := sp.Fit([]int{0, 3, 4, 7}, mat.NewDense(4, 1, []float64{1, 1, -1, -1}), true, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for r, i := range res.Unlabelled {
		want := 1.0
		if i >= 4 {
			want = -1
		}
		if f := res.F.At(r, 0); math.IsNaN(f) || f*want <= 0 {
			t.Fatalf("point %d: f = %v, want the sign of %v", i, f, want)
		}
	}
	k := sp.Kernel(res.Lambda)
	if v := k.At(0, 5); math.Abs(v) > 1e-12 {
		t.Fatalf("the kernel links the two components: K[0,5] = %v", v)
	}
}

func TestMultiClassOneHot(t *testing.T) {
	// Three 1-D clusters (three components at k = 2), one labelled point each.
	x := mat.NewDense(9, 1, []float64{0, 0.2, 0.4, 5, 5.2, 5.4, 10, 10.2, 10.4})
	labels := []int{0, -1, -1, 1, -1, -1, -1, -1, 2}
	lab, y, err := Targets(labels)
	if err != nil {
		t.Fatal(err)
	}
	if _, c := y.Dims(); c != 3 {
		t.Fatalf("%d target columns for 3 classes", c)
	}
	sp, err := NewSpectrum(context.Background(), x, GraphParams{K: 2, P: 1, Eps: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	a := sp.TargetSpectrum(lab, y)
	sum := 0.0
	for _, v := range a {
		sum += v
	}
	if math.Abs(sum-3) > 1e-12 {
		t.Fatalf("sum A_ii = %v, want n_l = 3 for one-hot labels", sum)
	}
	res, err := sp.Fit(lab, y, true, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{0, 0, 1, 1, 2, 2}
	got := res.Predict()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("predictions %v, want %v (unlabelled %v)", got, want, res.Unlabelled)
		}
	}
}

func TestBadInput(t *testing.T) {
	sp, _, y := golden(t, 1)
	for name, f := range map[string]func() error{
		"no unlabelled point": func() error { _, _, err := Targets([]int{0, 1, 0}); return err },
		"one class":           func() error { _, _, err := Targets([]int{0, -1, 0}); return err },
		"missing class":       func() error { _, _, err := Targets([]int{0, -1, 2}); return err },
		"repeated index":      func() error { _, err := sp.Fit([]int{0, 0}, y, true, 1, 1); return err },
		"target rows":         func() error { _, err := sp.Fit([]int{0}, y, true, 1, 1); return err },
		"C = 0":               func() error { _, err := sp.Fit([]int{0, 7}, y, false, 0, 1); return err },
		"one point": func() error {
			_, err := NewSpectrum(context.Background(), mat.NewDense(1, 1, nil), GraphParams{K: 1, P: 1, Eps: 1e-6})
			return err
		},
	} {
		if err := f(); !errors.Is(err, learners.ErrInput) {
			t.Errorf("%s: got %v, want ErrInput", name, err)
		}
	}
}

// TestLearnerKernel: the registered learner outputs Kbar = U diag(c w) U',
// PSD, and its labelled-block regression reproduces the golden values.
func TestLearnerKernel(t *testing.T) {
	l, _, err := learners.New(Name, []byte(`{"k": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(8, 2, []float64{0, 0, 0.4, 0.1, 0.7, 0.5, 1.0, 0.6, 1.5, 1.0, 1.9, 1.2, 2.1, 1.7, 2.6, 1.9})
	labels := []int{1, -1, -1, -1, -1, -1, -1, 0}
	out, err := l.Fit(context.Background(), &learners.Input{Features: x, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	k := out.Kernel
	det := k.At(0, 0)*k.At(7, 7) - k.At(0, 7)*k.At(7, 0)
	f1 := (k.At(1, 0)*(k.At(7, 7)-(-k.At(0, 7))) + k.At(1, 7)*(-k.At(0, 7)-k.At(0, 0))) / det
	if math.Abs(f1-0.4014251541) > 1e-8 {
		t.Fatalf("f(point 1) from the output kernel = %.10g, want 0.4014251541", f1)
	}
}
