package social

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

// tinySocial has five users u1..u5 (indices 0..4) and every modality:
//
//	friends      u1-u2, u1-u3, u2-u3, u3-u4; u5 has none
//	groups       u5 in g1..g4, u1 in g1, u2 in g2, u3 in g3, u4 in g4
//	comments     u1 on u2's p1 twice, u2 on u1's p11, u3 on its own p3, u4 on u2's p22
//	places/geo   u1 Paris and a photo at (48.95, 2.35); u2 Paris and a photo at
//	             (48.85, 2.35); u3 a photo at (48.86, 2.34), the same 0.1-degree
//	             cell as u2's, not as u1's; u4 a photo in Sydney
//	faves        u1 {p1, x}, u3 {p1}, u5 {x, y}
//	tags         u1 profile jazz + photo sea; u2 photos {sea, sun}, {sea}; u3 photo sun
//	visual       u1 (0,0); u2 (2,4) and (4,4): centroid (3,4); u3 (0,4)
var tinySocial = map[string]string{
	"users.jsonl": `{"id":"u1","tags":["jazz"],"places":["Paris"],"faves":["p1","x"],"photos":[{"id":"p11","visual":[0,0],"tags":["sea"],"geo":{"lat":48.95,"lon":2.35}}]}
{"id":"u2","places":["Paris"],"photos":[{"id":"p1","visual":[2,4],"tags":["sea","sun"],"geo":{"lat":48.85,"lon":2.35}},{"id":"p22","visual":[4,4],"tags":["sea"]}]}
{"id":"u3","faves":["p1"],"photos":[{"id":"p3","visual":[0,4],"tags":["sun"],"geo":{"lat":48.86,"lon":2.34}}]}
{"id":"u4","photos":[{"id":"p4","geo":{"lat":-33.9,"lon":151.2}}]}
{"id":"u5","faves":["x","y"]}
`,
	"friends.csv":     "u1,u2\nu1,u3\nu2,u3\nu3,u4\n",
	"memberships.csv": "u5,g1\nu5,g2\nu5,g3\nu5,g4\nu1,g1\nu2,g2\nu3,g3\nu4,g4\n",
	"comments.csv":    "u1,p1\nu1,p1\nu2,p11\nu3,p3\nu4,p22\n",
}

func loadTiny(t *testing.T) *Dataset {
	t.Helper()
	ds, _, err := LoadDir(writeFiles(t, tinySocial), ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// checkDense compares a kernel with a 5 x 5 matrix given by its upper
// triangle (row by row).
func checkDense(t *testing.T, name string, k kernelmath.KernelMatrix, upper []float64, tol float64) {
	t.Helper()
	n := k.Dim()
	got := kernelmath.KernelDense(k)
	p := 0
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if math.Abs(got.At(i, j)-upper[p]) > tol {
				t.Errorf("%s(%d,%d) = %.12g, want %.12g", name, i, j, got.At(i, j), upper[p])
			}
			p++
		}
	}
}

