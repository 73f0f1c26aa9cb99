package recommend

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/social"
)

// pairedGroups: 160 users with random friendships that say nothing about
// the groups, and 16 groups in 8 pairs: each user picks a pair and joins
// both of its groups, and one random group besides. A held-out membership
// of one group of a pair is found by the other (the co-members signal);
// the friend votes see noise.
func pairedGroups(t *testing.T) *social.Dataset {
	rng := rand.New(rand.NewPCG(9, 9))
	const n = 160
	seen := map[[2]int]bool{}
	var edges [][2]int
	for len(edges) < 3*n {
		a, b := rng.IntN(n), rng.IntN(n)
		if e := [2]int{min(a, b), max(a, b)}; a != b && !seen[e] {
			seen[e] = true
			edges = append(edges, e)
		}
	}
	var memberships [][2]int
	for u := range n {
		p := rng.IntN(8)
		memberships = append(memberships, [2]int{u, 2 * p}, [2]int{u, 2*p + 1})
		if g := rng.IntN(16); g/2 != p {
			memberships = append(memberships, [2]int{u, g})
		}
	}
	return syntheticGroups(t, n, edges, func(u int) []string { return []string{fmt.Sprint(u % 5)} }, func(int) []string { return nil }, memberships)
}

// TestListwiseFitRecoversWeights draws each user's held-out group from
// the conditional logit with known weights and fits them back; and where
// one feature is the truth (the held-out group is the one where it is
// largest), that feature gets nearly all the weight.
func TestListwiseFitRecoversWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const users, cands, d = 4000, 8, 3
	truth := []float64{3, 0, -1.5}
	draw := func(label func(x []float64) int) ([]float64, []bool, []int) {
		x, pos, start := make([]float64, users*cands*d), make([]bool, users*cands), []int{0}
		for i := range users {
			block := x[i*cands*d : (i+1)*cands*d]
			for j := range block {
				block[j] = 2*rng.Float64() - 1
			}
			pos[i*cands+label(block)] = true
			start = append(start, (i+1)*cands)
		}
		return x, pos, start
	}
	x, pos, start := draw(func(block []float64) int {
		p := make([]float64, cands)
		for c := range p {
			p[c] = math.Exp(truth[0]*block[c*d] + truth[1]*block[c*d+1] + truth[2]*block[c*d+2])
		}
		r, c := rng.Float64()*sumOf(p), 0
		for ; r > p[c] && c < cands-1; c++ {
			r -= p[c]
		}
		return c
	})
	w, err := fitListwise(x, pos, start, d, 1e-6, nil)
	if err != nil {
		t.Fatal(err)
	}
	for j := range truth {
		// The standard error with 4,000 draws is about 0.05.
		if math.Abs(w[j]-truth[j]) > 0.2 {
			t.Errorf("weights %v, want %v", w, truth)
		}
	}
	x, pos, start = draw(func(block []float64) int {
		best := 0
		for c := range cands {
			if block[c*d] > block[best*d] {
				best = c
			}
		}
		return best
	})
	if w, err = fitListwise(x, pos, start, d, groupLambda, nil); err != nil {
		t.Fatal(err)
	}
	if w[0] < 20 || math.Abs(w[1]) > w[0]/20 || math.Abs(w[2]) > w[0]/20 {
		t.Errorf("weights %v: feature 0 alone decides", w)
	}
	if _, err := fitListwise(x[:d], pos, start, d, 1, nil); !errors.Is(err, learners.ErrInput) {
		t.Errorf("mismatched sizes: %v", err)
	}
}

func sumOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// TestGroupSelectionPicksTheLearnedCombination: on paired groups the
// learned combination validates far above every vote, puts its largest
// weight on the co-members signal, and serves its own scores.
func TestGroupSelectionPicksTheLearnedCombination(t *testing.T) {
	ds := pairedGroups(t)
	var vm *Model
	var held [][2]int
	validationHook = func(m *Model, _, h [][2]int) { vm, held = m, h }
	defer func() { validationHook = nil }()
	m := trainT(t, ds, Options{Learner: "uniform"})
	sel := m.Stats().GroupSelection
	t.Logf("%+v", sel)
	if sel.Scorer != GroupLearned || m.GroupScorer() != GroupLearned || sel.Reason != "" || sel.Users == 0 {
		t.Fatalf("selection %+v", sel)
	}
	var learned GroupValidation
	for _, c := range sel.Candidates {
		if c.Scorer == GroupLearned {
			learned = c
		}
	}
	for _, c := range sel.Candidates {
		if c.Scorer != GroupLearned && c.MAP > learned.MAP-0.2 {
			t.Errorf("%s validation MAP %.3f, learned %.3f: not clearly below", c.Scorer, c.MAP, learned.MAP)
		}
	}
	top := slices.MaxFunc(sel.Weights, func(a, b GroupWeight) int { return int(math.Copysign(1, a.Weight*a.Scale-b.Weight*b.Scale)) })
	if top.Feature != "co-members" || !slices.Equal(m.groupWeights, sel.learnedWeights()) {
		t.Errorf("weights %+v (served %v): co-members should lead", sel.Weights, m.groupWeights)
	}

	// Held out: 15% of the memberships, none visible to the validation
	// model, each user keeping one; the served model sees them all.
	want := int(math.Round(0.15 * float64(len(ds.Memberships))))
	if len(held) != want || sel.Memberships != want {
		t.Fatalf("%d held out (selection says %d), want %d", len(held), sel.Memberships, want)
	}
	for _, e := range held {
		if contains(vm.GroupsOf(e[0]), e[1]) || !contains(m.GroupsOf(e[0]), e[1]) {
			t.Errorf("held-out %v visible to the validation model, or not to the served one", e)
		}
	}
	seen := 0
	for u := range ds.N() {
		if len(vm.GroupsOf(u)) == 0 {
			t.Errorf("user %d keeps no membership", u)
		}
		seen += len(vm.GroupsOf(u))
	}
	if seen != len(ds.Memberships)-len(held) {
		t.Errorf("the validation model sees %d memberships, want %d", seen, len(ds.Memberships)-len(held))
	}

	// Served: w.x of the features, in that order.
	ng := len(ds.Groups)
	for _, u := range []int{0, 77, 159} {
		f, x, want := make([]float64, ds.N()), make([]float64, len(groupFeatures)*ng), make([]float64, ng)
		m.ScoreAll(u, f)
		m.features(m.subject(u), nil, true, f, nil, x)
		for s, w := range m.groupWeights {
			for g := range ng {
				want[g] += w * x[s*ng+g]
			}
		}
		got, err := m.RecommendGroups(u, ng)
		if err != nil {
			t.Fatal(err)
		}
		last := math.Inf(1)
		for _, rec := range got.Items {
			g, _ := ds.GroupIndex(rec.Group)
			if math.Abs(rec.Score-want[g]) > 1e-12 || rec.Score > last || contains(m.GroupsOf(u), g) {
				t.Errorf("user %d: %s scores %v after %v, want %v", u, rec.Group, rec.Score, last, want[g])
			}
			last = rec.Score
		}
		if len(got.Items) != ng-len(m.GroupsOf(u)) {
			t.Errorf("user %d: %d groups ranked, want %d", u, len(got.Items), ng-len(m.GroupsOf(u)))
		}
	}

	// Deterministic given the seed.
	again := trainT(t, ds, Options{Learner: "uniform"}).Stats().GroupSelection
	sel.Took, again.Took = 0, 0
	if !slices.Equal(sel.Candidates, again.Candidates) || !slices.Equal(sel.Weights, again.Weights) || sel.Scorer != again.Scorer {
		t.Errorf("%+v\nvs %+v", sel, again)
	}
}

// PairedGroups and GroupWeights serve the tests of package recommend_test.
func PairedGroups(t *testing.T) *social.Dataset { return pairedGroups(t) }
func GroupWeights(m *Model) []float64           { return m.groupWeights }

