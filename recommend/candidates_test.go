package recommend

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/internal/socialtest"
	"github.com/kernelrank/kernelrank/social"
)

// candidateRecall returns how much of the exact top k of the served
// scorers (ranking every user, every group) u's candidates hold, for
// friends (friendCandidates) and groups (groupCandidates), summed over a
// seeded sample of users with some data, and their mean numbers.
func candidateRecall(m *Model, users, k int) (friends, groups, friendSize, groupSize float64) {
	m = m.WithCandidates()
	n, ng := m.ds.N(), len(m.members)
	rng := rand.New(rand.NewPCG(1, 2))
	seen, acc, score, f := make([]bool, n), make([]float64, n), make([]float64, n), make([]float64, n)
	gscore := make([]float64, ng)
	var fHit, fAll, gHit, gAll int
	in := func(top, cand []int) (hits int) {
		for _, v := range top {
			if slices.Contains(cand, v) {
				hits++
			}
		}
		return hits
	}
	for done := 0; done < users; {
		u := rng.IntN(n)
		if m.noData[u] {
			continue
		}
		done++
		top, _ := m.rankFriends(u, k, score, nil)
		cand := m.friendCandidates(u, k, seen, acc)
		fHit, fAll, friendSize = fHit+in(top, cand), fAll+len(top), friendSize+float64(len(cand))
		if ng > 0 {
			m.groupScores(u, gscore, f, nil)
			top, _ = m.rankGroups(u, k, gscore)
			cand = m.groupCandidates(u, k, seen, acc)
			gHit, gAll, groupSize = gHit+in(top, cand), gAll+len(top), groupSize+float64(len(cand))
		}
	}
	return float64(fHit) / float64(max(fAll, 1)), float64(gHit) / float64(max(gAll, 1)), friendSize / float64(users), groupSize / float64(users)
}

