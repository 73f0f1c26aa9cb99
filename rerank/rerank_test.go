package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/features"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

func TestVisualRankClosedForm(t *testing.T) {
	// VR = (1-d) (I - d S)^-1 p, solved directly.
	a := mat.NewSymDense(4, []float64{
		0, 2, 1, 0,
		2, 0, 1, 0,
		1, 1, 0, 0,
		0, 0, 0, 0, // an isolated image: its column spreads uniformly
	})
	s := Stochastic(a)
	for j := 0; j < 4; j++ {
		sum := 0.0
		for i := 0; i < 4; i++ {
			sum += s.At(i, j)
		}
		if math.Abs(sum-1) > 1e-15 || s.At(j, j) != 0 {
			t.Fatalf("column %d sums to %g with diagonal %g", j, sum, s.At(j, j))
		}
	}
	if s.At(0, 1) != 2.0/3 || s.At(0, 3) != 1.0/3 {
		t.Fatalf("S(0,1) = %g, S(0,3) = %g; want 2/3, 1/3", s.At(0, 1), s.At(0, 3))
	}
	p := []float64{0.1, 0.2, 0.3, 0.4}
	d := 0.85
	vr, iter := VisualRank(s, p, d)
	var m mat.Dense
	m.Scale(-d, s)
	for i := 0; i < 4; i++ {
		m.Set(i, i, m.At(i, i)+1)
	}
	var want mat.VecDense
	if err := want.SolveVec(&m, mat.NewVecDense(4, p)); err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for i := range vr {
		sum += vr[i]
		if got, w := vr[i], (1-d)*want.AtVec(i); math.Abs(got-w) > 1e-8 {
			t.Errorf("VR[%d] = %.10f, want %.10f", i, got, w)
		}
	}
	if math.Abs(sum-1) > 1e-9 || iter < 2 || iter > 100 {
		t.Errorf("sum = %g after %d iterations", sum, iter)
	}
}

func tags(ts ...string) features.TagVector {
	v := features.TagVector{}
	for _, t := range ts {
		v[t] = 1 / math.Sqrt(float64(len(ts)))
	}
	return v
}

// Three images that look alike and one outlier: the outlier drops to last
// under any visual strategy, whatever its text score.
func lookalikes() []Candidate {
	return []Candidate{
		{ID: "outlier", TextScore: 3, Visual: []float64{0, 0, 1.5}, Tags: tags("cat")},
		{ID: "a", TextScore: 2, Visual: []float64{1, 1, 0.1}, Tags: tags("cat", "grass")},
		{ID: "b", TextScore: 2, Visual: []float64{1, 0.9, 0.1}, Tags: tags("cat", "grass")},
		{ID: "c", TextScore: 1, Visual: []float64{0.9, 1, 0.2}, Tags: tags("cat", "grass")},
	}
}

func TestRerankStrategies(t *testing.T) {
	ctx := context.Background()
	for _, s := range []string{"text", "linear", "rbf", "poly", "intersection", "npk"} {
		res, info, err := rerankAll(ctx, lookalikes(), Options{Strategy: s, Voters: 3})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if res[len(res)-1].ID != "outlier" {
			t.Errorf("%s: outlier ranked %v", s, ids(res))
		}
		if info.Strategy != s || info.Iterations == 0 {
			t.Errorf("%s: info %+v", s, info)
		}
		sum := 0.0
		for _, r := range res {
			sum += r.VisualRank
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%s: VisualRank sums to %g", s, sum)
		}
		if len(res[0].Voters) == 0 || res[0].Voters[0].ID == res[0].ID {
			t.Errorf("%s: voters of the top result = %v", s, res[0].Voters)
		}
	}
	res, _, err := rerankAll(ctx, lookalikes(), Options{Strategy: "raw"})
	if err != nil || ids(res)[0] != "outlier" || ids(res)[3] != "c" {
		t.Fatalf("raw must keep the text order: %v %v", ids(res), err)
	}
}

func TestRerankFeaturelessCandidatesGoLast(t *testing.T) {
	c := lookalikes()
	c[1].Visual = nil
	res, _, err := rerankAll(context.Background(), c, Options{Strategy: "rbf"})
	if err != nil {
		t.Fatal(err)
	}
	if last := res[len(res)-1]; last.ID != "a" || !last.NoFeatures {
		t.Fatalf("featureless candidate not last: %+v", res)
	}
}