func TestBaseKernelsByHand(t *testing.T) {
	ds := loadTiny(t)
	opts := KernelOptions{}
	if err := opts.setDefaults(); err != nil {
		t.Fatal(err)
	}
	in, err := newKernelInput(ds, ds.FullView(), opts)
	if err != nil {
		t.Fatal(err)
	}
	raw := func(name string) kernelmath.KernelMatrix {
		b, err := in.build(name)
		if err != nil || b.k == nil {
			t.Fatalf("%s: %v (missing %q)", name, err, b.missing)
		}
		return b.k
	}
	l2, l3 := 1/math.Ln2, 1/math.Log(3)
	s5 := math.Sqrt(5)
	ln5, ln25 := math.Log(5), math.Log(2.5)
	for _, c := range []struct {
		name  string
		upper []float64
	}{
		// Common friends: N(u1)={u2,u3}, N(u2)={u1,u3}, N(u3)={u1,u2,u4}, N(u4)={u3}.
		{KernelFriends, []float64{
			2, 1, 1, 1, 0,
			2, 1, 1, 0,
			3, 0, 0,
			1, 0,
			0}},
		// Adamic-Adar: weights 1/ln 2 for u1, u2 (degree 2) and u4 (degree
		// 1, capped), 1/ln 3 for u3.
		{KernelAdamicAdar, []float64{
			l2 + l3, l3, l2, l3, 0,
			l2 + l3, l2, l3, 0,
			3 * l2, 0, 0,
			l3, 0,
			0}},
		{KernelGroups, []float64{
			1, 0, 0, 0, 1,
			1, 0, 0, 1,
			1, 0, 1,
			1, 1,
			4}},
		// Incidence Gram: C_12 = 2 + 1, C_24 = 1, self-comments C_33 = 1;
		// the diagonal sums all comments of a user.
		{KernelComments, []float64{
			3, 3, 0, 0, 0,
			4, 0, 1, 0,
			1, 0, 0,
			1, 0,
			0}},
		// Cells: u1 {Paris, geo:489:23}, u2 {Paris, geo:488:23}, u3 {geo:488:23},
		// u4 {geo:-339:1512}.
		{KernelLocation, []float64{
			2, 1, 0, 0, 0,
			2, 1, 0, 0,
			1, 0, 0,
			1, 0,
			0}},
		{KernelFaves, []float64{
			2, 0, 1, 0, 1,
			0, 0, 0, 0,
			1, 0, 0,
			0, 0,
			2}},
		// tf-idf, idf = ln(5/r): u1 (jazz ln 5, sea ln 2.5), u2 (sea 2 ln 2.5,
		// sun ln 2.5), u3 (sun); rows normalised.
		{KernelTextual, []float64{
			1, 2 * ln25 / (s5 * math.Hypot(ln5, ln25)), 0, 0, 0,
			1, 1 / s5, 0, 0,
			1, 0, 0,
			0, 0,
			0}},
		// Distances 5 (u1,u2), 4 (u1,u3), 3 (u2,u3): sigma = 4.
		{KernelVisual, []float64{
			1, math.Exp(-25.0 / 16), math.Exp(-1), 0, 0,
			1, math.Exp(-9.0 / 16), 0, 0,
			1, 0, 0,
			0, 0,
			0}},
	} {
		checkDense(t, c.name, raw(c.name), c.upper, 1e-12)
	}
	// The isolated u5 keeps only itself in the regularised Laplacian.
	row := make([]float64, 5)
	raw(KernelRegLaplacian).Row(4, row)
	for j, w := range []float64{0, 0, 0, 0, 1} {
		near(t, "reg-laplacian row u5", row[j], w, 1e-12)
	}
}

func TestCosineModeByHand(t *testing.T) {
	ds := loadTiny(t)
	ks, err := BuildKernels(context.Background(), ds, ds.FullView(), KernelOptions{Mode: ModeCosine})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]NamedKernel{}
	for _, k := range ks {
		names = append(names, k.Name)
		byName[k.Name] = k
		if k.PSD != nil {
			t.Errorf("%s: PSD check in cosine mode", k.Name)
		}
	}
	if strings.Join(names, " ") != strings.Join(AllKernels(), " ") {
		t.Errorf("kernels %v, want %v", names, AllKernels())
	}
	// Cosine-normalised common friends: CN_ij / sqrt(deg_i deg_j).
	s2, s6 := math.Sqrt2, math.Sqrt(6)
	checkDense(t, "friends", byName[KernelFriends].K, []float64{
		1, 0.5, 1 / s6, 1 / s2, 0,
		1, 1 / s6, 1 / s2, 0,
		1, 0, 0,
		1, 0,
		0}, 1e-12)
	// Comments: 3/sqrt(3*4) and 1/sqrt(4*1).
	checkDense(t, "comments", byName[KernelComments].K, []float64{
		1, math.Sqrt(3) / 2, 0, 0, 0,
		1, 0, 0.5, 0,
		1, 0, 0,
		1, 0,
		0}, 1e-12)
	for name, want := range map[string]string{
		KernelFriends: "*kernelmath.ScaledKernel", KernelTextual: "*kernelmath.Gram",
		KernelVisual: "kernelmath.DenseKernel", KernelRegLaplacian: "*kernelmath.RegLaplacian",
	} {
		if got := fmt.Sprintf("%T", byName[name].K); got != want {
			t.Errorf("%s is a %s, want %s", name, got, want)
		}
	}
}

