package kernelmath

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/internal/dataset"
)

// dense spreads a pushed row over n entries.
func dense(n int, idx []int, val []float64) []float64 {
	out := make([]float64, n)
	for i, v := range idx {
		out[v] = val[i]
	}
	return out
}

func TestPushClosedForm(t *testing.T) {
	// The complete graph on n vertices: N = (J - I)/(n-1) has eigenvalue 1
	// on the ones and -1/(n-1) on their complement, so
	// K = J/n + c (I - J/n) with c = 1/(1 + gamma n/(n-1)).
	const n, gamma = 6, 1.5
	var e []Triplet
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			e = append(e, Triplet{i, j, 1})
		}
	}
	adj, _ := NewSparseSym(n, e)
	rl, err := NewRegLaplacian(adj, gamma, 1e-12)
	if err != nil {
		t.Fatal(err)
	}
	c := 1 / (1 + gamma*n/(n-1))
	idx, val, res, err := rl.PushRow(2, 1e-13)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx) != n || idx[0] != 2 {
		t.Fatalf("touched %v, want all %d vertices, 2 first", idx, n)
	}
	row := dense(n, idx, val)
	for v, got := range row {
		want := (1 - c) / n
		if v == 2 {
			want += c
		}
		near(t, "complete graph K(2, v)", got, want, 1e-11)
	}
	if res > 1e-11 {
		t.Errorf("residual mass %g after eps 1e-13", res)
	}

	// One edge and an isolated vertex (TestRegLaplacianClosedForm's
	// K): the isolated vertex's row is e_2, and x is taken linearly.
	adj, _ = NewSparseSym(3, []Triplet{{0, 1, 1}})
	rl, _ = NewRegLaplacian(adj, 1, 1e-12)
	idx, val, _, err = rl.Push([]int{2, 0}, []float64{0.5, 3}, 1e-14)
	if err != nil {
		t.Fatal(err)
	}
	got := dense(3, idx, val)
	for v, want := range []float64{3 * 2.0 / 3, 3 * 1.0 / 3, 0.5} {
		near(t, "edge + isolated (K x)_v", got[v], want, 1e-12)
	}
}

func TestPushRejectsBadInput(t *testing.T) {
	adj, _ := NewSparseSym(3, []Triplet{{0, 1, 1}})
	rl, _ := NewRegLaplacian(adj, 1, 1e-8)
	for _, c := range []struct {
		idx []int
		x   []float64
		eps float64
	}{
		{[]int{0}, []float64{1}, 0},
		{[]int{0}, []float64{1}, math.Inf(1)},
		{[]int{0}, []float64{1}, math.NaN()},
		{[]int{3}, []float64{1}, 1e-3},
		{[]int{-1}, []float64{1}, 1e-3},
		{[]int{0}, []float64{-1}, 1e-3},
		{[]int{0}, []float64{math.NaN()}, 1e-3},
		{[]int{0, 1}, []float64{1}, 1e-3},
	} {
		if _, _, _, err := rl.Push(c.idx, c.x, c.eps); err == nil {
			t.Errorf("Push(%v, %v, %v) accepted", c.idx, c.x, c.eps)
		}
	}
	// A rejected call leaves the scratch clear for the next.
	idx, val, _, err := rl.PushRow(0, 1e-14)
	if err != nil {
		t.Fatal(err)
	}
	got := dense(3, idx, val)
	near(t, "K(0,0) after rejected calls", got[0], 2.0/3, 1e-12)
	near(t, "K(0,2) after rejected calls", got[2], 0, 0)
}

