package search

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/kernelrank/kernelrank/cache"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden_rankings.json")

// goldenCase is one search of the golden set.
type goldenCase struct {
	Query, Strategy, Params, Prior, Affinity string
	K, Window                                int
}

// goldenCases cover every fixed strategy, the default, full-rank and
// low-rank HSIC-NPK (a window of 400 takes the low-rank fallback), a
// kernel-weight learner and the priors and affinities.
var goldenCases = []goldenCase{
	{Query: "sky"}, {Query: "water"}, {Query: "people", K: 50},
	{Query: "sky", Strategy: "npk"}, {Query: "tiger", Strategy: "npk", Params: `{"rank":10}`},
	{Query: "water", Strategy: "npk", Window: 400, K: 30},
	{Query: "sky", Strategy: "poly", Prior: "text"}, {Query: "water", Strategy: "rbf", Params: `{"scale":0.5}`},
	{Query: "people", Strategy: "linear", Affinity: "gauss"}, {Query: "sky", Strategy: "intersection", Affinity: "shift"},
	{Query: "sky", Strategy: "text"}, {Query: "sky", Strategy: "raw"}, {Query: "grass", Strategy: "alignf"},
	{Query: "sky", Strategy: "npk-fused", Params: `{"degree":3}`, Window: 100},
}

// goldenHit is one ranked result, its score as the bits of its float64.
type goldenHit struct {
	ID     string
	Score  string
	Voters []string
}

// goldenRankings runs every golden case on e through run, which returns
// each hit's id, VisualRank and voters' ids with their weights' bits.
func goldenRankings(t *testing.T, run func(req Request) ([]goldenHit, error)) map[string][]goldenHit {
	out := map[string][]goldenHit{}
	for _, c := range goldenCases {
		req := DefaultRequest(c.Query)
		req.K, req.Window = c.K, c.Window
		req.Rerank.Strategy, req.Rerank.Prior, req.Rerank.Affinity = c.Strategy, c.Prior, c.Affinity
		if c.Params != "" {
			req.Rerank.Params = json.RawMessage(c.Params)
		}
		hits, err := run(req)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		out[fmt.Sprintf("%+v", c)] = hits
	}
	return out
}

func bits(x float64) string { return fmt.Sprintf("%016x", math.Float64bits(x)) }

// TestGoldenRankings checks that a fixed set of searches over Corel5k
// ranks bit for bit as recorded, with the cache off and on (a learned
// kernel passes through float32 either way).
func TestGoldenRankings(t *testing.T) {
	ix := corelIndex(t)
	mem, err := cache.NewMemory(0)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	path := filepath.Join("testdata", "golden_rankings.json")
	for _, ld := range []*cache.Loader{nil, cache.NewLoader(mem, nil)} {
		e := New(ix, ld, Options{})
		got := goldenRankings(t, func(req Request) ([]goldenHit, error) {
			resp, err := e.Search(context.Background(), req)
			if err != nil {
				return nil, err
			}
			hits := make([]goldenHit, len(resp.Results))
			for i, r := range resp.Results {
				hits[i] = goldenHit{ID: r.ID, Score: bits(r.VisualRank)}
				for _, v := range r.Voters {
					hits[i].Voters = append(hits[i].Voters, v.ID+"@"+bits(v.Weight))
				}
			}
			return hits, nil
		})
		if *updateGolden {
			b, _ := json.MarshalIndent(got, "", " ")
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string][]goldenHit
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d golden searches, want %d", len(got), len(want))
		}
		for name, w := range want {
			g := got[name]
			if len(g) != len(w) {
				t.Errorf("%s: %d hits, want %d", name, len(g), len(w))
				continue
			}
			for i := range w {
				if g[i].ID != w[i].ID || g[i].Score != w[i].Score || fmt.Sprint(g[i].Voters) != fmt.Sprint(w[i].Voters) {
					t.Errorf("%s: hit %d is %+v, want %+v", name, i+1, g[i], w[i])
					break
				}
			}
		}
	}
}
