package recommend_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/learners"
	_ "github.com/kernelrank/kernelrank/learners/kit/all"
	"github.com/kernelrank/kernelrank/learners/mklr"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

var (
	demoOnce sync.Once
	demoDS   *social.Dataset
	demoDir  string // removed by TestMain
	demoErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if demoDir != "" {
		os.RemoveAll(demoDir)
	}
	os.Exit(code)
}

// demoData is a smaller generated demo network (200 users, 12 groups: a
// third of the served one, a fifth of the time to generate), written to
// demoDir and read back.
func demoData(t *testing.T) *social.Dataset {
	t.Helper()
	demoOnce.Do(func() {
		d, err := demo.GenerateSocial(demo.DefaultSocialSeed, demo.SocialOptions{Users: 200, Groups: 12})
		if err != nil {
			demoErr = err
			return
		}
		if demoDir, demoErr = os.MkdirTemp("", "recommend-demo"); demoErr != nil {
			return
		}
		if demoErr = d.WriteDir(demoDir); demoErr != nil {
			return
		}
		demoDS, _, demoErr = social.LoadDir(demoDir, social.ImportOptions{StopOnError: true})
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoDS
}

func train(t *testing.T, ds *social.Dataset, opts recommend.Options) *recommend.Model {
	t.Helper()
	m, err := recommend.Train(context.Background(), ds, ds.FullView(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// offset is the prior correction from the balanced training pairs to the
// n(n-1)/2 user pairs, of which st.Positive are friends:
// ln(pos/neg) + ln((pairs - pos)/pos).
func offset(st recommend.Stats, n int) float64 {
	pos, neg, pairs := float64(st.Positive), float64(st.Negative), float64(n*(n-1)/2)
	return math.Log(pos/neg) + math.Log((pairs-pos)/pos)
}

func index(t *testing.T, ds *social.Dataset, id string) int {
	t.Helper()
	u, ok := ds.UserIndex(id)
	if !ok {
		t.Fatalf("no user %q", id)
	}
	return u
}

// TestFriendRecommendations checks the friend list against a brute-force
// ranking of f over every candidate, and each explanation against the
// kernels it names.
func TestFriendRecommendations(t *testing.T) {
	ds := demoData(t)
	m := train(t, ds, recommend.Options{})
	st := m.Stats()
	// The strength model is the validation model's, fitted without the
	// held-out friendships.
	if st.Learner != "alignf" || st.Imports == 0 || st.Positive != len(ds.Friends)-st.Selection.Edges || st.Negative == 0 {
		t.Fatalf("stats %+v", st)
	}
	weight := map[string]float64{}
	total := 0.0
	for _, w := range st.Weights {
		if w.Weight < 0 {
			t.Errorf("alignf weight %s = %v < 0", w.Kernel, w.Weight)
		}
		weight[w.Kernel] = w.Weight
		total += w.Weight * w.Weight
	}
	if math.Abs(total-1) > 1e-9 {
		t.Errorf("alignf weights have squared norm %v, want 1", total)
	}
	gamma := map[string]float64{}
	for t, g := range m.StrengthModel().BaseWeights() {
		gamma[st.Weights[t].Kernel] = g
	}
	if len(gamma) != len(st.Weights) {
		t.Fatalf("%d base-kernel terms for %d kernels", len(gamma), len(st.Weights))
	}
	if _, ok := weight[social.KernelRegLaplacian]; ok {
		t.Error("the regularised Laplacian is among the learned kernels")
	}
	n := ds.N()
	for _, u := range []int{0, 17, 111, n - 1} {
		const k = 15
		got, err := m.RecommendFriends(u, k)
		if err != nil {
			t.Fatal(err)
		}
		friends := m.FriendsOf(u)
		var cands []int
		for v := range n {
			if v != u && !slices.Contains(friends, v) {
				cands = append(cands, v)
			}
		}
		f := func(v int) float64 { return m.Score(u, v) }
		sort.SliceStable(cands, func(a, b int) bool { return f(cands[a]) > f(cands[b]) })
		if len(got.Items) != k || got.Reason != "" {
			t.Fatalf("user %d: %d items, reason %q", u, len(got.Items), got.Reason)
		}
		for r, rec := range got.Items {
			v := index(t, ds, rec.User)
			if math.Abs(f(v)-f(cands[r])) > 1e-12 {
				t.Errorf("user %d rank %d: %s with f %v, brute force has f %v", u, r, rec.User, f(v), f(cands[r]))
			}
			if p := sigmoid(f(v) - offset(st, n)); math.Abs(rec.Score-f(v)) > 1e-9 || math.Abs(rec.Strength-p) > 1e-12 {
				t.Errorf("user %d, %s: score %v strength %v, want %v %v", u, rec.User, rec.Score, rec.Strength, f(v), p)
			}
			sum, named := 0.0, 0
			for c, part := range rec.Contributions {
				w, g := weight[part.Kernel], gamma[part.Kernel]
				if part.Weight != w || math.Abs(part.Part-w*part.Value) > 1e-15 || math.Abs(part.Term-g*part.Value) > 1e-15 {
					t.Errorf("contribution %+v, learned weight %v, term weight %v", part, w, g)
				}
				if want := g + m.StrengthModel().Gamma()*w; part.Coefficient != want {
					t.Errorf("%s: coefficient %v, want %v", part.Kernel, part.Coefficient, want)
				}
				if c > 0 && part.Relative > rec.Contributions[c-1].Relative {
					t.Errorf("contributions not largest relative first: %+v", rec.Contributions)
				}
				sum += part.Part
				named++
			}
			if named != len(weight) {
				t.Errorf("%d contributions for %d kernels", named, len(weight))
			}
			if want := m.Combined().At(u, v); math.Abs(sum-want) > 1e-12 || math.Abs(rec.Kernel-want) > 1e-12 {
				t.Errorf("contributions sum to %v, Kernel %v, combined kernel %v", sum, rec.Kernel, want)
			}
			var common []string
			for _, w := range friends {
				if slices.Contains(m.FriendsOf(v), w) {
					common = append(common, ds.Users[w].ID)
				}
			}
			if rec.CommonFriendCount != len(common) || !slices.Equal(rec.CommonFriends, common[:min(len(common), recommend.MaxListed)]) {
				t.Errorf("common friends %v (%d), want %v", rec.CommonFriends, rec.CommonFriendCount, common)
			}
		}
	}
	// k beyond the candidates returns them all.
	all, err := m.RecommendFriends(0, n)
	if err != nil || len(all.Items) != n-1-len(m.FriendsOf(0)) {
		t.Errorf("k = n: %d items (%v), want %d", len(all.Items), err, n-1-len(m.FriendsOf(0)))
	}
}

// TestFriendScoreParts pins that a friend's explanation adds up to its
// score, f(u, v) = intercept + pairs + the base kernels' terms, each part
// computed here from the strength model.
func TestFriendScoreParts(t *testing.T) {
	ds := demoData(t)
	m := train(t, ds, recommend.Options{Select: recommend.SelectOptions{Scorer: recommend.ScorerMKLR}})
	sm, k := m.StrengthModel(), m.Combined()
	if sm.Pair() != mklr.PairTensor || sm.Bias() == 0 {
		t.Fatalf("pair kernel %v, intercept %v: this test expects the default tensor pair kernel and an intercept", sm.Pair(), sm.Bias())
	}
	for _, u := range []int{0, 17, ds.N() - 1} {
		got, err := m.RecommendFriends(u, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range got.Items {
			v := index(t, ds, rec.User)
			pairs := 0.0
			for s, p := range sm.Imports() {
				pairs += sm.Alpha()[s] * (k.At(u, p.I)*k.At(v, p.J) + k.At(u, p.J)*k.At(v, p.I))
			}
			sum := rec.Intercept + rec.KernelTerm + rec.Pairs
			for _, c := range rec.Contributions {
				sum += c.Term
			}
			if rec.Intercept != sm.Bias() || rec.KernelTerm != 0 || math.Abs(rec.Pairs-pairs) > 1e-9 {
				t.Errorf("%d, %s: intercept %v kernel term %v pairs %v, want %v 0 %v", u, rec.User, rec.Intercept, rec.KernelTerm, rec.Pairs, sm.Bias(), pairs)
			}
			if math.Abs(sum-rec.Score) > 1e-9 || math.Abs(rec.LogOdds-rec.Score) > 1e-9 {
				t.Errorf("%d, %s: parts sum to %v, log-odds %v, score %v", u, rec.User, sum, rec.LogOdds, rec.Score)
			}
			checkRelative(t, m, u, rec, got.Items[0])
		}
	}
}

// checkRelative pins rec's parts relative to u's typical candidate: the
// typical f is the mean of f over u's candidates, the relative parts add
// up to f(u, v) less it, and two candidates' relative parts differ by the
// coefficient times their kernel values' difference (first is u's first
// recommendation).
func checkRelative(t *testing.T, m *recommend.Model, u int, rec, first recommend.FriendRec) {
	t.Helper()
	mean, n := 0.0, 0
	for c := range m.Dataset().N() {
		if c != u && !slices.Contains(m.FriendsOf(u), c) {
			mean += m.Score(u, c)
			n++
		}
	}
	mean /= float64(n)
	sum := rec.PairsRelative
	for _, c := range rec.Contributions {
		sum += c.Relative
		for _, d := range first.Contributions {
			if d.Kernel == c.Kernel && math.Abs((c.Relative-d.Relative)-c.Coefficient*(c.Value-d.Value)) > 1e-9 {
				t.Errorf("%s: relative %v and %v for values %v and %v, coefficient %v", c.Kernel, c.Relative, d.Relative, c.Value, d.Value, c.Coefficient)
			}
		}
	}
	if math.Abs(rec.TypicalLogOdds-mean) > 1e-9 || math.Abs(sum-(rec.LogOdds-mean)) > 1e-9 {
		t.Errorf("%d, %s: typical f %v, want %v; relative parts sum to %v, want %v", u, rec.User, rec.TypicalLogOdds, mean, sum, rec.LogOdds-mean)
	}
}

// TestGroupRecommendations checks s(g, u) as the expected number of
// friends among the members (1 a friend, the corrected sigmoid(f) for the
// others), computed here from Score, and the friends listed.
func TestGroupRecommendations(t *testing.T) {
	ds := demoData(t)
	m := train(t, ds, recommend.Options{Learner: "uniform", Select: recommend.SelectOptions{GroupScorer: recommend.GroupMKLR}})
	members := make([][]int, len(ds.Groups))
	for _, e := range ds.Memberships {
		members[e[1]] = append(members[e[1]], e[0])
	}
	for _, u := range []int{3, 150, 199} {
		got, err := m.RecommendGroups(u, 5)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{}
		var order []string
		for g, ms := range members {
			if slices.Contains(ms, u) {
				continue
			}
			s := 0.0
			for _, j := range ms {
				if slices.Contains(m.FriendsOf(u), j) {
					s++
				} else {
					s += sigmoid(m.Score(u, j) - offset(m.Stats(), ds.N()))
				}
			}
			want[ds.Groups[g]] = s
			order = append(order, ds.Groups[g])
		}
		sort.SliceStable(order, func(a, b int) bool { return want[order[a]] > want[order[b]] })
		if len(got.Items) != 5 {
			t.Fatalf("user %d: %d groups", u, len(got.Items))
		}
		for r, rec := range got.Items {
			if math.Abs(rec.Score-want[rec.Group]) > 1e-9 || math.Abs(rec.Score-want[order[r]]) > 1e-9 {
				t.Errorf("user %d rank %d: %s scores %v (want %v; brute force rank %d has %v)", u, r, rec.Group, rec.Score, want[rec.Group], r, want[order[r]])
			}
			if want := []recommend.GroupSignal{{Signal: recommend.GroupMKLR, Weight: 1, Value: rec.Score, Part: rec.Score}}; rec.Scorer != recommend.GroupMKLR || !slices.Equal(rec.Signals, want) {
				t.Errorf("%s: scorer %s signals %+v, want %+v", rec.Group, rec.Scorer, rec.Signals, want)
			}
			g, _ := ds.GroupIndex(rec.Group)
			var friends []string
			for _, j := range members[g] {
				if slices.Contains(m.FriendsOf(u), j) {
					friends = append(friends, ds.Users[j].ID)
				}
			}
			if rec.Members != len(members[g]) || rec.FriendCount != len(friends) || !slices.Equal(rec.Friends, friends[:min(len(friends), recommend.MaxListed)]) {
				t.Errorf("group %s: members %d friends %v (%d), want %d %v", rec.Group, rec.Members, rec.Friends, rec.FriendCount, len(members[g]), friends)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	ds := demoData(t)
	a, err := train(t, ds, recommend.Options{Seed: 5}).RecommendFriends(42, 20)
	if err != nil {
		t.Fatal(err)
	}
	b, err := train(t, ds, recommend.Options{Seed: 5}).RecommendFriends(42, 20)
	if err != nil {
		t.Fatal(err)
	}
	for r := range a.Items {
		if a.Items[r].User != b.Items[r].User || a.Items[r].Score != b.Items[r].Score {
			t.Fatalf("rank %d: %+v vs %+v", r, a.Items[r], b.Items[r])
		}
	}
}

// writeData writes a small data set in the kernelrank format.
func writeData(t *testing.T, users, friends, memberships string) *social.Dataset {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"users.jsonl": users, "friends.csv": friends, "memberships.csv": memberships} {
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

// A small network: a..f, "hub" is everyone's friend, "lone" has nothing.
const (
	smallUsers = `{"id":"a","tags":["jazz"]}
{"id":"b","tags":["jazz","rock"]}
{"id":"c","tags":["rock"]}
{"id":"d","tags":["folk"]}
{"id":"e","tags":["folk","jazz"]}
{"id":"f","places":["paris"]}
{"id":"hub"}
{"id":"lone"}
`
	smallFriends = "a,b\nb,c\nc,d\nd,e\ne,a\na,c\nhub,a\nhub,b\nhub,c\nhub,d\nhub,e\nhub,f\nf,a\n"
)

func TestEmptyAnswersSayWhy(t *testing.T) {
	ds := writeData(t, smallUsers, smallFriends, "a,g1\nb,g1\nc,g2\nhub,g1\nhub,g2\n")
	m := train(t, ds, recommend.Options{Negatives: learnersNegatives()})
	for _, c := range []struct {
		user, want string
		groups     bool
	}{
		{"lone", "user lone has no friends, groups, photos, tags, places, faves or comments", false},
		{"lone", "user lone has no friends", true},
		{"hub", "user hub is in every group", true},
	} {
		u := index(t, ds, c.user)
		var items int
		var reason string
		if c.groups {
			g, err := m.RecommendGroups(u, 3)
			if err != nil {
				t.Fatal(err)
			}
			items, reason = len(g.Items), g.Reason
		} else {
			f, err := m.RecommendFriends(u, 3)
			if err != nil {
				t.Fatal(err)
			}
			items, reason = len(f.Items), f.Reason
		}
		if items != 0 || !strings.Contains(reason, c.want) {
			t.Errorf("%s (groups %v): %d items, reason %q, want none and %q", c.user, c.groups, items, reason, c.want)
		}
	}
	// hub's only non-friend is lone, who has no data but is a candidate.
	f, err := m.RecommendFriends(index(t, ds, "hub"), 3)
	if err != nil || len(f.Items) != 1 || f.Items[0].User != "lone" {
		t.Errorf("hub: %+v, %v; want lone alone", f, err)
	}
	noGroups := writeData(t, smallUsers, smallFriends, "")
	g, err := train(t, noGroups, recommend.Options{Negatives: learnersNegatives()}).RecommendGroups(0, 3)
	if err != nil || len(g.Items) != 0 || g.Reason != "the data set has no groups" {
		t.Errorf("no groups: %+v, %v", g, err)
	}
}

func TestBadInput(t *testing.T) {
	ds := writeData(t, smallUsers, smallFriends, "a,g1\n")
	m := train(t, ds, recommend.Options{Negatives: learnersNegatives()})
	for _, k := range []int{0, -3} {
		if _, err := m.RecommendFriends(0, k); !errors.Is(err, learners.ErrInput) {
			t.Errorf("friends k = %d: %v, want ErrInput", k, err)
		}
		if _, err := m.RecommendGroups(0, k); !errors.Is(err, learners.ErrInput) {
			t.Errorf("groups k = %d: %v, want ErrInput", k, err)
		}
	}
	for _, u := range []int{-1, ds.N()} {
		if _, err := m.RecommendFriends(u, 1); !errors.Is(err, learners.ErrInput) {
			t.Errorf("user %d: %v, want ErrInput", u, err)
		}
	}
	for _, c := range []struct{ learner, want string }{
		{"nope", `unknown learner "nope"`},
		{"hsicnpk", "learns a kernel, not kernel weights"},
		{"twolayer", "needs labels"},
		{"umkl", "needs features"},
	} {
		_, err := recommend.Train(context.Background(), ds, ds.FullView(), recommend.Options{Learner: c.learner})
		if !errors.Is(err, recommend.ErrLearner) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "usable: ") {
			t.Errorf("learner %s: %v, want ErrLearner saying %q and listing the usable ones", c.learner, err, c.want)
		}
	}
	if _, err := recommend.Train(context.Background(), ds, ds.FullView(), recommend.Options{Params: []byte(`{"nope":1}`)}); !errors.Is(err, recommend.ErrLearner) {
		t.Errorf("unknown parameter: %v, want ErrLearner", err)
	}
	if _, err := recommend.Train(context.Background(), ds, social.View{}, recommend.Options{}); !errors.Is(err, learners.ErrInput) {
		t.Errorf("no friendships: %v, want ErrInput", err)
	}
	noGroups := writeData(t, smallUsers, smallFriends, "")
	if _, err := recommend.Train(context.Background(), noGroups, noGroups.FullView(), recommend.Options{Target: recommend.TargetGroups}); !errors.Is(err, learners.ErrInput) {
		t.Errorf("group target without groups: %v, want ErrInput", err)
	}
	usable := recommend.Learners()
	if !slices.Contains(usable, "alignf") || !slices.Contains(usable, "uniform") || !slices.Contains(usable, "tsmkl") || slices.Contains(usable, "twolayer") {
		t.Errorf("usable learners %v", usable)
	}
}

// learnersNegatives fits the negative sampling to an 8-user network.
func learnersNegatives() mklr.NegativeOptions { return mklr.NegativeOptions{Neighbours: 1, PerUser: 2} }
