package tlk

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// blobs is the thesis' synthetic recipe at a small scale: two labelled 2-D
// Gaussians at (0,0) and (10,10), sd 5 (spec 5.1.1's matching reading),
// and auxiliary points from clusters at (5,5) and (15,15).
func blobs(seed uint64, n, na int) (*mat.Dense, []int, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 9))
	x := mat.NewDense(n, 2, nil)
	y := make([]int, n)
	for i := range n {
		y[i] = i % 2
		for f := range 2 {
			x.Set(i, f, 10*float64(y[i])+5*rng.NormFloat64())
		}
	}
	aux := mat.NewDense(na, 2, nil)
	for i := range na {
		c := 5 + 10*float64(i%2)
		for f := range 2 {
			aux.Set(i, f, c+5*rng.NormFloat64())
		}
	}
	return x, y, aux
}

// TestTraceIdentities checks spec 2.3 against explicit feature maps: with
// the linear kernel phi(x) = x, phi*(x) = q(x) x, and for a random alpha,
// alpha'M alpha = sum_c n_c ||m_c - m||^2, alpha'N alpha =
// sum_c sum_{i in c} ||phi*_i - m_c||^2 and alpha'D alpha = MMD^2.
func TestTraceIdentities(t *testing.T) {
	x, y, aux := blobs(1, 9, 7)
	m := &Model{cfg: Config{Sigma: 20, Degree: 1}, gamma: 1, SV: rowsOf(x, []int{0, 3, 4})}
	m.forms(x, y, aux)
	rng := rand.New(rand.NewPCG(2, 2))
	m.Alpha = make([]float64, 4)
	for i := range m.Alpha {
		m.Alpha[i] = rng.NormFloat64()
	}
	mapped := func(z *mat.Dense) [][]float64 {
		q := m.Q(z)
		r, _ := z.Dims()
		out := make([][]float64, r)
		for i := range r {
			out[i] = []float64{q[i] * z.At(i, 0), q[i] * z.At(i, 1)}
		}
		return out
	}
	meanOf := func(ps [][]float64) []float64 {
		c := make([]float64, 2)
		for _, p := range ps {
			floats.Add(c, p)
		}
		floats.Scale(1/float64(len(ps)), c)
		return c
	}
	px, pa := mapped(x), mapped(aux)
	byClass := [][][]float64{nil, nil}
	for i, c := range y {
		byClass[c] = append(byClass[c], px[i])
	}
	all := meanOf(px)
	sb, sw := 0.0, 0.0
	for _, ps := range byClass {
		mc := meanOf(ps)
		sb += float64(len(ps)) * floats.Distance(mc, all, 2) * floats.Distance(mc, all, 2)
		for _, p := range ps {
			sw += floats.Distance(p, mc, 2) * floats.Distance(p, mc, 2)
		}
	}
	mmd := floats.Distance(all, meanOf(pa), 2)
	v := mat.NewVecDense(4, m.Alpha)
	for _, c := range []struct {
		name string
		form *mat.SymDense
		want float64
	}{{"tr S_b", m.M, sb}, {"tr S_w", m.N, sw}, {"MMD^2", m.D, mmd * mmd}} {
		if got := mat.Inner(v, c.form, v); math.Abs(got-c.want) > 1e-10*math.Max(1, c.want) {
			t.Errorf("%s: quadratic form %.15g, feature space %.15g", c.name, got, c.want)
		}
	}
}

// TestGradient: 2 direction() is the gradient of J (central differences).
func TestGradient(t *testing.T) {
	x, y, aux := blobs(3, 20, 30)
	m, err := Train(context.Background(), x, y, aux, Config{Lambda: 1, Sigma: 5, KNN: 15, C: 1, Degree: 2, Iterations: 5})
	if err != nil {
		t.Fatal(err)
	}
	nl := mat.NewSymDense(m.N.SymmetricDim(), nil)
	nl.ScaleSym(1, m.D)
	nl.AddSym(nl, m.N)
	a := append([]float64(nil), m.Alpha...)
	g := direction(m.M, nl, a)
	for i := range a {
		h := 1e-6 * math.Max(1, math.Abs(a[i]))
		up, down := append([]float64(nil), a...), append([]float64(nil), a...)
		up[i] += h
		down[i] -= h
		fd := (ratio(m.M, nl, up) - ratio(m.M, nl, down)) / (2 * h)
		if math.Abs(2*g[i]-fd) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Fatalf("component %d: analytic %g, finite differences %g", i, 2*g[i], fd)
		}
	}
}