// Default mode scales by n / tr K: common friends' trace is 2+2+3+1+0 = 8
// over 5 users, so every count is multiplied by 5/8 and the degrees stay.
func TestDefaultModeByHand(t *testing.T) {
	ds := loadTiny(t)
	ks, err := BuildKernels(context.Background(), ds, ds.FullView(), KernelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]NamedKernel{}
	for _, k := range ks {
		byName[k.Name] = k
		diag := k.K.Diag()
		sum := 0.0
		for _, d := range diag {
			sum += d
		}
		if k.Name != KernelTextual && k.Name != KernelVisual && k.Name != KernelRegLaplacian && math.Abs(sum-float64(len(diag))) > 1e-12 {
			t.Errorf("%s: trace %v, want %d", k.Name, sum, len(diag))
		}
	}
	checkDense(t, "friends", byName[KernelFriends].K, []float64{
		1.25, 0.625, 0.625, 0.625, 0,
		1.25, 0.625, 0.625, 0,
		1.875, 0, 0,
		0.625, 0,
		0}, 1e-12)
	for name, want := range map[string]string{
		KernelTextual: "*kernelmath.Gram", KernelVisual: "kernelmath.DenseKernel", KernelRegLaplacian: "*kernelmath.RegLaplacian",
	} {
		if got := fmt.Sprintf("%T", byName[name].K); got != want {
			t.Errorf("%s is a %s, want %s (left as built)", name, got, want)
		}
	}
}

