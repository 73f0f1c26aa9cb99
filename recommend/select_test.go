package recommend

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/kernelrank/kernelrank/learners/kit/all"
	"github.com/kernelrank/kernelrank/social"
)

// synthetic writes a network in the kernelrank format and loads it: users
// u0..u(n-1) with the given tags and faves, and the friendships.
func synthetic(t *testing.T, n int, edges [][2]int, tags, faves func(u int) []string) *social.Dataset {
	return syntheticGroups(t, n, edges, tags, faves, nil)
}

// syntheticGroups is synthetic with memberships (user, group gK).
func syntheticGroups(t *testing.T, n int, edges [][2]int, tags, faves func(u int) []string, memberships [][2]int) *social.Dataset {
	t.Helper()
	dir := t.TempDir()
	var users, friends, groups strings.Builder
	for u := range n {
		b, err := json.Marshal(social.User{ID: fmt.Sprintf("u%d", u), Tags: tags(u), Faves: faves(u)})
		if err != nil {
			t.Fatal(err)
		}
		users.Write(append(b, '\n'))
	}
	for _, e := range edges {
		fmt.Fprintf(&friends, "u%d,u%d\n", e[0], e[1])
	}
	for _, e := range memberships {
		fmt.Fprintf(&groups, "u%d,g%d\n", e[0], e[1])
	}
	for name, text := range map[string]string{"users.jsonl": users.String(), "friends.csv": friends.String(), "memberships.csv": groups.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ds, _, err := social.LoadDir(dir, social.ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// communities: 20 groups of 8 users, each pair inside a group friends with
// probability 0.7, 40 random friendships across; every user has one random
// tag of 10, which says nothing about the friendships. Adamic-Adar finds
// the hidden friendships inside the groups; a pipeline that sees only the
// tags cannot.
func communities(t *testing.T) *social.Dataset {
	rng := rand.New(rand.NewPCG(7, 7))
	const n, size = 160, 8
	seen := map[[2]int]bool{}
	var edges [][2]int
	add := func(a, b int) {
		e := [2]int{min(a, b), max(a, b)}
		if a != b && !seen[e] {
			seen[e] = true
			edges = append(edges, e)
		}
	}
	for c := 0; c < n; c += size {
		for a := c; a < c+size; a++ {
			for b := a + 1; b < c+size; b++ {
				if rng.Float64() < 0.7 {
					add(a, b)
				}
			}
		}
	}
	for range 40 {
		add(rng.IntN(n), rng.IntN(n))
	}
	tag := make([]string, n)
	for u := range tag {
		tag[u] = fmt.Sprintf("t%d", rng.IntN(10))
	}
	return synthetic(t, n, edges, func(u int) []string { return []string{tag[u]} }, func(int) []string { return nil })
}

// sharedFaves: a sparse random graph (few common friends) where the two
// ends of each friendship share a favourite of their own, which stays when
// the friendship is held out: the faves kernel finds it, Adamic-Adar
// mostly cannot.
func sharedFaves(t *testing.T) *social.Dataset {
	rng := rand.New(rand.NewPCG(8, 8))
	const n = 160
	seen := map[[2]int]bool{}
	var edges [][2]int
	faves := make([][]string, n)
	for len(edges) < 400 {
		a, b := rng.IntN(n), rng.IntN(n)
		e := [2]int{min(a, b), max(a, b)}
		if a == b || seen[e] {
			continue
		}
		seen[e] = true
		edges = append(edges, e)
		name := fmt.Sprintf("p%d", len(edges))
		faves[a], faves[b] = append(faves[a], name), append(faves[b], name)
	}
	return synthetic(t, n, edges, func(int) []string { return nil }, func(u int) []string { return faves[u] })
}

func trainT(t *testing.T, ds *social.Dataset, opts Options) *Model {
	t.Helper()
	m, err := Train(context.Background(), ds, ds.FullView(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func candidate(t *testing.T, sel Selection, name string) Validation {
	t.Helper()
	for _, c := range sel.Candidates {
		if c.Scorer == name {
			return c
		}
	}
	t.Fatalf("no candidate %s in %+v", name, sel)
	return Validation{}
}

func TestSelectionPicksAdamicAdarOnAGraphSignal(t *testing.T) {
	ds := communities(t)
	m := trainT(t, ds, Options{Learner: "uniform", Kernels: social.KernelOptions{Kernels: []string{social.KernelTextual}}})
	sel := m.Stats().Selection
	t.Logf("%+v", sel)
	if sel.Scorer != ScorerAdamicAdar || m.FriendScorer() != ScorerAdamicAdar || sel.Reason != "" || sel.Edges == 0 || sel.Users == 0 {
		t.Fatalf("selection %+v", sel)
	}
	aa := candidate(t, sel, ScorerAdamicAdar)
	for _, name := range []string{ScorerMKLR, ScorerKernel} {
		if c := candidate(t, sel, name); c.MAP > aa.MAP-0.2 {
			t.Errorf("%s validation MAP %.3f, adamic-adar %.3f: not clearly below", name, c.MAP, aa.MAP)
		}
	}
	// The served ranking is Adamic-Adar's, ties by the combined kernel.
	n := ds.N()
	for _, u := range []int{0, 50, 159} {
		got, err := m.RecommendFriends(u, 10)
		if err != nil {
			t.Fatal(err)
		}
		aaOf := func(v int) float64 {
			s := 0.0
			for _, w := range intersect(m.FriendsOf(u), m.FriendsOf(v)) {
				s += 1 / math.Log(math.Max(2, float64(len(m.FriendsOf(w)))))
			}
			return s
		}
		// Best first by AA; none left out has a higher AA than the last.
		listed := map[int]bool{}
		last := math.Inf(1)
		for r, rec := range got.Items {
			v, _ := ds.UserIndex(rec.User)
			listed[v] = true
			if aaOf(v) > last+1e-9 || math.Abs(rec.Score-aaOf(v)) > 1e-8*math.Max(1, aaOf(v)) {
				t.Errorf("user %d rank %d: %s AA %v score %v after AA %v", u, r, rec.User, aaOf(v), rec.Score, last)
			}
			last = aaOf(v)
			if p := m.Strength(u, v); rec.Strength != p {
				t.Errorf("strength %v, mklr's %v", rec.Strength, p)
			}
		}
		for v := range n {
			if v != u && !contains(m.FriendsOf(u), v) && !listed[v] && aaOf(v) > last+1e-9 {
				t.Errorf("user %d: %d (AA %v) left out, the last listed has %v", u, v, aaOf(v), last)
			}
		}
	}
}

func TestSelectionPicksTheLearnedPipelineOnAContentSignal(t *testing.T) {
	ds := sharedFaves(t)
	m := trainT(t, ds, Options{})
	sel := m.Stats().Selection
	t.Logf("%+v", sel)
	if sel.Scorer != ScorerMKLR && sel.Scorer != ScorerKernel {
		t.Fatalf("selection %+v: want the learned pipeline", sel)
	}
	aa, best := candidate(t, sel, ScorerAdamicAdar), candidate(t, sel, sel.Scorer)
	if best.MAP < aa.MAP+0.3 {
		t.Errorf("%s validation MAP %.3f, adamic-adar %.3f: not clearly above", sel.Scorer, best.MAP, aa.MAP)
	}
	row := make([]float64, ds.N())
	m.FriendScores(3, row)
	want := make([]float64, ds.N())
	m.friendScores(sel.Scorer, 3, want, nil)
	if !slices.Equal(row, want) {
		t.Error("FriendScores is not the chosen scorer's")
	}
}

func TestValidationFriendshipsAreNeverTrainedOn(t *testing.T) {
	ds := sharedFaves(t)
	var held [][2]int
	var vm *Model
	validationHook = func(m *Model, h, _ [][2]int) { vm, held = m, h }
	defer func() { validationHook = nil }()
	m := trainT(t, ds, Options{Seed: 3})
	want := int(math.Round(0.1 * float64(len(ds.Friends))))
	if vm == nil || len(held) != want || m.Stats().Selection.Edges != want {
		t.Fatalf("%d held out (selection %+v), want %d", len(held), m.Stats().Selection, want)
	}
	// One training: the served model is the validation model's fit.
	if vm.Stats().Positive != len(ds.Friends)-len(held) || m.Stats().Positive != vm.Stats().Positive {
		t.Errorf("validation model trained on %d friendships, served on %d; want %d for both",
			vm.Stats().Positive, m.Stats().Positive, len(ds.Friends)-len(held))
	}
	vs, ms := vm.StrengthModel().State(), m.StrengthModel().State()
	if !slices.Equal(vs.Imports, ms.Imports) || !slices.Equal(vs.Alpha, ms.Alpha) || vs.Bias != ms.Bias || !slices.Equal(vs.BaseWeights, ms.BaseWeights) {
		t.Error("the served strength model is not the validation model's fit")
	}
	if !slices.Equal(vm.Stats().Weights, m.Stats().Weights) {
		t.Errorf("kernel weights %v served, %v fitted", m.Stats().Weights, vm.Stats().Weights)
	}
	for _, e := range held {
		if contains(vm.FriendsOf(e[0]), e[1]) || contains(vm.FriendsOf(e[1]), e[0]) {
			t.Errorf("held-out %v is a visible friendship of the validation model", e)
		}
		if len(vm.FriendsOf(e[0])) < 2 || len(vm.FriendsOf(e[1])) < 2 {
			t.Errorf("held-out %v leaves an end with fewer than 2 friends", e)
		}
		if !contains(m.FriendsOf(e[0]), e[1]) {
			t.Errorf("held-out %v is not a friendship of the served model", e)
		}
	}
	// The validation model's friend graph is exactly the rest.
	visible := 0
	for u := range ds.N() {
		visible += len(vm.FriendsOf(u))
	}
	if visible != 2*(len(ds.Friends)-len(held)) {
		t.Errorf("validation model sees %d friendships, want %d", visible/2, len(ds.Friends)-len(held))
	}
}

func TestSelectionIsDeterministic(t *testing.T) {
	ds := sharedFaves(t)
	opts := Options{Seed: 4}
	a, b := trainT(t, ds, opts), trainT(t, ds, opts)
	sa, sb := a.Stats().Selection, b.Stats().Selection
	sa.Took, sb.Took = 0, 0
	if !slices.Equal(sa.Candidates, sb.Candidates) || sa.Scorer != sb.Scorer || sa.Edges != sb.Edges || sa.Users != sb.Users {
		t.Fatalf("%+v vs %+v", sa, sb)
	}
	for u := range ds.N() {
		x, _ := a.FriendRanking(u, 20)
		y, _ := b.FriendRanking(u, 20)
		if !slices.Equal(x, y) {
			t.Fatalf("user %d: %v vs %v", u, x, y)
		}
	}
}

func TestSelectionNeedsEnoughFriendships(t *testing.T) {
	// A ring: nobody can lose a friend and keep 2.
	var edges [][2]int
	for u := range 30 {
		edges = append(edges, [2]int{u, (u + 1) % 30})
	}
	ds := synthetic(t, 30, edges, func(u int) []string { return []string{fmt.Sprint(u % 3)} }, func(int) []string { return nil })
	m := trainT(t, ds, Options{Learner: "uniform"})
	if sel := m.Stats().Selection; sel.Scorer != ScorerMKLR || !strings.Contains(sel.Reason, "only 0 friendships can be held out") {
		t.Errorf("selection %+v", sel)
	}
	if _, err := Train(context.Background(), ds, ds.FullView(), Options{Learner: "uniform", Select: SelectOptions{Scorer: "nope"}}); err == nil {
		t.Error("an unknown scorer trained")
	}
	for _, s := range Scorers {
		if m := trainT(t, ds, Options{Learner: "uniform", Select: SelectOptions{Scorer: s}}); m.FriendScorer() != s || m.Stats().Selection.Candidates != nil {
			t.Errorf("fixed %s: %s, %+v", s, m.FriendScorer(), m.Stats().Selection)
		}
	}
}
