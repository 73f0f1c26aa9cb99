package alignf

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"gonum.org/v1/gonum/mat"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.15g, want %.15g (tol %g)", what, got, want, tol)
	}
}

// outer returns c v v' + offset 11' (the offset vanishes when centred).
func outer(c float64, v []float64, offset float64) *mat.SymDense {
	k := mat.NewSymDense(len(v), nil)
	for i := range v {
		for j := i; j < len(v); j++ {
			k.SetSym(i, j, c*v[i]*v[j]+offset)
		}
	}
	return k
}

func dense(ks []*mat.SymDense) []kernelmath.KernelMatrix {
	out := make([]kernelmath.KernelMatrix, len(ks))
	for i, k := range ks {
		out[i] = kernelmath.DenseKernel{K: k}
	}
	return out
}

func fit(t *testing.T, in *learners.Input) *learners.Output {
	t.Helper()
	l, _, err := learners.New(Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Fit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestContract(t *testing.T) {
	spec, ok := learners.Lookup(Name)
	if !ok {
		t.Fatal("alignf is not registered")
	}
	learnertest.Run(t, spec)
}

// Three mutually orthogonal centred rank-one kernels v_k v_k' (plus
// constants, which centring removes) and the target Y = y y' - 2 v3 v3',
// worked by hand. v1 = (1,-1,0,0), v2 = (0,0,1,-1), v3 = (1,1,-1,-1),
// y = (2,0,1,-3): M = diag(|v_k|^4) = diag(4, 4, 16); a_k = (v_k'y)^2 -
// 2 (v_k'v3)^2 = (4, 16, 16 - 32) = (4, 16, -16). M diagonal makes the QP
// separable: theta*_k = max(0, a_k / M_kk) = (1, 4, 0), normalised
// (1, 4, 0)/sqrt(17). ||Y||_F^2 = (y'y)^2 - 4 (y'v3)^2 + 4 |v3|^4 = 196 - 64
// + 64 = 196, so the alignment is a'theta*/sqrt(theta*'M theta* 196) =
// 68/sqrt(68 * 196) = sqrt(68)/14, and the kernels alone align 4/(2*14),
// 16/(2*14) and -16/(4*14).
func TestOrthogonalKernelsByHand(t *testing.T) {
	v1, v2, v3 := []float64{1, -1, 0, 0}, []float64{0, 0, 1, -1}, []float64{1, 1, -1, -1}
	y := []float64{2, 0, 1, -3}
	target := outer(1, y, 0)
	target.AddSym(target, outer(-2, v3, 0))
	in := &learners.Input{Kernels: []*mat.SymDense{outer(1, v1, 3), outer(1, v2, -1), outer(1, v3, 0.5)}, Target: target}
	out := fit(t, in)
	want := []float64{1 / math.Sqrt(17), 4 / math.Sqrt(17), 0}
	for k, w := range want {
		near(t, "weight", out.Weights[k], w, 1e-14)
	}
	if out.Weights[2] != 0 {
		t.Errorf("the anti-aligned kernel's weight is %g, want exactly 0", out.Weights[2])
	}
	near(t, "alignment (Stats.Objective)", out.Stats.Objective, math.Sqrt(68)/14, 1e-14)
	if !out.Stats.Converged {
		t.Error("not converged")
	}
	res, err := Solve(context.Background(), in.BaseKernels(), in.TargetKernel())
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []float64{4.0 / 28, 16.0 / 28, -16.0 / 56} {
		near(t, "alignment of one kernel", res.KernelAlignments[k], want, 1e-14)
	}
	near(t, "||Yc||^2", res.TargetNorm2, 196, 1e-12)
	// The output kernel is the combination of the kernels as given.
	wantK := mat.NewSymDense(4, nil)
	for k, km := range in.Kernels {
		var s mat.SymDense
		s.ScaleSym(out.Weights[k], km)
		wantK.AddSym(wantK, &s)
	}
	if !mat.EqualApprox(out.Kernel, wantK, 1e-13) {
		t.Errorf("Kernel = %v, want sum_k w_k K_k = %v", mat.Formatted(out.Kernel), mat.Formatted(wantK))
	}
}

// Two non-orthogonal kernels where the unconstrained solution has a
// negative weight. v1 = (1,-1,0,0), v2 = (1,0,-1,0), y = (2,-2,1,-1):
// M = [[4, 1], [1, 4]], a = ((v1'y)^2, (v2'y)^2) = (16, 1); M^-1 a =
// (63, -12)/15, so the QP's optimum is on the face theta_2 = 0:
// theta_1 = a_1/M_11 = 4, where the multiplier of theta_2 >= 0 is
// 2 (M theta)_2 - 2 a_2 = 2*4 - 2 = 6 > 0. Weights (1, 0); alignment
// 16*4 / sqrt(64 * 100) = 0.8, that of K_1 alone.
func TestClampedTwoKernelsByHand(t *testing.T) {
	v1, v2, y := []float64{1, -1, 0, 0}, []float64{1, 0, -1, 0}, []float64{2, -2, 1, -1}
	in := &learners.Input{Kernels: []*mat.SymDense{outer(1, v1, 0), outer(1, v2, 0)}, Target: outer(1, y, 0)}
	out := fit(t, in)
	if out.Weights[0] != 1 || out.Weights[1] != 0 {
		t.Errorf("weights = %v, want exactly (1, 0)", out.Weights)
	}
	near(t, "alignment", out.Stats.Objective, 0.8, 1e-14)
	res, err := Solve(context.Background(), in.BaseKernels(), in.TargetKernel())
	if err != nil {
		t.Fatal(err)
	}
	near(t, "M_12", res.M.At(0, 1), 1, 1e-14)
	near(t, "a_2", res.A[1], 1, 1e-14)
	near(t, "QP multiplier of theta_2 (gradient of 1/2 x'Mx - a'x)", res.M.At(1, 0)*4-res.A[1], 3, 1e-12)
	// A constant kernel is zero once centred: a zero row of M, a_3 = 0,
	// weight 0, alignment unchanged.
	in.Kernels = append(in.Kernels, outer(0, y, 7))
	out = fit(t, in)
	if out.Weights[0] != 1 || out.Weights[1] != 0 || out.Weights[2] != 0 {
		t.Errorf("with a constant kernel: weights = %v, want exactly (1, 0, 0)", out.Weights)
	}
	near(t, "alignment with a constant kernel", out.Stats.Objective, 0.8, 1e-14)
}

// randomProblem returns p kernels over n points (linear and RBF kernels of
// random features, some of pure noise) and a target mixing some of them
// with negative coefficients plus noise, so that several constraints are
// active at the optimum.
func randomProblem(r *rand.Rand, n, p int) ([]*mat.SymDense, *mat.SymDense) {
	ks := make([]*mat.SymDense, p)
	for k := range ks {
		x := mat.NewDense(n, 1+r.IntN(3), nil)
		for i := range x.RawMatrix().Data {
			x.RawMatrix().Data[i] = r.NormFloat64()
		}
		if k%2 == 0 {
			ks[k] = kernelmath.Linear(x)
		} else {
			ks[k] = kernelmath.RBF(x, 1+r.Float64())
		}
	}
	y := mat.NewSymDense(n, nil)
	for _, k := range ks {
		var s mat.SymDense
		s.ScaleSym(2*r.Float64()-0.7, k)
		y.AddSym(y, &s)
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			y.SetSym(i, j, y.At(i, j)+0.5*r.NormFloat64())
		}
	}
	return ks, y
}

// bruteForce solves min theta'M theta - 2 theta'a over theta >= 0 by
// enumerating supports S: theta_S = M_SS^-1 a_S must be >= 0 and the
// gradient 2(M theta - a) >= 0 off S (KKT, sufficient for a convex QP); of
// the KKT points (one unless M is singular) the lowest objective wins.
func bruteForce(t *testing.T, m *mat.SymDense, a []float64) []float64 {
	t.Helper()
	p := len(a)
	var best []float64
	bestObj := math.Inf(1)
	for mask := 1; mask < 1<<p; mask++ {
		var s []int
		for k := 0; k < p; k++ {
			if mask&(1<<k) != 0 {
				s = append(s, k)
			}
		}
		mss := mat.NewDense(len(s), len(s), nil)
		as := mat.NewVecDense(len(s), nil)
		for i, k := range s {
			for j, l := range s {
				mss.Set(i, j, m.At(k, l))
			}
			as.SetVec(i, a[k])
		}
		var ts mat.VecDense
		if err := ts.SolveVec(mss, as); err != nil {
			continue
		}
		theta := make([]float64, p)
		ok := true
		for i, k := range s {
			theta[k] = ts.AtVec(i)
			ok = ok && theta[k] >= 0
		}
		tv := mat.NewVecDense(p, theta)
		var g mat.VecDense
		g.MulVec(m, tv)
		scale := 0.0
		for k := range a {
			scale = math.Max(scale, math.Abs(a[k]))
		}
		for k := range a {
			if mask&(1<<k) == 0 && g.AtVec(k)-a[k] < -1e-9*scale {
				ok = false
			}
		}
		if !ok {
			continue
		}
		obj := mat.Inner(tv, m, tv) - 2*mat.Dot(tv, mat.NewVecDense(p, a))
		if obj < bestObj {
			best, bestObj = theta, obj
		}
	}
	if best == nil {
		t.Fatal("brute force found no KKT point")
	}
	return best
}

// M and a computed independently of the package (dense centring and
// Frobenius products), the optimum by enumeration of supports, and the
// alignment of the result by forming the combined kernel.
func TestAgreesWithBruteForceEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	clamped := 0
	for trial := 0; trial < 40; trial++ {
		n, p := 10+r.IntN(20), 2+r.IntN(5)
		ks, y := randomProblem(r, n, p)
		m := mat.NewSymDense(p, nil)
		a := make([]float64, p)
		yc := kernelmath.Center(y)
		for k := range ks {
			ck := kernelmath.Center(ks[k])
			for l := k; l < p; l++ {
				m.SetSym(k, l, kernelmath.Frobenius(ck, kernelmath.Center(ks[l])))
			}
			a[k] = kernelmath.Frobenius(ck, yc)
		}
		positive := false
		for _, v := range a {
			positive = positive || v > 0
		}
		if !positive {
			continue
		}
		want := bruteForce(t, m, a)
		norm := 0.0
		for _, v := range want {
			norm += v * v
			if v == 0 {
				clamped++
			}
		}
		norm = math.Sqrt(norm)
		out := fit(t, &learners.Input{Kernels: ks, Target: y})
		for k := range want {
			near(t, "weight", out.Weights[k], want[k]/norm, 1e-9)
		}
		combined := mat.NewSymDense(n, nil)
		for k, km := range ks {
			var s mat.SymDense
			s.ScaleSym(out.Weights[k], km)
			combined.AddSym(combined, &s)
		}
		near(t, "alignment", out.Stats.Objective, kernelmath.CenteredAlignment(combined, y), 1e-12)
	}
	if clamped < 10 {
		t.Fatalf("only %d weights were clamped to 0 over the trials: the test does not exercise the constraints", clamped)
	}
}