// socialGraph loads an edge list of ../shared/data/social (one edge a
// line, two ids separated by sep), numbering the ids as they come.
func socialGraph(tb testing.TB, rel, sep string) *SparseSym {
	tb.Helper()
	dir, ok := dataset.DataDir()
	if !ok {
		tb.Skip("shared data not found (../shared/data or $KERNELRANK_SHARED_DATA): skipping the real-data test")
	}
	f, err := os.Open(filepath.Join(dir, "social", filepath.FromSlash(rel)))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	ids := map[string]int{}
	id := func(s string) int {
		if i, ok := ids[s]; ok {
			return i
		}
		ids[s] = len(ids)
		return len(ids) - 1
	}
	var e []Triplet
	seen := map[[2]int]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		a, b, ok := strings.Cut(strings.TrimSpace(sc.Text()), sep)
		if !ok {
			continue
		}
		i, j := id(a), id(b)
		if i > j {
			i, j = j, i
		}
		if i != j && !seen[[2]int{i, j}] {
			seen[[2]int{i, j}] = true
			e = append(e, Triplet{i, j, 1})
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	adj, err := NewSparseSym(len(ids), e)
	if err != nil {
		tb.Fatal(err)
	}
	return adj
}

// TestPushBoundOnEgoFacebook checks Push against CG rows of ego-Facebook's
// graph (4,039 users, 88,234 friendships): every entry non-negative and
// within the stated bound |K(u, v) - y_v| <= eps sqrt(d_u d_v), the error
// weighted by sqrt(d_v) summing to 0, and the residual mass and the
// largest error falling as eps does.
func TestPushBoundOnEgoFacebook(t *testing.T) {
	adj := socialGraph(t, "ego-facebook/facebook_combined.txt", " ")
	if adj.Dim() != 4039 || adj.NNZ() != 2*88234 {
		t.Fatalf("ego-Facebook: %d vertices, %d entries; want 4039, %d", adj.Dim(), adj.NNZ(), 2*88234)
	}
	rl, err := NewRegLaplacian(adj, 1, 1e-13)
	if err != nil {
		t.Fatal(err)
	}
	deg := adj.RowSums()
	n := adj.Dim()
	exact := make([]float64, n)
	const cg = 1e-10 // the CG row's own error, generously
	for _, u := range []int{0, 107, 1000, 3000, 4038} {
		rl.Row(u, exact)
		prevRes, prevErr := math.Inf(1), math.Inf(1)
		for _, eps := range []float64{1e-2, 1e-3, 1e-4, 1e-5, 1e-6} {
			idx, val, res, err := rl.PushRow(u, eps)
			if err != nil {
				t.Fatal(err)
			}
			y := dense(n, idx, val)
			worst, weighted := 0.0, 0.0
			for v := range y {
				d := exact[v] - y[v]
				if bound := eps*math.Sqrt(deg[u]*deg[v]) + cg; y[v] < 0 || math.Abs(d) > bound {
					t.Fatalf("u %d eps %g: K(u, %d) = %g, pushed %g: error above eps sqrt(d_u d_v) = %g", u, eps, v, exact[v], y[v], bound)
				}
				worst = math.Max(worst, math.Abs(d))
				weighted += math.Sqrt(deg[v]) * d
			}
			near(t, "sum_v sqrt(d_v) error", weighted, 0, 1e-8)
			if res <= 0 || res > math.Sqrt(deg[u]) || res > prevRes || worst > prevErr {
				t.Errorf("u %d eps %g: residual mass %g (m %g), largest error %g; at 10 eps %g, %g", u, eps, res, math.Sqrt(deg[u]), worst, prevRes, prevErr)
			}
			prevRes, prevErr = res, worst
		}
	}
}

// BenchmarkRegLaplacianRow is one row of the regularised Laplacian of
// YouTube's friendships (77,381 users, 391,179 friendships, gamma 1),
// by Push at several eps and by CG (tol 1e-8, as served), users in
// turn, in wall and CPU time (cpu-µs/op: the process's, which other work
// on a shared machine inflates far less); run with -cpu 1.
func BenchmarkRegLaplacianRow(b *testing.B) {
	adj := socialGraph(b, "youtube/edges.csv", ",")
	rl, err := NewRegLaplacian(adj, 1, 1e-8)
	if err != nil {
		b.Fatal(err)
	}
	n := adj.Dim()
	for _, c := range []struct {
		name string
		eps  float64
	}{{"1e-3", 1e-3}, {"1e-4", 1e-4}, {"1e-5", 1e-5}, {"3e-6", 3e-6}} {
		eps := c.eps
		b.Run("push/eps="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			touched := 0
			cpu := cputime.Process()
			for i := 0; b.Loop(); i++ {
				idx, _, _, err := rl.PushRow((i*7919)%n, eps)
				if err != nil {
					b.Fatal(err)
				}
				touched += len(idx)
			}
			b.ReportMetric((cputime.Process()-cpu).Seconds()/float64(b.N)*1e6, "cpu-µs/op")
			b.ReportMetric(float64(touched)/float64(b.N), "touched/op")
		})
	}
	b.Run("cg", func(b *testing.B) {
		b.ReportAllocs()
		row := make([]float64, n)
		cpu := cputime.Process()
		for i := 0; b.Loop(); i++ {
			rl.Row((i*7919)%n, row)
		}
		b.ReportMetric((cputime.Process()-cpu).Seconds()/float64(b.N)*1e6, "cpu-µs/op")
	})
}
