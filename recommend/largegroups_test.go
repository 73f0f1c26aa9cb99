package recommend

import (
	"math"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/social"
)

// generated trains the default model on a generated network of YouTube's
// shape (demo.GenerateLarge) with n users.
func generated(t *testing.T, n int) *Model {
	t.Helper()
	return trainT(t, generatedData(t, n), Options{})
}

// generatedData is the network of YouTube's shape (demo.GenerateLarge)
// with n users, as loaded from its files.
func generatedData(t testing.TB, n int) *social.Dataset {
	t.Helper()
	net, err := demo.GenerateLarge(3, demo.LargeOptions{Users: n})
	if err != nil {
		t.Fatal(err)
	}
	return written(t, net.WriteBlogCatalog)
}

// written loads the data set that write puts in a temporary directory.
func written(t testing.TB, write func(dir string) error) *social.Dataset {
	t.Helper()
	dir := t.TempDir()
	if err := write(dir); err != nil {
		t.Fatal(err)
	}
	ds, _, err := social.LoadDir(dir, social.ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// Candidate groups ranked with the large groups' member sums kept with
// the model rank as the exact ranking (every member read, from whole
// rows) on a generated network whose groups of more than 20 members are
// taken as large: both signals equal the exact ones to rounding.
func TestLargeGroupSumsRankAsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on a generated network")
	}
	const k, users = 10, 400
	m := generated(t, 2000).WithCandidates()
	m.large = &largeGroups{min: 20}
	s := m.largeSums()
	if s == nil {
		t.Fatal("no large-group sums: a base kernel without a feature map?")
	}
	n, ng := m.ds.N(), len(m.members)
	if len(s.near) < 20 {
		t.Fatalf("%d large groups: the test needs more", len(s.near))
	}
	m.groupPerUser = false // the candidate path, as above DefaultPrecomputeMaxUsers
	if m.groupWeights == nil {
		m.groupWeights = []float64{0.5, 1, -0.3, 0, 0.7, 0.4, 0.1}
	}
	seen, acc, gacc := make([]bool, n), make([]float64, n), make([]float64, ng)
	f := make([]float64, n)
	worst, cachedGroups, same, ties, rankings := 0.0, 0, 0, 0, 0
	for u := range users {
		gs := m.groupCandidates(u, k, seen, acc)
		cached := m.cachedSums(m.subject(u), gs, false)
		m.strength.ScoreAll(u, f)
		for _, g := range gs {
			if cached(g) {
				cachedGroups++
			}
		}
		for _, sig := range []int{0, sigKernelMean} {
			exact, got := make([]float64, len(gs)), make([]float64, len(gs))
			if sig == 0 {
				m.strength.ScoreAll(u, f)
			}
			m.groupSignal(sig, m.subject(u), gs, true, f, gacc, exact)
			m.groupSignal(sig, m.subject(u), gs, false, nil, gacc, got)
			if slices.ContainsFunc(gacc, func(x float64) bool { return x != 0 }) {
				t.Fatalf("user %d: group scratch left dirty", u)
			}
			for i, g := range gs {
				d := math.Abs(got[i]-exact[i]) / math.Max(1, math.Abs(exact[i]))
				if d > 1e-9 {
					t.Fatalf("user %d, group %d, signal %s: %v, exact %v", u, g, groupFeatures[sig], got[i], exact[i])
				}
				worst = math.Max(worst, d)
			}
		}
		for _, scorer := range []string{GroupMKLR, GroupLearned} {
			c := *m
			c.groupScorer = scorer
			exact := make([]float64, len(gs))
			c.strength.ScoreAll(u, f)
			c.scoreGroupList(scorer, c.subject(u), gs, true, f, gacc, exact, nil)
			want, _ := pickTop(gs, exact, c.groupTie, k)
			sums := make([]float64, len(gs)) // as topGroups ranks without rows
			c.scoreGroupList(scorer, c.subject(u), gs, false, nil, gacc, sums, nil)
			got, _ := pickTop(gs, sums, c.groupTie, k)
			rankings++
			if slices.Equal(got, want) {
				same++
				continue
			}
			// Equal scores may come out apart by rounding and swap.
			score := func(g int) float64 { return exact[slices.Index(gs, g)] }
			for r := range want {
				if r >= len(got) || math.Abs(score(got[r])-score(want[r])) > 1e-9*math.Max(1, math.Abs(score(want[r]))) {
					t.Fatalf("%s: user %d: ranking %v, exact %v", scorer, u, got, want)
				}
			}
			ties++
		}
	}
	near, members := 0, 0
	for i, l := range s.near {
		near += len(l)
		members += len(m.members[slices.Index(s.index, i)])
	}
	t.Logf("%d large groups of %d (%d bytes kept; %d of their %d members have import features); %d candidate groups summed from them; signals off by at most %.3g relative; %d of %d top-%d rankings as exact, %d swap groups of equal scores",
		len(s.near), ng, s.bytes(), near, members, cachedGroups, worst, same, rankings, k, ties)
	if cachedGroups < users {
		t.Errorf("only %d candidate groups of %d users took the kept sums", cachedGroups, users)
	}
	if same < rankings*99/100 {
		t.Errorf("%d of %d rankings swap groups of equal scores", ties, rankings)
	}
}