// The alignment reached is at least that of every single kernel and of the
// uniform combination (built by hand: the learner "uniform" is another
// package's), each computed from dense matrices.
func TestNeverBelowBestSingleKernelOrUniform(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for trial := 0; trial < 30; trial++ {
		n, p := 12+r.IntN(15), 2+r.IntN(4)
		ks, y := randomProblem(r, n, p)
		res, err := Solve(context.Background(), dense(ks), kernelmath.DenseKernel{K: y})
		if errors.Is(err, learners.ErrInput) {
			continue // no positively aligned kernel in this draw
		}
		if err != nil {
			t.Fatal(err)
		}
		uniform := mat.NewSymDense(n, nil)
		for k, km := range ks {
			single := kernelmath.CenteredAlignment(km, y)
			near(t, "KernelAlignments", res.KernelAlignments[k], single, 1e-12)
			if res.Alignment < single-1e-12 {
				t.Errorf("trial %d: alignment %.15g below kernel %d's %.15g", trial, res.Alignment, k, single)
			}
			uniform.AddSym(uniform, km)
		}
		u := kernelmath.CenteredAlignment(uniform, y)
		if res.Alignment < u-1e-12 {
			t.Errorf("trial %d: alignment %.15g below the uniform combination's %.15g", trial, res.Alignment, u)
		}
		w := make([]float64, p)
		for k := range w {
			w[k] = 1
		}
		near(t, "Alignment(M, a, |Y|^2, uniform)", Alignment(res.M, res.A, res.TargetNorm2, w), u, 1e-12)
	}
}