// How much of the exact top 10 and 50 (every user or group ranked by the
// served scorers) the candidates hold on BlogCatalog, 500 sampled users
// (docs/scaling.md; BenchmarkCandidateRecall measures YouTube).
func TestCandidateRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data test skipped with -short")
	}
	ds := socialtest.Load(t, "blogcatalog", social.ImportOptions{StopOnError: true})
	m, err := Train(context.Background(), ds, ds.FullView(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{10, 50} {
		friends, groups, fs, gs := candidateRecall(m, 500, k)
		t.Logf("top %d: friends (%s) recall %.4f, %.0f candidates of %d; groups (%s) recall %.4f, %.1f candidates of %d",
			k, m.scorer, friends, fs, ds.N(), m.groupScorer, groups, gs, len(ds.Groups))
		if friends < 0.5 || groups < 0.5 {
			t.Errorf("top %d: recall %.3f (friends), %.3f (groups)", k, friends, groups)
		}
	}
}

// stored is the model storedModel loaded, kept for the benchmarks that
// use it.
var stored struct {
	once sync.Once
	m    *Model
	err  error
}

// storedModel returns the model a server stored for a network, with
// KERNELRANK_RECALL_STORED=NETWORK:MODELS (NETWORK the network's
// directory, MODELS its --cache-dir's models/), nil without it.
func storedModel(b *testing.B) *Model {
	network, models, ok := strings.Cut(os.Getenv("KERNELRANK_RECALL_STORED"), ":")
	if !ok {
		return nil
	}
	stored.once.Do(func() {
		ctx := context.Background()
		ds, _, err := social.LoadDir(network, social.ImportOptions{})
		if err != nil {
			stored.err = err
			return
		}
		store, err := cache.NewDirStore(models)
		if err != nil {
			stored.err = err
			return
		}
		name, err := StoreName(Options{})
		if err != nil {
			stored.err = err
			return
		}
		version, err := store.Current(ctx, name)
		if err != nil {
			stored.err = err
			return
		}
		md, err := readMeta(ctx, store, name, version)
		if err != nil {
			stored.err = err
			return
		}
		stored.m, stored.err = Load(ctx, store, name, version, ds, md.DataVersion)
	})
	if stored.err != nil {
		b.Fatal(stored.err)
	}
	return stored.m
}

// BenchmarkStoredGroupRanking ranks the top 50 candidate groups of users
// of a stored model (storedModel; skipped without it) on demand, an op
// 200 users drawn with PCG(3, 3), by the mklr and the learned group
// scorers (whichever the model chose), with the large groups' sums kept
// with the model ("sums") and without them ("members": one entry a
// member, or whole rows of f(u, .) and K(u, .) once the candidates'
// members exceed n/4, as before the sums). Run with -cpu 1.
func BenchmarkStoredGroupRanking(b *testing.B) {
	m := storedModel(b)
	if m == nil {
		b.Skip("KERNELRANK_RECALL_STORED not set")
	}
	m = m.WithCandidates()
	if m.groupWeights == nil { // learned not chosen: weights of every sign
		m.groupWeights = []float64{0.5, 1, -0.3, 0, 0.7, 0.4, 0.1}
	}
	for _, scorer := range []string{GroupMKLR, GroupLearned} {
		for _, path := range []string{"sums", "members"} {
			b.Run(scorer+"/"+path, func(b *testing.B) {
				c := *m
				c.groupScorer, c.groupPerUser = scorer, false
				if path == "members" {
					c.large = &largeGroups{min: math.MaxInt}
				}
				c.largeSums() // built once, outside the timing
				rng := rand.New(rand.NewPCG(3, 3))
				buf := getBuffers(c.ds.N(), len(c.members))
				users, rows := make([]int, 200), 0
				for i := range users {
					users[i] = rng.IntN(c.ds.N())
					if c.rowsFor(users[i], c.groupCandidates(users[i], DefaultTopK, buf.seen, buf.acc)) {
						rows++ // read whole rows
					}
				}
				cpu := cputime.Process()
				for b.Loop() {
					for _, u := range users {
						c.rankGroupsWith(u, DefaultTopK, buf, false)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N*len(users)), "ms/user")
				b.ReportMetric(float64((cputime.Process()-cpu).Microseconds())/1000/float64(b.N*len(users)), "cpu-ms/user")
				b.ReportMetric(float64(rows)/float64(len(users)), "rows/user")
			})
		}
	}
}

// BenchmarkStoredRankRange precomputes one shard (DefaultShardUsers
// users from user 0) of a stored model (storedModel; skipped without it)
// as the served model ranks them (with its candidates above
// DefaultPrecomputeMaxUsers), reported a user: with -cpuprofile, where a
// retrain's precomputation spends its time.
func BenchmarkStoredRankRange(b *testing.B) {
	m := storedModel(b)
	if m == nil {
		b.Skip("KERNELRANK_RECALL_STORED not set")
	}
	if m.ds.N() > DefaultPrecomputeMaxUsers {
		m = m.WithCandidates()
	}
	users := min(DefaultShardUsers, m.ds.N())
	cpu := cputime.Process()
	for b.Loop() {
		if _, err := m.rankRange(context.Background(), 0, users, DefaultTopK, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N*users), "ms/user")
	b.ReportMetric(float64((cputime.Process()-cpu).Microseconds())/1000/float64(b.N*users), "cpu-ms/user")
	b.Logf("friend scorer %s, group scorer %s", m.scorer, m.groupScorer)
}

// envInt returns the integer in the environment variable name, def when
// it is unset.
func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return n
}

