package recommend_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/socialtest"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// sameAnswers checks that two models give user u the same k friends and
// groups, scores and explanations, numbers within tol.
func sameAnswers(t *testing.T, a, b *recommend.Model, u, k int, tol float64) {
	t.Helper()
	fa, errA := a.RecommendFriends(u, k)
	fb, errB := b.RecommendFriends(u, k)
	if errA != nil || errB != nil || len(fa.Items) != len(fb.Items) || fa.Reason != fb.Reason {
		t.Fatalf("user %d friends: %d items %q (%v) vs %d items %q (%v)", u, len(fa.Items), fa.Reason, errA, len(fb.Items), fb.Reason, errB)
	}
	for r, x := range fa.Items {
		y := fb.Items[r]
		ok := x.User == y.User && near(x.Score, y.Score, tol) && near(x.Strength, y.Strength, tol) && near(x.Kernel, y.Kernel, tol) &&
			slices.Equal(x.CommonFriends, y.CommonFriends) && x.CommonFriendCount == y.CommonFriendCount && len(x.Contributions) == len(y.Contributions)
		for c := 0; ok && c < len(x.Contributions); c++ {
			p, q := x.Contributions[c], y.Contributions[c]
			ok = p.Kernel == q.Kernel && near(p.Weight, q.Weight, tol) && near(p.Value, q.Value, tol) && near(p.Part, q.Part, tol) && near(p.Term, q.Term, tol)
		}
		if !ok {
			t.Fatalf("user %d friend %d: %+v vs %+v", u, r, x, y)
		}
	}
	ga, errA := a.RecommendGroups(u, k)
	gb, errB := b.RecommendGroups(u, k)
	if errA != nil || errB != nil || len(ga.Items) != len(gb.Items) || ga.Reason != gb.Reason {
		t.Fatalf("user %d groups: %+v (%v) vs %+v (%v)", u, ga, errA, gb, errB)
	}
	for r, x := range ga.Items {
		y := gb.Items[r]
		if x.Group != y.Group || !near(x.Score, y.Score, tol) || x.Members != y.Members || !slices.Equal(x.Friends, y.Friends) || x.FriendCount != y.FriendCount {
			t.Fatalf("user %d group %d: %+v vs %+v", u, r, x, y)
		}
	}
}

// encoded returns m's parts and an empty directory store.
func encoded(t *testing.T, m *recommend.Model) (map[string][]byte, cache.Store) {
	t.Helper()
	parts, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	store, err := cache.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return parts, store
}

// roundTrip writes m (with its top-k) as version "v1" to a directory store
// and loads it back over ds.
func roundTrip(t *testing.T, m *recommend.Model, ds *social.Dataset, topK int) *recommend.Model {
	t.Helper()
	ctx := context.Background()
	mt, err := m.WithTop(ctx, topK, nil)
	if err != nil {
		t.Fatal(err)
	}
	parts, store := encoded(t, mt)
	name, err := recommend.StoreName(recommend.Options{Learner: m.Stats().Learner})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Write(ctx, name, "v1", parts); err != nil {
		t.Fatal(err)
	}
	loaded, err := recommend.Load(ctx, store, name, "v1", ds, ds.Version())
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Version() != "v1" || loaded.DataVersion() != ds.Version() || loaded.TopK() != topK || !reflect.DeepEqual(loaded.Stats().Weights, m.Stats().Weights) {
		t.Fatalf("loaded: version %q data %q top %d weights %v; want v1 %q %d %v", loaded.Version(), loaded.DataVersion(), loaded.TopK(), loaded.Stats().Weights, ds.Version(), topK, m.Stats().Weights)
	}
	return loaded
}

// TestStoredModel: a model written and loaded back gives the same friend
// and group recommendations as the trained one, scores to 1e-12, through
// its precomputed lists (k <= K) and without (k > K).
func TestStoredModel(t *testing.T) {
	ds := demoData(t)
	m := train(t, ds, recommend.Options{})
	loaded := roundTrip(t, m, ds, 20)
	n := ds.N()
	row, want := make([]float64, n), make([]float64, n)
	for u := range n {
		sameAnswers(t, m, loaded, u, 10, 1e-12)
		m.ScoreAll(u, want)
		loaded.ScoreAll(u, row)
		for v := range row {
			if !near(row[v], want[v], 1e-12) {
				t.Fatalf("f(%d, %d): loaded %v, trained %v", u, v, row[v], want[v])
			}
		}
	}
	sameAnswers(t, m, loaded, 17, 25, 1e-12)
}