func TestRerankBadOptions(t *testing.T) {
	cases := []Options{
		{Strategy: "nonsense"},
		{Strategy: "rbf", Params: json.RawMessage(`{"scale": -1}`)},
		{Strategy: "rbf", Params: json.RawMessage(`{"gamma": 1}`)},
		{Strategy: "text", Params: json.RawMessage(`{"x": 1}`)},
		{Strategy: "text", Prior: "zipf"},
		{Strategy: "text", Affinity: "abs"},
		{Strategy: "text", Damping: 1.5},
	}
	for _, o := range cases {
		if _, _, err := rerankAll(context.Background(), lookalikes(), o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: got %v, want ErrOptions", o, err)
		}
	}
	neg := lookalikes()
	neg[0].Visual[0] = -1
	// The corpus, not the request, is at fault: a learner input error (a 400
	// too). The intersection strategy shifts such features; npk-fused's
	// visual kernel does not.
	fused := Options{Strategy: "npk-fused", Params: json.RawMessage(`{"visual":"intersection"}`)}
	if _, _, err := rerankAll(context.Background(), neg, fused); !errors.Is(err, learners.ErrInput) {
		t.Errorf("npk-fused with intersection on negative features: %v, want learners.ErrInput", err)
	}
	bad := lookalikes()
	bad[2].Visual = []float64{1}
	if _, _, err := rerankAll(context.Background(), bad, Options{Strategy: "linear"}); err == nil {
		t.Error("mixed feature lengths accepted")
	}
}

func TestAffinities(t *testing.T) {
	k := mat.NewSymDense(2, []float64{1, -1, -1, 1})
	if c := Affinity(k, "clip"); c.At(0, 1) != 0 || c.At(0, 0) != 1 {
		t.Errorf("clip: %v", mat.Formatted(c))
	}
	if s := Affinity(k, "shift"); s.At(0, 1) != 0 || s.At(0, 0) != 2 {
		t.Errorf("shift: %v", mat.Formatted(s))
	}
	// d^2 = 1 + 1 + 2 = 4 off the diagonal; mean 4: exp(-1).
	if g := Affinity(k, "gauss"); math.Abs(g.At(0, 1)-math.Exp(-1)) > 1e-15 || g.At(1, 1) != 1 {
		t.Errorf("gauss: %v", mat.Formatted(g))
	}
}

func ids(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func TestTextKernelEqualsTagDotProducts(t *testing.T) {
	words := []string{"sky", "sea", "sun", "tree", "cat", "grass", "city"}
	var cands []Candidate
	for i := 0; i < 12; i++ {
		var ts []string
		for w := range words {
			if (i*7+w*3)%4 == 0 {
				ts = append(ts, words[w])
			}
		}
		cands = append(cands, Candidate{ID: fmt.Sprint(i), Tags: tags(ts...)})
	}
	k := TextKernel(cands)
	for i := range cands {
		for j := range cands {
			if got, want := k.At(i, j), cands[i].Tags.Dot(cands[j].Tags); math.Abs(got-want) > 1e-15 {
				t.Fatalf("K(%d,%d) = %g, want %g", i, j, got, want)
			}
		}
	}
}

// TextKernel is the same to the bit on every call: with tags numbered in
// the maps' iteration order its sums ran in a random order (measured: no two
// calls equal on Corel5k windows), which the full-rank learner amplified into
// different top 10s for one query.
func TestTextKernelReproducible(t *testing.T) {
	var cands []Candidate
	for i := 0; i < 40; i++ {
		tv := features.TagVector{}
		for w := 0; w < 9; w++ {
			tv[fmt.Sprint("tag", (i*w+w)%13)] = 1 / math.Sqrt(float64(3+i+w*w))
		}
		cands = append(cands, Candidate{ID: fmt.Sprint(i), Tags: tv})
	}
	want := TextKernel(cands)
	for range 20 {
		if !mat.Equal(TextKernel(cands), want) {
			t.Fatal("TextKernel differs between calls")
		}
	}
}

// TextKernel's sums run over each pair's shared tags in the order of the
// window's tag numbers (first seen, each candidate's tags sorted), as a
// merge of the two candidates' number-sorted tag lists does: the same bits,
// in both triangles (the lower one 0), whatever its recycled storage held.
func TestTextKernelEqualsTagListMerges(t *testing.T) {
	var cands []Candidate
	for i := 0; i < 40; i++ {
		tv := features.TagVector{}
		for w := 0; w < 1+i%6; w++ {
			tv[fmt.Sprint("tag", (i*w+3*w)%17)] = 1 / math.Sqrt(float64(3+i+w*w))
		}
		cands = append(cands, Candidate{ID: fmt.Sprint(i), Tags: tv})
	}
	type entry struct {
		id int
		w  float64
	}
	vocab := map[string]int{}
	lists := make([][]entry, len(cands))
	for i, c := range cands {
		names := slices.Sorted(maps.Keys(c.Tags))
		for _, tag := range names {
			if _, ok := vocab[tag]; !ok {
				vocab[tag] = len(vocab)
			}
			lists[i] = append(lists[i], entry{vocab[tag], c.Tags[tag]})
		}
		slices.SortFunc(lists[i], func(a, b entry) int { return a.id - b.id })
	}
	dirty := kernelmath.ScratchSym(len(cands))
	for i := range dirty.RawSymmetric().Data {
		dirty.RawSymmetric().Data[i] = math.NaN()
	}
	kernelmath.ReleaseSym(dirty)
	k := TextKernel(cands)
	raw := k.RawSymmetric()
	for i := range cands {
		for j := range cands {
			want := 0.0
			if j >= i {
				a, b := lists[i], lists[j]
				for p, q := 0, 0; p < len(a) && q < len(b); {
					switch {
					case a[p].id < b[q].id:
						p++
					case a[p].id > b[q].id:
						q++
					default:
						want += a[p].w * b[q].w
						p++
						q++
					}
				}
			}
			if got := raw.Data[i*raw.Stride+j]; got != want {
				t.Fatalf("K(%d,%d) = %v, want %v", i, j, got, want)
			}
		}
	}
}

// Scores with the clip affinity reads max(K_ij, 0) inside the normalisation:
// the matrix and the scores of Stochastic(Affinity(K, clip)), to the bit.
func TestScoresClipFusedEqualsClippedCopy(t *testing.T) {
	n := 30
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			k.SetSym(i, j, math.Sin(float64(3*i+7*j+1)))
		}
	}
	for j := 0; j < n; j++ {
		k.SetSym(4, j, -1) // an image with no positive affinity: a uniform column
	}
	cands := make([]Candidate, n)
	for i := range cands {
		cands[i] = Candidate{ID: fmt.Sprint(i), TextScore: float64(n - i)}
	}
	dirty := kernelmath.Scratch(n * n)
	for i := range dirty {
		dirty[i] = math.NaN()
	}
	kernelmath.Release(dirty)
	for _, p := range Priors {
		want := Stochastic(Affinity(k, "clip"))
		wantVR, wantIter := VisualRank(want, prior(cands, p), 0.85)
		vr, s, iter := Scores(k, cands, p, "clip", 0.85)
		if !mat.Equal(s, want) || !slices.Equal(vr, wantVR) || iter != wantIter {
			t.Fatalf("prior %s: fused clip differs from Stochastic(Affinity(K, clip))", p)
		}
		kernelmath.Release(s.RawMatrix().Data)
	}
}