// BenchmarkCandidateRecall reports candidateRecall on the real data sets
// (run with -benchtime 1x; YouTube trains for minutes) and, with
// KERNELRANK_RECALL_STORED=NETWORK:MODELS, on the model a server stored
// for the network in directory NETWORK (its --cache-dir's models/), for
// KERNELRANK_RECALL_USERS users (default 500): the generated networks
// too large to train here.
func BenchmarkCandidateRecall(b *testing.B) {
	users := envInt(b, "KERNELRANK_RECALL_USERS", 500)
	report := func(b *testing.B, m *Model) {
		for b.Loop() {
			for _, k := range []int{10, 50} {
				friends, groups, fs, gs := candidateRecall(m, users, k)
				b.ReportMetric(friends, fmt.Sprintf("friend-recall@%d", k))
				b.ReportMetric(groups, fmt.Sprintf("group-recall@%d", k))
				b.ReportMetric(fs, fmt.Sprintf("friend-cands@%d", k))
				b.ReportMetric(gs, fmt.Sprintf("group-cands@%d", k))
			}
			b.Logf("friend scorer %s, group scorer %s", m.scorer, m.groupScorer)
		}
	}
	if m := storedModel(b); m != nil {
		b.Run("stored", func(b *testing.B) { report(b, m) })
		return
	}
	for _, name := range []string{"blogcatalog", "youtube"} {
		b.Run(name, func(b *testing.B) {
			ds := socialtest.Load(b, name, social.ImportOptions{})
			m, err := Train(context.Background(), ds, ds.FullView(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			report(b, m)
		})
	}
}

// Over its candidates, a user's friend ranking is the exact one whenever
// the candidates hold the exact top k, under every scorer; the candidates
// never hold u or u's friends, are padded to k, and the scratch is left
// clear. communities: friends live in groups of 8 and tags are noise, so
// two hops often miss the exact top k; pairedGroups: group co-members
// cover most users.
func TestCandidateRankingMatchesExact(t *testing.T) {
	const k = 10
	covered := map[string]int{}
	for _, ds := range []*social.Dataset{communities(t), pairedGroups(t)} {
		m := trainT(t, ds, Options{}).WithCandidates()
		n := m.ds.N()
		seen, acc := make([]bool, n), make([]float64, n)
		for _, scorer := range Scorers {
			c := *m
			c.scorer = scorer
			for u := range n {
				cand := c.friendCandidates(u, k, seen, acc)
				if len(cand) < min(k, n-1-len(c.friends[u])) {
					t.Fatalf("%s: user %d has %d candidates, want at least %d", scorer, u, len(cand), k)
				}
				for _, v := range cand {
					if v == u || contains(c.friends[u], v) {
						t.Fatalf("%s: user %d: candidate %d is the user or a friend", scorer, u, v)
					}
				}
				exact, exactScores := c.rankFriends(u, k, make([]float64, n), nil)
				got, scores := c.rankCandidates(u, k, seen, acc)
				if slices.Contains(seen, true) || slices.ContainsFunc(acc, func(x float64) bool { return x != 0 }) {
					t.Fatalf("%s: user %d: scratch left dirty", scorer, u)
				}
				if len(got) != k {
					t.Fatalf("%s: user %d: %d ranked, want %d", scorer, u, len(got), k)
				}
				if slices.ContainsFunc(exact, func(v int) bool { return !slices.Contains(cand, v) }) {
					continue
				}
				covered[scorer]++
				if !slices.Equal(got, exact) {
					t.Fatalf("%s: user %d: candidate ranking %v, exact %v", scorer, u, got, exact)
				}
				for r := range got {
					// Adamic-Adar tie-breaks differ, by at most 2e-9 of its top score.
					if math.Abs(scores[r]-exactScores[r]) > 1e-8*math.Max(1, math.Abs(exactScores[0])) {
						t.Fatalf("%s: user %d: score %d is %v, exact %v", scorer, u, r, scores[r], exactScores[r])
					}
				}
			}
		}
	}
	for _, scorer := range Scorers {
		t.Logf("%s: candidates cover the exact top %d of %d of 320 users", scorer, k, covered[scorer])
		if covered[scorer] < 10 {
			t.Errorf("%s: candidates cover the exact top %d of only %d users", scorer, k, covered[scorer])
		}
	}
}

// A user with a friend of high degree keeps FriendCandidateMax
// candidates: those tied to it through more or smaller hubs first (a
// small friend's friends, a small group's members), then the lower tie
// ranks among the hub's friends; padded to k with the most befriended,
// the scratch left clear. The model holds only what candidates read.
func TestFriendCandidatesBounded(t *testing.T) {
	n := FriendCandidateMax + 500
	friends := make([][]int, n)
	link := func(a, b int) {
		friends[a] = append(friends[a], b)
		friends[b] = append(friends[b], a)
	}
	link(0, 1) // user 0: friends 1 (the hub, everyone's friend) and 2
	link(0, 2)
	for v := 2; v < n; v++ {
		link(1, v)
	}
	for v := 3; v <= 12; v++ {
		link(2, v)
	}
	for v := range friends {
		slices.Sort(friends[v])
	}
	groups := make([][]int, n)
	groups[0], groups[13], groups[14] = []int{0}, []int{0}, []int{0}
	rng := rand.New(rand.NewPCG(3, 3))
	m := &Model{relations: relations{friends: friends, groups: groups, members: [][]int{{0, 13, 14}}}, userTie: rng.Perm(n), groupTie: []int{0}}
	m.candidates = &candidates{popular: byDescending(n, func(u int) int { return len(friends[u]) }, m.userTie)}
	seen, acc := make([]bool, n), make([]float64, n)

	got := m.friendCandidates(0, 10, seen, acc)
	if len(got) != FriendCandidateMax {
		t.Fatalf("%d candidates, want %d", len(got), FriendCandidateMax)
	}
	// Everyone from 3 on is two hops away through the hub; 3 to 14 have
	// more weight, the others the hub's alone: the lowest tie ranks win.
	var hubOnly []int
	for v := 15; v < n; v++ {
		hubOnly = append(hubOnly, v)
	}
	slices.SortFunc(hubOnly, func(a, b int) int { return m.userTie[a] - m.userTie[b] })
	want := append([]int{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, hubOnly[:FriendCandidateMax-12]...)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("kept %v..., want %v...", got[:20], want[:20])
	}
	if slices.Contains(seen, true) || slices.ContainsFunc(acc, func(x float64) bool { return x != 0 }) {
		t.Fatal("scratch left dirty")
	}
	// Asked for more than the bound: padded with the most befriended.
	if got := m.friendCandidates(0, FriendCandidateMax+100, seen, acc); len(got) != FriendCandidateMax+100 || slices.ContainsFunc(got, func(v int) bool { return v < 3 }) {
		t.Errorf("%d padded candidates (or the user or a friend among them), want %d", len(got), FriendCandidateMax+100)
	}
}

// localGroups: 30 communities of 8 users, each pair inside friends with
// probability 0.6, 20 random friendships across; each community has two
// groups, which each of its users joins with probability 0.5 (at least
// one): a user's friends and friends of friends reach few of the 60
// groups.
func localGroups(t *testing.T) *social.Dataset {
	rng := rand.New(rand.NewPCG(5, 5))
	const communities, size = 30, 8
	n := communities * size
	seen := map[[2]int]bool{}
	var edges [][2]int
	add := func(a, b int) {
		if e := [2]int{min(a, b), max(a, b)}; a != b && !seen[e] {
			seen[e] = true
			edges = append(edges, e)
		}
	}
	var memberships [][2]int
	for u := range n {
		c := u / size
		for v := u + 1; v < (c+1)*size; v++ {
			if rng.Float64() < 0.6 {
				add(u, v)
			}
		}
		first := rng.Float64() < 0.5
		if first {
			memberships = append(memberships, [2]int{u, 2 * c})
		}
		if !first || rng.Float64() < 0.5 {
			memberships = append(memberships, [2]int{u, 2*c + 1})
		}
	}
	for range 20 {
		add(rng.IntN(n), rng.IntN(n))
	}
	return syntheticGroups(t, n, edges, func(u int) []string { return []string{fmt.Sprint(u % 5)} }, func(int) []string { return nil }, memberships)
}

// A group's score is the same whichever groups are ranked with it, from
// whole rows or one member at a time, under every group scorer (the
// learned one's weights carry its scales); so the ranking of the
// candidate groups on demand is the exact ranking of every group
// restricted to them. The candidates are sorted, never the user's own
// groups, padded to k, and the scratch is left clear.
func TestGroupCandidateRankingMatchesExact(t *testing.T) {
	const k = 5
	m := trainT(t, localGroups(t), Options{Learner: "uniform"}).WithCandidates()
	if m.groupWeights == nil { // learned not chosen: weights of every sign
		m.groupWeights = []float64{0.5, 1, -0.3, 0.2, 0.7, 0.4, -0.1}
	}
	n, ng := m.ds.N(), len(m.members)
	if !m.groupPerUser {
		t.Fatal("a small network's learned group scorer should scale its signals per user")
	}
	// Scaled per user, the learned scorer ranks every group even with
	// candidates, and each signal but size peaks at magnitude 1 over the
	// groups a user is not in.
	pu := *m
	pu.groupScorer = GroupLearned
	x := make([]float64, len(groupFeatures)*ng)
	for u := range n {
		full := make([]float64, ng)
		pu.GroupScores(u, full)
		exact, _ := pu.rankGroups(u, k, full)
		if got, _ := pu.topGroups(u, k); !slices.Equal(got, exact) {
			t.Fatalf("per-user scales: user %d: candidate ranking %v, exact %v", u, got, exact)
		}
		f := make([]float64, n)
		pu.strength.ScoreAll(u, f)
		pu.features(pu.subject(u), nil, true, f, nil, x)
		for s := range groupFeatures {
			top := 0.0
			for g, v := range x[s*ng : (s+1)*ng] {
				if !contains(pu.groups[u], g) {
					top = math.Max(top, math.Abs(v))
				}
			}
			if s != sigSize && top != 0 && math.Abs(top-1) > 1e-12 {
				t.Fatalf("per-user scales: user %d: signal %s peaks at %v", u, groupFeatures[s], top)
			}
		}
	}
	// The rest is the candidate path, taken by networks whose learned
	// scorer takes its signals as they are.
	m.groupPerUser = false
	seen, acc, gacc := make([]bool, n), make([]float64, n), make([]float64, ng)
	covered, ranked, size, proper := 0, 0, 0, 0
	// Each scorer as it is, and those with the regularised Laplacian's
	// signal pushed as above RegLaplacianMaxEntries.
	type variant struct {
		scorer string
		push   bool
	}
	var variants []variant
	for _, scorer := range GroupScorers {
		variants = append(variants, variant{scorer, false})
		if scorer == GroupRegLaplacian || scorer == GroupLearned {
			variants = append(variants, variant{scorer, true})
		}
	}
	for _, vr := range variants {
		scorer := vr.scorer
		if scorer == GroupRegLaplacian && m.regLap == nil {
			t.Fatal("no regularised Laplacian: its scorer is untested")
		}
		ranked += n
		c := *m
		c.groupScorer = scorer
		c.regLapGroups = &regLapGroups{push: vr.push}
		for u := range n {
			full := make([]float64, ng)
			c.GroupScores(u, full)
			gs := c.groupCandidates(u, k, seen, acc)
			size += len(gs)
			if len(gs) < ng-len(c.groups[u]) {
				proper++
			}
			if !slices.IsSorted(gs) || len(slices.Compact(slices.Clone(gs))) != len(gs) || len(gs) < min(k, ng-len(c.groups[u])) ||
				slices.ContainsFunc(gs, func(g int) bool { return contains(c.groups[u], g) }) {
				t.Fatalf("%s: user %d: candidates %v (groups %v)", scorer, u, gs, c.groups[u])
			}
			if slices.Contains(seen, true) || slices.ContainsFunc(acc, func(x float64) bool { return x != 0 }) {
				t.Fatalf("%s: user %d: scratch left dirty", scorer, u)
			}
			for _, rows := range []bool{false, true} {
				f := make([]float64, n)
				if rows {
					c.strength.ScoreAll(u, f)
				}
				got := make([]float64, len(gs))
				c.scoreGroupList(scorer, c.subject(u), gs, rows, f, gacc, got, nil)
				for i, g := range gs {
					if math.Abs(got[i]-full[g]) > 1e-9*math.Max(1, math.Abs(full[g])) {
						t.Fatalf("%s: user %d, rows %v: group %d scores %v, over every group %v", scorer, u, rows, g, got[i], full[g])
					}
				}
				if slices.ContainsFunc(gacc, func(x float64) bool { return x != 0 }) {
					t.Fatalf("%s: user %d: group scratch left dirty", scorer, u)
				}
			}
			exact, _ := c.rankGroups(u, ng, full)
			restricted := slices.DeleteFunc(slices.Clone(exact), func(g int) bool { return !slices.Contains(gs, g) })
			got, _ := c.topGroups(u, k)
			if !slices.Equal(got, restricted[:min(k, len(restricted))]) {
				t.Fatalf("%s: user %d: candidate ranking %v, exact restricted %v", scorer, u, got, restricted[:min(k, len(restricted))])
			}
			if slices.Equal(got, exact[:min(k, len(exact))]) {
				covered++
			}
		}
	}
	t.Logf("%.1f candidate groups a user of %d; the candidate ranking is the exact top %d for %d of %d users x scorers", float64(size)/float64(ranked), ng, k, covered, ranked)
	if proper < ranked*3/4 {
		t.Errorf("%d of %d users x scorers have fewer candidate groups than groups: the candidates do not test subsets", proper, ranked)
	}
}
