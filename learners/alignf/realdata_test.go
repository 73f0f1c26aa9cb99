package alignf_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/learners/alignf"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/social"
)

// The friend task of spec B.2 on ego-Facebook and BlogCatalog: default-mode
// kernels (all but the regularised Laplacian, whose rows are CG solves)
// aligned with the friend graph. M and a, from the row sweep at these
// sizes, equal those from the kernels' factored forms to 1e-9; the alignment Solve reports
// (from M and a) equals the centred alignment of the combined kernel
// measured directly from its rows, it is at least every single kernel's,
// and the QP's certificate holds.
func TestRealFriendTask(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data test skipped with -short")
	}
	root, ok := dataset.DataDir()
	if !ok {
		t.Skipf("shared data not found (set %s): skipping the real-data test", dataset.EnvDataDir)
	}
	for _, name := range []string{"ego-facebook", "blogcatalog"} {
		t.Run(name, func(t *testing.T) { checkFriendTask(t, filepath.Join(root, "social", name)) })
	}
}

func checkFriendTask(t *testing.T, dir string) {
	ds, _, err := social.LoadDir(dir, social.ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	named, err := social.BuildKernels(ctx, ds, ds.FullView(), social.KernelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ks []kernelmath.KernelMatrix
	var names []string
	for _, nk := range named {
		if nk.Name != social.KernelRegLaplacian {
			ks, names = append(ks, nk.K), append(names, nk.Name)
		}
	}
	y, err := social.FriendMatrix(ds.N(), ds.Friends)
	if err != nil {
		t.Fatal(err)
	}
	res, err := alignf.Solve(ctx, ks, y)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kernels %v: alone %.4f; weights %.4f; alignment %.4f; QP KKT %.2g in %d iterations",
		names, res.KernelAlignments, res.Weights, res.Alignment, res.QP.KKT, res.QP.Iterations)
	if res.Method != kernelmath.MethodRows || res.StdErr != nil {
		t.Errorf("inner products by %q (stderr %v), want the exact %q below %d users", res.Method, res.StdErr, kernelmath.MethodRows, kernelmath.DefaultFactorsFrom)
	}
	p := len(ks)
	ip, err := kernelmath.FrobeniusInnerProducts(ctx, append(ks[:p:p], y), true, kernelmath.InnerOptions{FactorsFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ip.Method != kernelmath.MethodFactors {
		t.Fatalf("inner products by %q, want %q", ip.Method, kernelmath.MethodFactors)
	}
	factored := ip.G
	agree := func(what string, got, want float64) {
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("%s from rows %.15g, from factors %.15g", what, got, want)
		}
	}
	for k := 0; k < p; k++ {
		for l := k; l < p; l++ {
			agree(fmt.Sprintf("M[%s,%s]", names[k], names[l]), res.M.At(k, l), factored.At(k, l))
		}
		agree("a["+names[k]+"]", res.A[k], factored.At(k, p))
	}
	agree("||Yc||^2", res.TargetNorm2, factored.At(p, p))
	if res.QP.KKT > 1e-9 {
		t.Errorf("QP KKT violation %g", res.QP.KKT)
	}
	norm := 0.0
	for k, w := range res.Weights {
		if w < 0 {
			t.Errorf("weight %s = %g", names[k], w)
		}
		norm += w * w
		if res.Alignment < res.KernelAlignments[k]-1e-12 {
			t.Errorf("alignment %g below %s's %g", res.Alignment, names[k], res.KernelAlignments[k])
		}
	}
	if math.Abs(norm-1) > 1e-12 {
		t.Errorf("||weights||^2 = %g, want 1", norm)
	}
	sum, err := kernelmath.NewKernelSum(res.Weights, ks)
	if err != nil {
		t.Fatal(err)
	}
	g, err := kernelmath.KernelInnerProducts(ctx, []kernelmath.KernelMatrix{sum, y}, true)
	if err != nil {
		t.Fatal(err)
	}
	direct := g.At(0, 1) / math.Sqrt(g.At(0, 0)*g.At(1, 1))
	if math.Abs(direct-res.Alignment) > 1e-9 {
		t.Errorf("alignment from M and a %.12g, measured on the combined kernel %.12g", res.Alignment, direct)
	}
}
