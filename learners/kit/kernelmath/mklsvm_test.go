package kernelmath

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestNewSVMTasks(t *testing.T) {
	u := Unlabeled
	for _, tc := range []struct {
		name   string
		labels []int
		points []int
		y      [][]int
	}{
		{"binary, class 1 positive", []int{0, 1, u, 1, 0}, []int{0, 1, 3, 4}, [][]int{{-1, 1, 1, -1}}},
		{"binary with a gap in the indices", []int{2, 0, 2}, []int{0, 1, 2}, [][]int{{1, -1, 1}}},
		{"three classes, one against the rest", []int{2, 0, 1, u, 0}, []int{0, 1, 2, 4},
			[][]int{{-1, 1, -1, 1}, {-1, -1, 1, -1}, {1, -1, -1, -1}}},
	} {
		tasks, err := NewSVMTasks(tc.labels)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(tasks.Points, tc.points) || !slices.EqualFunc(tasks.Y, tc.y, slices.Equal) {
			t.Errorf("%s: points %v y %v, want %v %v", tc.name, tasks.Points, tasks.Y, tc.points, tc.y)
		}
	}
	for name, labels := range map[string][]int{"one class": {1, 1, u}, "all unlabeled": {u, u}, "invalid": {0, 1, -3}} {
		if _, err := NewSVMTasks(labels); !errors.Is(err, ErrInput) {
			t.Errorf("%s: got %v, want ErrInput", name, err)
		}
	}
}

// randomKernel returns G G' for an n x 3 Gaussian G.
func randomKernel(r *rand.Rand, n int) *mat.SymDense {
	g := mat.NewDense(n, 3, nil)
	for i := range n {
		for j := range 3 {
			g.Set(i, j, r.NormFloat64())
		}
	}
	k := mat.NewSymDense(n, nil)
	k.SymOuterK(1, g)
	return k
}

// Train on three classes: Value is the summed dual 1'a - 1/2 b'Kb
// recomputed from the betas, each beta satisfies y'a = 0, 0 <= a <= C, and
// Support is where some beta is non-zero.
func TestSVMTasksTrain(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 30
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 3
	}
	labels[7] = Unlabeled
	k := randomKernel(r, n)
	tasks, err := NewSVMTasks(labels)
	if err != nil {
		t.Fatal(err)
	}
	kl := mat.NewSymDense(len(tasks.Points), nil)
	NewKernelSet([]*mat.SymDense{k}).Restrict(tasks.Points).Combine(kl, []float64{1})
	const c = 0.5
	d, err := tasks.Train(context.Background(), kl, SVMOptions{C: c})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Beta) != 3 {
		t.Fatalf("%d tasks", len(d.Beta))
	}
	want := 0.0
	inSupport := map[int]bool{}
	for ti, beta := range d.Beta {
		sum := 0.0
		for a, b := range beta {
			alpha := b * float64(tasks.Y[ti][a])
			if alpha < 0 || alpha > c {
				t.Errorf("task %d: alpha %g outside [0, C]", ti, alpha)
			}
			sum += b
			want += alpha
			if b != 0 {
				inSupport[a] = true
			}
			for e, b2 := range beta {
				want -= 0.5 * b * b2 * kl.At(a, e)
			}
		}
		if math.Abs(sum) > 1e-12 {
			t.Errorf("task %d: y'alpha = %g", ti, sum)
		}
	}
	if math.Abs(d.Value-want) > 1e-10*math.Abs(want) {
		t.Errorf("Value %.12g, recomputed %.12g", d.Value, want)
	}
	var support []int
	for a := range tasks.Points {
		if inSupport[a] {
			support = append(support, a)
		}
	}
	if !slices.Equal(d.Support, support) {
		t.Errorf("Support %v, want %v", d.Support, support)
	}
	// Outer(h): <W, K[S, S]> = sum_c b_c'(K o h) b_c, here with h = K.
	w := d.Outer(kl)
	got, want2 := 0.0, 0.0
	for a, i := range d.Support {
		for b, j := range d.Support {
			got += w.At(a, b) * kl.At(i, j)
		}
	}
	for _, beta := range d.Beta {
		for i := range beta {
			for j := range beta {
				want2 += beta[i] * beta[j] * kl.At(i, j) * kl.At(i, j)
			}
		}
	}
	if math.Abs(got-want2) > 1e-10*math.Abs(want2) {
		t.Errorf("<Outer(K), K> = %.12g, want %.12g", got, want2)
	}
}

// KernelSet.Combine on all points, and Restricted.Combine and Contract on
// a subset (with a kernel added after the restriction), against their
// definitions, with unit-trace scales.
func TestKernelSetCombineContract(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 12
	ks := NewKernelSet([]*mat.SymDense{randomKernel(r, n), randomKernel(r, n)})
	points := []int{0, 2, 3, 7, 11}
	ks.UnitTrace(points)
	for tk, k := range ks.Kernels {
		if got := ks.Scales[tk] * TraceOver(k, points); math.Abs(got-1) > 1e-14 {
			t.Errorf("kernel %d: trace over the subset after scaling %g", tk, got)
		}
	}
	lab := ks.Restrict(points)
	ks.Kernels = append(ks.Kernels, randomKernel(r, n))
	ks.Scales = append(ks.Scales, 0.25)
	lab.Add(ks.Kernels[2], 0.25)
	w := []float64{0.5, 0, 2}
	combined := func(i, j int) float64 {
		v := 0.0
		for tk, k := range ks.Kernels {
			v += w[tk] * ks.Scales[tk] * k.At(i, j)
		}
		return v
	}
	all := mat.NewSymDense(n, nil)
	all.SetSym(0, 1, 99) // Combine overwrites
	ks.Combine(all, w)
	sub := mat.NewSymDense(len(points), nil)
	sub.SetSym(0, 1, 99)
	lab.Combine(sub, w)
	for i := range n {
		for j := range n {
			if want := combined(i, j); math.Abs(all.At(i, j)-want) > 1e-13 {
				t.Fatalf("Combine[%d,%d] = %g, want %g", i, j, all.At(i, j), want)
			}
		}
	}
	for a, i := range points {
		for b, j := range points {
			if want := combined(i, j); math.Abs(sub.At(a, b)-want) > 1e-13 {
				t.Fatalf("Restricted.Combine[%d,%d] = %g, want %g", a, b, sub.At(a, b), want)
			}
		}
	}
	// Contract over positions of the restricted points: two (gathered) and
	// three (dense).
	for _, pos := range [][]int{{1, 4}, {1, 3, 4}} {
		wm := mat.NewSymDense(len(pos), nil)
		for a := range pos {
			for b := a; b < len(pos); b++ {
				wm.SetSym(a, b, r.NormFloat64())
			}
		}
		q := lab.Contract(wm, pos)
		for tk, k := range ks.Kernels {
			want := 0.0
			for a, pa := range pos {
				for b, pb := range pos {
					want += wm.At(a, b) * k.At(points[pa], points[pb])
				}
			}
			want *= ks.Scales[tk]
			if math.Abs(q[tk]-want) > 1e-12*(1+math.Abs(want)) {
				t.Errorf("Contract(%v)[%d] = %.12g, want %.12g", pos, tk, q[tk], want)
			}
		}
	}
}