func TestTopVotes(t *testing.T) {
	cands := []Candidate{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	// Votes d S_0j VR_j for image 0: b 0.5*0.2*0.5=0.05, c 0.5*0.4*0.5=0.1, d 0.5*0.4*0.5=0.1.
	row := []float64{0.9, 0.2, 0.4, 0.4}
	vr := []float64{0.5, 0.5, 0.5, 0.5}
	got := topVotes(cands, row, vr, 0, 0.5, 2)
	if len(got) != 2 || got[0].ID != "c" || got[1].ID != "d" || math.Abs(got[0].Weight-0.1) > 1e-15 {
		t.Fatalf("top votes = %v, want c then d (equal votes keep candidate order), 0.1 each", got)
	}
	if got := topVotes(cands, row, vr, 0, 0.5, 5); len(got) != 3 || got[2].ID != "b" {
		t.Fatalf("all votes = %v, want c, d, b and never the image itself", got)
	}
}

func TestRerankTooFewToVoteKeepsTextOrder(t *testing.T) {
	c := lookalikes()[:2]
	res, _, err := rerankAll(context.Background(), c, Options{Strategy: "npk"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].ID != "outlier" || res[0].VisualRank != 0.5 {
		t.Fatalf("two candidates: %+v, want the text order with equal scores", res)
	}
}

func TestUnconvergedLearnerIsServedWithAWarning(t *testing.T) {
	res, info, err := rerankAll(context.Background(), lookalikes(), Options{Strategy: "npk", Params: json.RawMessage(`{"max_iter":1,"budget":100}`)})
	if err != nil {
		t.Fatal(err)
	}
	if info.Learner == nil || info.Learner.Converged || info.Warning == "" || len(res) != 4 {
		t.Fatalf("info %+v, %d results: want a warning and the best kernel's ranking", info, len(res))
	}
}

func TestPlanCanonicalParams(t *testing.T) {
	for _, c := range []struct {
		strategy, params, want, learner string
	}{
		{"poly", ``, `{"c":1,"degree":2}`, ""},
		{"poly", `{"degree": 2.0, "c": 1}`, `{"c":1,"degree":2}`, ""},
		{"poly", `{"degree":3}`, `{"c":1,"degree":3}`, ""},
		{"raw", `{}`, `{}`, ""},
		{"text", `null`, `{}`, ""},
		{"rbf", `{"scale":0.5}`, `{"scale":0.5}`, ""},
		{"npk", `{"rank":5}`, "", "hsicnpk"},
		{"hsicnpk", `{"rank":5}`, "", "hsicnpk"},
	} {
		p, err := NewPlan(Options{Strategy: c.strategy, Params: json.RawMessage(c.params)})
		if err != nil {
			t.Fatalf("%s %s: %v", c.strategy, c.params, err)
		}
		if c.want != "" && p.Params() != c.want {
			t.Errorf("%s %s: canonical params %s, want %s", c.strategy, c.params, p.Params(), c.want)
		}
		if p.Learner() != c.learner {
			t.Errorf("%s: learner %q, want %q", c.strategy, p.Learner(), c.learner)
		}
	}
	// npk's parameters: every one present with its default, whatever order given.
	a, _ := NewPlan(Options{Strategy: "npk", Params: json.RawMessage(`{"rank":5}`)})
	b, _ := NewPlan(Options{Strategy: "npk", Params: json.RawMessage(`{"rank":5.0}`)})
	def, _ := NewPlan(Options{Strategy: "npk"})
	var m map[string]any
	if err := json.Unmarshal([]byte(a.Params()), &m); err != nil || m["rank"] != 5.0 || len(m) < 2 {
		t.Errorf("npk canonical params %s (%v)", a.Params(), err)
	}
	if a.Params() != b.Params() || a.Params() == def.Params() {
		t.Errorf("npk params: %s, %s, default %s", a.Params(), b.Params(), def.Params())
	}
	if o := def.Options(); o.Strategy != "npk" || o.Prior != DefaultPrior || o.Affinity != DefaultAffinity || o.Damping != DefaultDamping {
		t.Errorf("defaults not filled: %+v", o)
	}
}

// A Plan ranks by the kernel it is given: the kernel of another strategy
// gives that strategy's ranking, over the candidates Split keeps (those
// with features), the others after them.
func TestPlanRanksByTheGivenKernel(t *testing.T) {
	ctx := context.Background()
	cands := lookalikes()
	cands = append(cands, Candidate{ID: "nofeat", TextScore: 5, Tags: tags("cat")})
	want, _, err := rerankAll(ctx, cands, Options{Strategy: "rbf", Voters: 2})
	if err != nil {
		t.Fatal(err)
	}
	rbf, _ := NewPlan(Options{Strategy: "rbf"})
	lin, _ := NewPlan(Options{Strategy: "linear", Voters: 2})
	w := lin.Split(cands)
	if len(w.Ranked) != 4 || len(w.Rest) != 1 || !lin.Votes(w) {
		t.Fatalf("split %d + %d, want the 4 with features and the one without", len(w.Ranked), len(w.Rest))
	}
	k, _, err := rbf.Kernel(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := lin.Rank(k, w); !reflect.DeepEqual(got, want) {
		t.Errorf("ranked by the rbf kernel: %+v, want %+v", got, want)
	}
}

// The default and the npk alias resolve, and so does every listed strategy
// and re-ranking learner (the web page offers these).
func TestStrategiesResolve(t *testing.T) {
	names := append(Strategies(), rerankers()...)
	if !slices.Contains(names, DefaultStrategy) {
		t.Fatalf("%v lacks the default %s", names, DefaultStrategy)
	}
	if p, err := NewPlan(Options{Strategy: "npk"}); err != nil {
		t.Fatal(err)
	} else if p.Learner() != "hsicnpk" {
		t.Fatalf("npk is fitted by %q, want hsicnpk (its alias)", p.Learner())
	}
	for _, s := range names {
		if _, err := NewPlan(Options{Strategy: s}); err != nil {
			t.Errorf("listed strategy %s: %v", s, err)
		}
	}
}

// The tag kernel goes back to the pools after a fit unless the kernel the
// learner returned is the tag kernel itself.
func TestSharesStorage(t *testing.T) {
	text := mat.NewSymDense(3, nil)
	view := mat.NewSymDense(3, text.RawSymmetric().Data)
	for _, c := range []struct {
		k    *mat.SymDense
		want bool
	}{{nil, false}, {&mat.SymDense{}, false}, {mat.NewSymDense(3, nil), false}, {text, true}, {view, true}} {
		if got := sharesStorage(c.k, text); got != c.want {
			t.Errorf("sharesStorage(%v) = %v, want %v", c.k, got, c.want)
		}
	}
}