// sparseGraph returns a random 0/1 symmetric matrix with a unit diagonal
// as a SparseSym, and the same densely.
func sparseGraph(t *testing.T, r *rand.Rand, n int, density float64) (*kernelmath.SparseSym, *mat.SymDense) {
	t.Helper()
	var entries []kernelmath.Triplet
	for i := 0; i < n; i++ {
		entries = append(entries, kernelmath.Triplet{I: i, J: i, V: 1})
		for j := i + 1; j < n; j++ {
			if r.Float64() < density {
				entries = append(entries, kernelmath.Triplet{I: i, J: j, V: 1})
			}
		}
	}
	s, err := kernelmath.NewSparseSym(n, entries)
	if err != nil {
		t.Fatal(err)
	}
	return s, s.Dense()
}

// Implicit kernels (sparse, factored Gram, low rank) give what their dense
// forms give; above DenseOutputMax points the implicit fit forms no kernel.
func TestImplicitEqualsDense(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 9))
	for _, n := range []int{60, DenseOutputMax + 1} {
		s1, d1 := sparseGraph(t, r, n, 0.05)
		var trip []kernelmath.Triplet
		for i := 0; i < n; i++ {
			trip = append(trip, kernelmath.Triplet{I: i, J: r.IntN(7), V: 1})
		}
		g, err := kernelmath.NewGram(n, 7, trip)
		if err != nil {
			t.Fatal(err)
		}
		z := mat.NewDense(n, 3, nil)
		for i := range z.RawMatrix().Data {
			z.RawMatrix().Data[i] = r.NormFloat64()
		}
		lr := kernelmath.NewLowRank(z)
		ys, yd := sparseGraph(t, r, n, 0.08)
		// The target shares structure with s1 so that the weights are not trivial.
		ys = ys.Add(s1, 0.5)
		yd.AddSym(yd, func() *mat.SymDense { var h mat.SymDense; h.ScaleSym(0.5, d1); return &h }())
		implicit := &learners.Input{Matrices: []kernelmath.KernelMatrix{s1, g, lr}, TargetMatrix: ys}
		denseIn := &learners.Input{Kernels: []*mat.SymDense{d1, kernelmath.KernelDense(g), kernelmath.KernelDense(lr)}, Target: yd}
		oi, od := fit(t, implicit), fit(t, denseIn)
		for k := range od.Weights {
			near(t, "weight", oi.Weights[k], od.Weights[k], 1e-10)
		}
		near(t, "alignment", oi.Stats.Objective, od.Stats.Objective, 1e-10)
		if od.Kernel == nil {
			t.Errorf("n = %d: no kernel from dense inputs", n)
		}
		if (oi.Kernel == nil) != (n > DenseOutputMax) {
			t.Errorf("n = %d: implicit output kernel present = %v, want %v", n, oi.Kernel != nil, n <= DenseOutputMax)
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	v1, v2, y := []float64{1, -1, 0, 0}, []float64{0, 0, 1, -1}, []float64{1, -1, 1, -1}
	k1, k2 := kernelmath.DenseKernel{K: outer(1, v1, 0)}, kernelmath.DenseKernel{K: outer(1, v2, 0)}
	anti := outer(-1, y, 0) // a_k = -(v_k'y)^2 < 0 for both
	cases := map[string]struct {
		ks     []kernelmath.KernelMatrix
		target kernelmath.KernelMatrix
	}{
		"no kernels":          {nil, kernelmath.DenseKernel{K: anti}},
		"no target":           {[]kernelmath.KernelMatrix{k1}, nil},
		"anti-aligned target": {[]kernelmath.KernelMatrix{k1, k2}, kernelmath.DenseKernel{K: anti}},
		"constant target":     {[]kernelmath.KernelMatrix{k1, k2}, kernelmath.DenseKernel{K: outer(0, y, 2)}},
		"size mismatch":       {[]kernelmath.KernelMatrix{k1, kernelmath.DenseKernel{K: outer(1, []float64{1, -1}, 0)}}, kernelmath.DenseKernel{K: outer(1, y, 0)}},
		"NaN entry": {[]kernelmath.KernelMatrix{k1, kernelmath.DenseKernel{K: func() *mat.SymDense {
			k := outer(1, v2, 0)
			k.SetSym(0, 2, math.NaN())
			return k
		}()}}, kernelmath.DenseKernel{K: outer(1, y, 0)}},
	}
	for name, c := range cases {
		if _, err := Solve(ctx, c.ks, c.target); !errors.Is(err, learners.ErrInput) {
			t.Errorf("%s: got %v, want an error wrapping learners.ErrInput", name, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Solve(cctx, []kernelmath.KernelMatrix{k1}, kernelmath.DenseKernel{K: outer(1, y, 0)}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}