// TestGroupBadInput: GroupRanking and RecommendGroups of a learned model
// reject an unknown user and k < 1 as before; a huge k lists every
// candidate; a group scorer cannot be fixed to learned or an unknown name.
func TestGroupBadInput(t *testing.T) {
	ds := pairedGroups(t)
	m := trainT(t, ds, Options{Learner: "uniform"})
	for _, c := range [][2]int{{-1, 3}, {ds.N(), 3}, {0, 0}, {0, -2}} {
		if _, err := m.GroupRanking(c[0], c[1]); !errors.Is(err, learners.ErrInput) {
			t.Errorf("GroupRanking(%d, %d): %v", c[0], c[1], err)
		}
		if _, err := m.RecommendGroups(c[0], c[1]); !errors.Is(err, learners.ErrInput) {
			t.Errorf("RecommendGroups(%d, %d): %v", c[0], c[1], err)
		}
	}
	all, err := m.GroupRanking(5, math.MaxInt32)
	if err != nil || len(all) != len(ds.Groups)-len(m.GroupsOf(5)) {
		t.Errorf("huge k: %d groups (%v), want %d", len(all), err, len(ds.Groups)-len(m.GroupsOf(5)))
	}
	for _, s := range []string{GroupLearned, "nope"} {
		if _, err := Train(context.Background(), ds, ds.FullView(), Options{Learner: "uniform", Select: SelectOptions{GroupScorer: s}}); !errors.Is(err, learners.ErrInput) {
			t.Errorf("fixed group scorer %q: %v", s, err)
		}
	}
}