// TestSolvers: gradient ascent raises J from the base kernel's and stays
// below the top generalised eigenvalue; lambda = 0 is FDA (no auxiliary
// term: the same as no auxiliary points).
func TestSolvers(t *testing.T) {
	x, y, aux := blobs(4, 30, 60)
	cfg := Config{Lambda: 1, Sigma: 5, KNN: 15, C: 1, Degree: 2, Iterations: 200}
	b, err := Train(context.Background(), x, y, aux, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Eigen = true
	a, err := Train(context.Background(), x, y, aux, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !(b.J >= b.JBase) || b.J > a.J*(1+1e-8) {
		t.Fatalf("J: base %g, gradient %g, eigen (max) %g", b.JBase, b.J, a.J)
	}
	if len(b.Aux) == 0 || len(b.Aux) > 60 {
		t.Fatalf("%d auxiliary points kept", len(b.Aux))
	}
	cfg.Lambda = 0
	fda, err := Train(context.Background(), x, y, aux, cfg)
	if err != nil {
		t.Fatal(err)
	}
	none, err := Train(context.Background(), x, y, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(fda.J-none.J) > 1e-12*math.Abs(none.J) || floats.Distance(fda.Alpha, none.Alpha, math.Inf(1)) > 1e-9 {
		t.Fatalf("lambda = 0: J %v / %v, alpha %v / %v", fda.J, none.J, fda.Alpha, none.Alpha)
	}
	if v := mat.NewVecDense(len(fda.Alpha), fda.Alpha); math.Abs(mat.Inner(v, fda.M, v)/mat.Inner(v, fda.N, v)-fda.J) > 1e-9*fda.J {
		t.Fatal("lambda = 0: J is not the Fisher ratio alpha'M alpha / alpha'N alpha")
	}
	if q := b.Q(x); math.Abs(floats.Sum(q)/30-1) > 1e-12 {
		t.Fatalf("mean q over X = %v, want 1", floats.Sum(q)/30)
	}
}

// TestLearnerKernel: the output is q_i q_j k_ij, the model's Cross.
func TestLearnerKernel(t *testing.T) {
	x, y, aux := blobs(5, 12, 20)
	all := mat.NewDense(32, 2, nil)
	all.Stack(x, aux)
	labels := append(append([]int(nil), y...), make([]int, 20)...)
	for i := 12; i < 32; i++ {
		labels[i] = learners.Unlabeled
	}
	l, _, err := learners.New(Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Fit(context.Background(), &learners.Input{Features: all, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Train(context.Background(), x, y, aux, Config{Lambda: 1, Sigma: 5, KNN: 15, C: 1, Degree: 2, Iterations: 200})
	if err != nil {
		t.Fatal(err)
	}
	cross := m.Cross(all, all)
	for i := range 32 {
		for j := range 32 {
			if math.Abs(out.Kernel.At(i, j)-cross.At(i, j)) > 1e-12*math.Max(1, math.Abs(cross.At(i, j))) {
				t.Fatalf("K[%d,%d] = %v, Cross %v", i, j, out.Kernel.At(i, j), cross.At(i, j))
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	x, y, _ := blobs(6, 10, 1)
	cfg := Config{Lambda: 1, Sigma: 5, KNN: 15, C: 1, Degree: 2, Iterations: 10}
	for name, f := range map[string]func() error{
		"one point":     func() error { _, err := Train(context.Background(), rowsOf(x, []int{0}), y[:1], nil, cfg); return err },
		"aux dimension": func() error { _, err := Train(context.Background(), x, y, mat.NewDense(3, 5, nil), cfg); return err },
		"one class":     func() error { _, err := Train(context.Background(), x, make([]int, 10), nil, cfg); return err },
	} {
		if err := f(); !errors.Is(err, learners.ErrInput) {
			t.Errorf("%s: got %v, want ErrInput", name, err)
		}
	}
}

// TestRelativeLambda: the relative weight is lambda tr(S_w)/tr(Delta) at
// e_0, N_00 / D_00, and changes the solution.
func TestRelativeLambda(t *testing.T) {
	x, y, aux := blobs(7, 30, 60)
	cfg := Config{Lambda: 1, Relative: true, Sigma: 5, KNN: 15, C: 1, Degree: 2, Eigen: true}
	m, err := Train(context.Background(), x, y, aux, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := m.N.At(0, 0) / m.D.At(0, 0); math.Abs(m.Lambda-want) > 1e-12*want || want < 10 {
		t.Fatalf("lambda %v, want tr(S_w)/tr(Delta) = %v (>> 1)", m.Lambda, want)
	}
	cfg.Relative = false
	abs, err := Train(context.Background(), x, y, aux, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if abs.J == m.J {
		t.Fatal("the relative lambda changed nothing")
	}
}