// TestStoredModelEgoFacebook is TestStoredModel on real data.
func TestStoredModelEgoFacebook(t *testing.T) {
	ds := egoFacebook(t)
	m := train(t, ds, recommend.Options{})
	loaded := roundTrip(t, m, ds, recommend.DefaultTopK)
	for u := 0; u < ds.N(); u += 37 {
		sameAnswers(t, m, loaded, u, 10, 1e-12)
	}
	// A learner that takes only dense kernels is refused above DenseMax
	// users, before it can take a server's memory.
	_, err := recommend.Train(t.Context(), ds, ds.FullView(), recommend.Options{Learner: "influence-mkl"})
	if !errors.Is(err, recommend.ErrLearner) || !strings.Contains(err.Error(), "exceed the dense limit") {
		t.Errorf("influence-mkl on ego-Facebook: %v, want ErrLearner for its dense kernels", err)
	}
}

// TestPrecomputedTopIsTheSame: the answers read from the precomputed
// lists are those ranked per request, bit for bit.
func TestPrecomputedTopIsTheSame(t *testing.T) {
	ds := demoData(t)
	m := train(t, ds, recommend.Options{Learner: "uniform"})
	const K = 15
	var calls []float64
	mt, err := m.WithTop(context.Background(), K, func(f float64) { calls = append(calls, f) })
	if err != nil {
		t.Fatal(err)
	}
	if m.TopK() != 0 || mt.TopK() != K || len(calls) == 0 || calls[len(calls)-1] != 1 {
		t.Fatalf("top k %d and %d, progress %v", m.TopK(), mt.TopK(), calls)
	}
	for u := range ds.N() {
		for _, k := range []int{1, 6, K, K + 1} {
			f1, err1 := m.RecommendFriends(u, k)
			f2, err2 := mt.RecommendFriends(u, k)
			g1, err3 := m.RecommendGroups(u, k)
			g2, err4 := mt.RecommendGroups(u, k)
			if err := errors.Join(err1, err2, err3, err4); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f1, f2) || !reflect.DeepEqual(g1, g2) {
				t.Fatalf("user %d, k %d: precomputed answers differ:\n%+v\n%+v\n%+v\n%+v", u, k, f1, f2, g1, g2)
			}
		}
	}
	if _, err := m.WithTop(context.Background(), 0, nil); err == nil {
		t.Error("top k 0 accepted")
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.WithTop(done, K, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	ds := demoData(t)
	ctx := context.Background()
	m := train(t, ds, recommend.Options{Learner: "uniform"})
	good, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	store, err := cache.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(part string, f func([]byte) []byte) map[string][]byte {
		parts := map[string][]byte{}
		for k, v := range good {
			parts[k] = v
		}
		if b := f(slices.Clone(good[part])); b != nil {
			parts[part] = b
		} else {
			delete(parts, part)
		}
		return parts
	}
	other := writeData(t, smallUsers, smallFriends, "a,g1\n")
	for _, c := range []struct {
		name  string
		parts map[string][]byte
		ds    *social.Dataset
		want  error
		says  string
	}{
		{"other data", good, other, recommend.ErrDataVersion, "trained on data version " + ds.Version()},
		{"truncated alpha", edit("alpha", func(b []byte) []byte { return b[:len(b)-9] }), ds, cache.ErrCorrupt, "part alpha"},
		{"flipped bit", edit("imports", func(b []byte) []byte { b[20] ^= 1; return b }), ds, cache.ErrCorrupt, "part imports"},
		{"missing part", edit("base_weights", func([]byte) []byte { return nil }), ds, cache.ErrMiss, "part base_weights"},
		{"bad meta", edit("meta", func([]byte) []byte {
			b, _ := cache.Encode(cache.Value{Kind: cache.Bytes, Shape: []int{2}, Bytes: []byte("{x")})
			return b
		}), ds, nil, "part meta"},
		{"wrong kind", edit("alpha", func([]byte) []byte {
			b, _ := cache.Encode(cache.Value{Kind: cache.Float32, Shape: []int{1}, F32: []float32{1}})
			return b
		}), ds, nil, "part alpha holds float32"},
	} {
		version := strings.ReplaceAll(c.name, " ", "-")
		if err := store.Write(ctx, "m", version, c.parts); err != nil {
			t.Fatal(err)
		}
		_, err := recommend.Load(ctx, store, "m", version, c.ds, c.ds.Version())
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), version) {
			t.Errorf("%s: %v, want %v saying %q and the version", c.name, err, c.want, c.says)
		}
	}
	if _, err := recommend.Load(ctx, store, "m", "never-written", ds, ds.Version()); !errors.Is(err, cache.ErrMiss) {
		t.Errorf("unwritten version: %v", err)
	}
	view := ds.FullView()
	view.Friends = view.Friends[1:]
	partial, err := recommend.Train(ctx, ds, view, recommend.Options{Learner: "uniform"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := partial.Encode(); err == nil || !strings.Contains(err.Error(), "full view") {
		t.Errorf("a model of a partial view encoded: %v", err)
	}
}

func TestStoreName(t *testing.T) {
	name := func(o recommend.Options) string {
		t.Helper()
		s, err := recommend.StoreName(o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	def := name(recommend.Options{})
	if !strings.HasPrefix(def, "social/alignf/") || len(def) != len("social/alignf/")+32 {
		t.Errorf("default name %q", def)
	}
	if name(recommend.Options{Learner: "alignf", Seed: 1, Params: []byte(`{ }`)}) != name(recommend.Options{Params: []byte(`{}`)}) {
		t.Error("the same settings, spelt differently, got two names")
	}
	seen := map[string]bool{def: true}
	for _, o := range []recommend.Options{
		{Seed: 2}, {Learner: "uniform"}, {Target: recommend.TargetGroups}, {Params: []byte(`{"x":1}`)},
		{Kernels: social.KernelOptions{Mode: social.ModeCosine}},
		{Select: recommend.SelectOptions{Scorer: recommend.ScorerMKLR}}, {Select: recommend.SelectOptions{Fraction: 0.2}},
	} {
		if n := name(o); seen[n] {
			t.Errorf("%+v: name %s taken", o, n)
		} else {
			seen[n] = true
		}
	}
	if _, err := recommend.StoreName(recommend.Options{Params: []byte(`{`)}); !errors.Is(err, recommend.ErrLearner) {
		t.Errorf("bad params: %v", err)
	}
}

// TestStoredScorers: a model ranking friends by each scorer, written and
// loaded back, ranks them by the same scorer with the same answers, through
// its precomputed lists and without; a meta part without the scorer (a
// model stored before the choice) loads as mklr, an unknown one fails.
func TestStoredScorers(t *testing.T) {
	ds := demoData(t)
	for _, s := range recommend.Scorers {
		m := train(t, ds, recommend.Options{Learner: "uniform", Select: recommend.SelectOptions{Scorer: s}})
		loaded := roundTrip(t, m, ds, 12)
		if m.FriendScorer() != s || loaded.FriendScorer() != s || loaded.Stats().Selection.Scorer != s {
			t.Fatalf("scorer %s: trained %s, loaded %s (%+v)", s, m.FriendScorer(), loaded.FriendScorer(), loaded.Stats().Selection)
		}
		for u := range ds.N() {
			sameAnswers(t, m, loaded, u, 10, 1e-12)
		}
		sameAnswers(t, m, loaded, 5, 30, 1e-12)
	}

	ctx := context.Background()
	m := train(t, ds, recommend.Options{Learner: "uniform", Select: recommend.SelectOptions{Scorer: recommend.ScorerKernel}})
	parts, store := encoded(t, m)
	withScorer := func(scorer any) map[string][]byte {
		return editMeta(t, parts, func(md map[string]any) {
			if md["scorer"] != recommend.ScorerKernel {
				t.Fatalf("meta scorer %v", md["scorer"])
			}
			if scorer == nil {
				delete(md, "scorer")
			} else {
				md["scorer"] = scorer
			}
		})
	}
	if err := store.Write(ctx, "m", "old", withScorer(nil)); err != nil {
		t.Fatal(err)
	}
	old, err := recommend.Load(ctx, store, "m", "old", ds, ds.Version())
	if err != nil || old.FriendScorer() != recommend.ScorerMKLR {
		t.Fatalf("a meta without scorer: %v, scorer %v", err, old)
	}
	mklr := train(t, ds, recommend.Options{Learner: "uniform", Select: recommend.SelectOptions{Scorer: recommend.ScorerMKLR}})
	sameAnswers(t, mklr, old, 3, 10, 1e-12)
	if err := store.Write(ctx, "m", "bogus", withScorer("bogus")); err != nil {
		t.Fatal(err)
	}
	if _, err := recommend.Load(ctx, store, "m", "bogus", ds, ds.Version()); err == nil || !strings.Contains(err.Error(), `unknown friend scorer "bogus"`) {
		t.Errorf("unknown scorer: %v", err)
	}
}

// editMeta returns parts with the meta part edited as JSON.
func editMeta(t *testing.T, parts map[string][]byte, edit func(md map[string]any)) map[string][]byte {
	t.Helper()
	v, err := cache.Decode(parts["meta"])
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]any
	if err := json.Unmarshal(v.Bytes, &md); err != nil {
		t.Fatal(err)
	}
	edit(md)
	js, _ := json.Marshal(md)
	b, err := cache.Encode(cache.Value{Kind: cache.Bytes, Shape: []int{len(js)}, Bytes: js})
	if err != nil {
		t.Fatal(err)
	}
	out := maps.Clone(parts)
	out["meta"] = b
	return out
}

// TestStoredGroupScorer: a stored model serves the group scorer it was
// trained with, precomputed and ranked now; a meta without one (stored
// before the choice) ranks by mklr; an unknown one or learned weights of
// the wrong length fail to load.
func TestStoredGroupScorer(t *testing.T) {
	ds := recommend.PairedGroups(t)
	m := train(t, ds, recommend.Options{Learner: "uniform"})
	loaded := roundTrip(t, m, ds, 5)
	if m.GroupScorer() != recommend.GroupLearned || loaded.GroupScorer() != recommend.GroupLearned ||
		!slices.Equal(recommend.GroupWeights(loaded), recommend.GroupWeights(m)) || loaded.Stats().GroupSelection.Scorer != recommend.GroupLearned {
		t.Fatalf("trained %s, loaded %s %v (%+v)", m.GroupScorer(), loaded.GroupScorer(), recommend.GroupWeights(loaded), loaded.Stats().GroupSelection)
	}
	for u := range ds.N() {
		for _, k := range []int{3, 16} { // precomputed, and ranked now
			sameAnswers(t, m, loaded, u, k, 1e-12)
		}
	}
	ctx := context.Background()
	parts, store := encoded(t, m)
	for i, c := range []struct {
		edit func(map[string]any)
		want string
	}{
		{func(md map[string]any) { delete(md, "group_scorer"); delete(md, "group_weights") }, ""},
		{func(md map[string]any) { md["group_scorer"] = "bogus" }, `unknown group scorer "bogus"`},
		{func(md map[string]any) { md["group_weights"] = []float64{1} }, "group scorer learned has 1 weights, want 7"},
	} {
		version := fmt.Sprint("v", i)
		if err := store.Write(ctx, "m", version, editMeta(t, parts, c.edit)); err != nil {
			t.Fatal(err)
		}
		got, err := recommend.Load(ctx, store, "m", version, ds, ds.Version())
		switch {
		case c.want == "" && (err != nil || got.GroupScorer() != recommend.GroupMKLR):
			t.Errorf("a meta without group scorer: %v, %v", err, got)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("load: %v, want %q", err, c.want)
		}
	}
}

// egoFacebook loads ../shared/data's ego-Facebook, or skips (with -short
// too: the tests that use it train on its 4,039 users).
func egoFacebook(t *testing.T) *social.Dataset {
	t.Helper()
	if testing.Short() {
		t.Skip("trains on ego-Facebook")
	}
	return socialtest.Load(t, "ego-facebook", social.ImportOptions{})
}