func TestThesisModeByHand(t *testing.T) {
	ds := loadTiny(t)
	ks, err := BuildKernels(context.Background(), ds, ds.FullView(), KernelOptions{
		Mode: ModeThesis, Kernels: []string{KernelGroups, KernelFriends, KernelComments},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Groups: row maxima 1 for u1..u4 and 4 for the hub u5, so
	// S_i5 = (1 + 1/4)/2 = 5/8. S = I + (5/8)(e5 1^T + 1 e5^T) on the four
	// leaves has eigenvalues 1 +- (5/8) sqrt(4): lambda_min = -1/4.
	g := ks[0]
	checkDense(t, "thesis groups", g.K, []float64{
		1.25, 0, 0, 0, 0.625,
		1.25, 0, 0, 0.625,
		1.25, 0, 0.625,
		1.25, 0.625,
		1.25}, 1e-7)
	near(t, "groups lambda_min", g.PSD.MinEig, -0.25, 1e-9)
	near(t, "groups shift", g.PSD.Shift, 0.25+1e-8, 1e-9)

	// Common friends: row maxima 2, 2, 3, 1 (the degrees) and 0 for u5:
	// S_ij = CN_ij (1/m_i + 1/m_j)/2. On u1..u4 the spectrum is 1/2, 1 and
	// the roots of x^2 - 5x/2 + 1/36 (about 0.011 and 2.489), so with the
	// zero row of u5 lambda_min = 0: no shift.
	f := ks[1]
	checkDense(t, "thesis friends", f.K, []float64{
		1, 0.5, 5.0 / 12, 0.75, 0,
		1, 5.0 / 12, 0.75, 0,
		1, 0, 0,
		1, 0,
		0}, 1e-12)
	near(t, "friends lambda_min", f.PSD.MinEig, 0, 1e-9)
	near(t, "friends shift", f.PSD.Shift, 0, 0)

	// Comments: C_12 = 3, C_24 = 1, C_33 = 1; row maxima 3, 3, 1, 1, 0:
	// S_12 = 1, S_24 = (1/3 + 1)/2 = 2/3, S_33 = 1. On (u1, u2, u4) S is
	// [0 1 0; 1 0 2/3; 0 2/3 0]: eigenvalues 0, +-sqrt(13)/3.
	c := ks[2]
	lo := -math.Sqrt(13) / 3
	near(t, "comments lambda_min", c.PSD.MinEig, lo, 1e-9)
	sh := -lo + 1e-8
	checkDense(t, "thesis comments", c.K, []float64{
		sh, 1, 0, 0, 0,
		sh, 0, 2.0 / 3, 0,
		1 + sh, 0, 0,
		sh, 0,
		sh}, 1e-9)
	if _, ok := c.K.(*kernelmath.ScaledKernel).Base().(*kernelmath.SparseSym); !ok {
		t.Errorf("thesis comments base is %T, want the count matrix", c.K.(*kernelmath.ScaledKernel).Base())
	}
}

func TestViewAndOptions(t *testing.T) {
	ds := loadTiny(t)
	ctx := context.Background()
	// Hiding u1-u3 and u3's membership of g3.
	view := View{
		Friends:     [][2]int{{1, 0}, {0, 1}, {1, 2}, {2, 3}},
		Memberships: [][2]int{{4, 0}, {4, 1}, {4, 2}, {4, 3}, {0, 0}, {1, 1}, {3, 3}},
	}
	ks, err := BuildKernels(ctx, ds, view, KernelOptions{Kernels: []string{KernelFriends, KernelGroups}})
	if err != nil {
		t.Fatal(err)
	}
	// Degrees now 1, 2, 2, 1, 0 (trace 6 over 5 users): CN(u1,u3) = |{u2}| = 1 -> 5/6.
	near(t, "visible friends (u1,u3)", ks[0].K.At(0, 2), 5.0/6, 1e-12)
	near(t, "visible friends (u1,u2)", ks[0].K.At(0, 1), 0, 0)
	near(t, "visible groups (u3,u5)", ks[1].K.At(2, 4), 0, 0)
	near(t, "visible groups (u3,u3)", ks[1].K.At(2, 2), 0, 0)

	for _, c := range []struct {
		name string
		view View
		opts KernelOptions
		want string
	}{
		{"self-loop", View{Friends: [][2]int{{2, 2}}}, KernelOptions{}, "self-loop"},
		{"friend out of range", View{Friends: [][2]int{{0, 5}}}, KernelOptions{}, "outside"},
		{"group out of range", View{Memberships: [][2]int{{0, 4}}}, KernelOptions{}, "outside"},
		{"mode", ds.FullView(), KernelOptions{Mode: "fast"}, `mode "fast"`},
		{"unknown kernel", ds.FullView(), KernelOptions{Kernels: []string{"katz"}}, `unknown kernel "katz"`},
		{"repeated kernel", ds.FullView(), KernelOptions{Kernels: []string{"faves", "groups", "faves"}}, `kernel "faves" listed twice`},
		{"gamma", ds.FullView(), KernelOptions{Gamma: -1}, "Gamma must be positive"},
		{"cg tol", ds.FullView(), KernelOptions{CGTol: 2}, "CGTol must be below 1"},
		{"absent modality", View{}, KernelOptions{Kernels: []string{KernelFriends}}, "the data has no friendships"},
	} {
		_, err := BuildKernels(ctx, ds, c.view, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
	// Without relations in the view, the relation kernels are left out.
	ks, err = BuildKernels(ctx, ds, View{}, KernelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		switch k.Name {
		case KernelFriends, KernelGroups, KernelAdamicAdar, KernelRegLaplacian:
			t.Errorf("%s built from an empty view", k.Name)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := BuildKernels(cancelled, ds, ds.FullView(), KernelOptions{}); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

func TestVisualRandomFeaturesApproximateExact(t *testing.T) {
	ds := loadTiny(t)
	exact, err := BuildKernels(context.Background(), ds, ds.FullView(), KernelOptions{Kernels: []string{KernelVisual}})
	if err != nil {
		t.Fatal(err)
	}
	approx, err := BuildKernels(context.Background(), ds, ds.FullView(), KernelOptions{
		Kernels: []string{KernelVisual}, VisualDenseMax: 4, VisualFeatures: 20000, Seed: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := approx[0].K.(*kernelmath.ScaledKernel).Base().(*kernelmath.LowRank); !ok {
		t.Fatalf("5 users above VisualDenseMax 4 gave a %T", approx[0].K)
	}
	e, a := kernelmath.KernelDense(exact[0].K), kernelmath.KernelDense(approx[0].K)
	var diff mat.Dense
	diff.Sub(e, a)
	// Entries of 20000 random features are within a few 1/sqrt(20000) = 0.007.
	if m := mat.Norm(&diff, math.Inf(1)); m > 0.06 {
		t.Errorf("random features differ from the exact kernel by %g (row sum norm)", m)
	}
}