// TestChooseGroupScorer pins the choice rule on constructed per-user
// numbers (candidates in GroupScorers order: mklr, friend-vote,
// adamic-adar, reg-laplacian, learned).
func TestChooseGroupScorer(t *testing.T) {
	learned := slices.Index(GroupScorers, GroupLearned)
	fv, aa, rl := slices.Index(GroupScorers, GroupFriendVote), slices.Index(GroupScorers, GroupAdamicAdar), slices.Index(GroupScorers, GroupRegLaplacian)
	type numbers struct{ ap, p1 []float64 }
	choose := func(cands map[int]numbers, preferred int) (string, map[string]GroupValidation) {
		ap, p1 := make([][]float64, len(GroupScorers)), make([][]float64, len(GroupScorers))
		for c, v := range cands {
			ap[c], p1[c] = v.ap, v.p1
		}
		best, vals := chooseGroupScorer(ap, p1, preferred)
		byName := map[string]GroupValidation{}
		for _, v := range vals {
			byName[v.Scorer] = v
		}
		if len(vals) != len(cands) {
			t.Errorf("%d candidates reported, want %d", len(vals), len(cands))
		}
		return GroupScorers[best], byName
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	// The learned utilities are .1, .8, .1, .8 (MAP .4, P@1 .5).
	base := numbers{[]float64{.2, .6, .2, .6}, []float64{0, 1, 0, 1}}

	// Adamic-Adar gains .2, 0, .2, 0 in (AP + P@1)/2: mean .1, standard
	// error sqrt(.04/3/4) = .057735 < .1, so it replaces learned.
	got, vals := choose(map[int]numbers{learned: base, aa: {[]float64{.6, .6, .6, .6}, []float64{0, 1, 0, 1}}}, learned)
	if v := vals[GroupAdamicAdar]; got != GroupAdamicAdar || !near(v.Gain, .1) || !near(v.SE, math.Sqrt(.04/3/4)) || !near(v.MAP, .6) || !near(v.P1, .5) {
		t.Errorf("clear gain: chose %s, %+v", got, v)
	}
	if v := vals[GroupLearned]; v.Gain != 0 || v.SE != 0 || !near(v.MAP, .4) || !near(v.P1, .5) {
		t.Errorf("learned's own numbers %+v", v)
	}

	// Gains .7, -.5, .7, -.5: mean .1 but standard error
	// sqrt(1.44/3/4) = .3464; learned stays, though Adamic-Adar's MAP
	// (.6) is higher and its P@1 equal (the old best-MAP rule's pick).
	noisy := numbers{[]float64{.6, .6, .6, .6}, []float64{1, 0, 1, 0}}
	got, vals = choose(map[int]numbers{learned: base, aa: noisy}, learned)
	if v := vals[GroupAdamicAdar]; got != GroupLearned || !near(v.Gain, .1) || !near(v.SE, math.Sqrt(1.44/3/4)) {
		t.Errorf("noisy gain: chose %s, %+v", got, v)
	}

	// Of two, only the clearly better may replace learned, even with a
	// lower mean than the noisy one.
	steady := numbers{[]float64{.4, .8, .4, .8}, []float64{0, 1, 0, 1}} // gains .1 each: standard error 0
	noisier := numbers{[]float64{1, .6, 1, .6}, []float64{1, 0, 1, 0}}  // gains .9, -.5: mean .2
	if got, _ := choose(map[int]numbers{learned: base, fv: steady, rl: noisier}, learned); got != GroupFriendVote {
		t.Errorf("one clear, one noisy gain: chose %s, want %s", got, GroupFriendVote)
	}
	// Both clear: the better mean.
	better := numbers{[]float64{.6, 1, .6, 1}, []float64{0, 1, 0, 1}} // gains .2 each
	if got, _ := choose(map[int]numbers{learned: base, fv: steady, rl: better}, learned); got != GroupRegLaplacian {
		t.Errorf("two clear gains: chose %s, want %s", got, GroupRegLaplacian)
	}

	// Without learned: the best (AP + P@1)/2, so P@1 counts as much as
	// MAP (friend-vote's MAP is higher, Adamic-Adar's sum), and a tie goes
	// to the earlier scorer.
	two := map[int]numbers{
		fv: {[]float64{.6, .5}, []float64{0, 0}}, // .55 + 0
		aa: {[]float64{.5, .5}, []float64{1, 0}}, // .5 + .5
	}
	if got, vals := choose(two, learned); got != GroupAdamicAdar || vals[GroupAdamicAdar].SE != 0 {
		t.Errorf("without learned: chose %s (%+v), want %s", got, vals, GroupAdamicAdar)
	}
	two[0] = two[aa]
	if got, _ := choose(two, -1); got != GroupMKLR {
		t.Errorf("tie: chose %s, want %s", got, GroupMKLR)
	}
}

// TestCrossFit: every item is scored repeats times, each time by weights
// fitted on the other half only (about half the items); the halvings
// are random but fixed by the seed; a failing fit stops it.
func TestCrossFit(t *testing.T) {
	const n, repeats = 7, 5
	run := func(seed uint64) [][]int {
		var trains [][]int // the items of each fit, in order
		scored := make([]int, n)
		err := crossFit(n, repeats, rand.New(rand.NewPCG(seed, 1)), func(train func(int) bool) ([]float64, error) {
			var items []int
			for i := range n {
				if train(i) {
					items = append(items, i)
				}
			}
			trains = append(trains, items)
			return []float64{float64(len(trains) - 1)}, nil
		}, func(i int, w []float64) {
			scored[i]++
			if fit := trains[int(w[0])]; slices.Contains(fit, i) {
				t.Errorf("item %d scored by a fit on %v", i, fit)
			}
			if int(w[0]) != len(trains)-1 {
				t.Errorf("item %d scored by fit %v, not the latest", i, w)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(trains) != 2*repeats {
			t.Fatalf("%d fits, want %d", len(trains), 2*repeats)
		}
		for r := range repeats {
			a, b := trains[2*r], trains[2*r+1]
			if len(a)+len(b) != n || len(a) < n/2 || len(b) < n/2 || slices.ContainsFunc(a, func(i int) bool { return slices.Contains(b, i) }) {
				t.Errorf("halving %d: %v and %v do not split %d items in two", r, a, b, n)
			}
		}
		for i, c := range scored {
			if c != repeats {
				t.Errorf("item %d scored %d times, want %d", i, c, repeats)
			}
		}
		return trains
	}
	a, b := run(3), run(3)
	if !slices.EqualFunc(a, b, slices.Equal) {
		t.Errorf("same seed, different halvings: %v vs %v", a, b)
	}
	if c := run(4); slices.EqualFunc(a, c, slices.Equal) {
		t.Errorf("seeds 3 and 4 halve alike: %v", a)
	}
	fail := errors.New("no fit")
	calls := 0
	if err := crossFit(n, repeats, rand.New(rand.NewPCG(1, 1)), func(func(int) bool) ([]float64, error) { calls++; return nil, fail }, func(int, []float64) {
		t.Error("scored after a failed fit")
	}); !errors.Is(err, fail) || calls != 1 {
		t.Errorf("failing fit: %v after %d calls", err, calls)
	}
}

// An offset of ln m on a row fits as m copies of the row: the sampling
// correction of the group fit is exact for a row standing for m others
// like it.
func TestListwiseOffsetCountsCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const users, cands, d = 300, 6, 3
	var x, xd, offset []float64
	var pos, posd []bool
	start, startd := []int{0}, []int{0}
	for range users {
		chosen := rng.IntN(cands)
		for c := range cands {
			row := []float64{2*rng.Float64() - 1, 2*rng.Float64() - 1, 2*rng.Float64() - 1}
			if c == chosen {
				row[0] += 0.8 // so the fit is not flat
			}
			m := 1
			if c != chosen && c%2 == 0 {
				m = 1 + rng.IntN(4)
			}
			x, pos, offset = append(x, row...), append(pos, c == chosen), append(offset, math.Log(float64(m)))
			for range m {
				xd, posd = append(xd, row...), append(posd, c == chosen)
			}
		}
		start, startd = append(start, len(pos)), append(startd, len(posd))
	}
	got, err := fitListwise(x, pos, start, d, groupLambda, offset)
	if err != nil {
		t.Fatal(err)
	}
	want, err := fitListwise(xd, posd, startd, d, groupLambda, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := fitListwise(x, pos, start, d, groupLambda, nil)
	if err != nil {
		t.Fatal(err)
	}
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-6 {
			t.Errorf("weights %v with offsets, %v with copies", got, want)
			break
		}
	}
	if math.Abs(plain[0]-want[0]) < 1e-3 {
		t.Errorf("without offsets %v, with copies %v: the test does not tell them apart", plain, want)
	}
	if _, err := fitListwise(x, pos, start, d, 1, offset[1:]); !errors.Is(err, learners.ErrInput) {
		t.Errorf("offsets of the wrong length: %v", err)
	}
}

// The pushed regularised-Laplacian signal (above RegLaplacianMaxEntries,
// forced here) is the exact one within the push's bound: each member v's
// K(u, v) is within regLapPushEps sqrt(d_u d_v), so a group's sum within
// that summed over its members; a user's top groups are the exact ones up
// to differences below twice the bound, and a folded user's signal (one push from its friends) is its
// model signal.
func TestRegLaplacianPushMatchesExactSums(t *testing.T) {
	ds := localGroups(t)
	m := trainT(t, ds, Options{Learner: "uniform"})
	if m.regLap == nil || m.regLapGroups.push {
		t.Fatal("a small network should have the exact regularised-Laplacian sums")
	}
	p := *m
	p.regLapGroups = &regLapGroups{push: true}
	n, ng := m.ds.N(), len(m.members)
	const cg = 1e-7 // the exact sums' CG tolerance, generously
	exact, pushed, folded := make([]float64, ng), make([]float64, ng), make([]float64, ng)
	friends, groups := ds.Adjacency()
	same := 0
	for u := range n {
		m.groupSignal(3, m.subject(u), nil, false, nil, nil, exact)
		p.groupSignal(3, p.subject(u), nil, false, nil, nil, pushed)
		most := 0.0 // the largest bound
		for g := range ng {
			bound := 0.0
			for _, v := range m.members[g] {
				bound += regLapPushEps * math.Sqrt(float64(len(m.friends[u])*len(m.friends[v])))
			}
			if math.Abs(exact[g]-pushed[g]) > bound+cg {
				t.Fatalf("user %d group %d: exact %v, pushed %v: more than %v apart", u, g, exact[g], pushed[g], bound)
			}
			most = math.Max(most, bound)
		}
		// The r-th group pushed is within twice the largest bound of the
		// r-th exact one; they differ only where the exact sums do by less.
		want, _ := m.rankGroups(u, 5, exact)
		got, _ := p.rankGroups(u, 5, pushed)
		for r := range want {
			if exact[got[r]] < exact[want[r]]-2*most-cg {
				t.Fatalf("user %d: pushed top %v, exact %v: rank %d's exact sum %v is below %v by more than %v", u, got, want, r, exact[got[r]], exact[want[r]], 2*most)
			}
		}
		if slices.Equal(got, want) {
			same++
		}
		fo, err := p.FoldIn(ds.Users[u].ID, ds.FoldUser(u, friends[u], groups[u], ds), nil)
		if err != nil {
			t.Fatal(err)
		}
		p.groupSignal(3, fo.who, nil, false, nil, nil, folded)
		for g := range ng {
			if math.Abs(folded[g]-pushed[g]) > 1e-3*math.Max(1, exact[g]) {
				t.Fatalf("user %d group %d: folded in %v, pushed %v (exact %v)", u, g, folded[g], pushed[g], exact[g])
			}
		}
	}
	t.Logf("the pushed signal ranks the top 5 groups as the exact sums for %d of %d users", same, n)
}
