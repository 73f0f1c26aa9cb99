package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2"
)

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestSearchRanking(t *testing.T) {
	ix := openTemp(t)
	// Every doc has two tags so that length normalisation is equal and the
	// order depends only on which query terms a doc has.
	mustAdd(t, ix,
		tagged("both", "red", "Car"),
		tagged("red", "red", "tree"),
		tagged("car", "car", "road"),
		tagged("none", "blue", "sky"),
		tagged("none2", "green", "grass"),
		Doc{ID: "titled", Tags: []string{"blue", "sea"}, Title: "red car"}, // titles are not searched
	)
	hits, total, err := ix.Search(t.Context(), "red car", 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	if total != 3 || len(hits) != 3 || hits[0].ID != "both" || hits[0].Score <= hits[1].Score {
		t.Fatalf("Search(red car) = %v, total %d; want both strictly first of 3", hits, total)
	}
	if rest := ids(hits[1:]); !slices.Contains(rest, "red") || !slices.Contains(rest, "car") {
		t.Errorf("one-term docs missing: %v", hits)
	}

	// Case-insensitive both ways (the doc tagged "Car", the query "CAR"),
	// and full-width letters are the ASCII ones.
	for _, q := range []string{"CAR", "ｃａｒ"} {
		hits, total, err = ix.Search(t.Context(), q, 10, 1)
		if err != nil || total != 2 || !slices.Contains(ids(hits), "both") || !slices.Contains(ids(hits), "car") {
			t.Errorf("Search(%s) = %v, %d, %v; want both and car", q, hits, total, err)
		}
	}

	// No query syntax: "-car" does not exclude, "+x" does not require,
	// "title:" does not switch fields.
	hits, _, err = ix.Search(t.Context(), "+red -car title:zzz", 10, 1)
	if err != nil || !slices.Contains(ids(hits), "car") || !slices.Contains(ids(hits), "red") {
		t.Errorf("Search(+red -car ...) = %v, %v; want plain terms", hits, err)
	}
	// A repeated word counts once.
	h1, _, _ := ix.Search(t.Context(), "red", 10, 1)
	h2, _, _ := ix.Search(t.Context(), "red red", 10, 1)
	if !reflect.DeepEqual(h1, h2) {
		t.Errorf("Search(red red) = %v, Search(red) = %v", h2, h1)
	}
}

func TestSearchScoresAreBleves(t *testing.T) {
	ix := openTemp(t)
	mustAdd(t, ix, tagged("a", "red", "car"), tagged("b", "red"), tagged("c", "car", "x", "y"), tagged("d", "z"))
	q := bleve.NewDisjunctionQuery(bleve.NewTermQuery("red"), bleve.NewTermQuery("car"))
	for _, c := range q.Disjuncts {
		c.(interface{ SetField(string) }).SetField(fieldTags)
	}
	res, err := ix.bi.Search(bleve.NewSearchRequest(q))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, h := range res.Hits {
		want[h.ID] = h.Score
	}
	hits, total, err := ix.Search(t.Context(), "Red CAR", 10, 3)
	if err != nil || total != int(res.Total) || len(hits) != len(want) {
		t.Fatalf("Search = %v, %d, %v; bleve found %v", hits, total, err, want)
	}
	for i, h := range hits {
		if h.Score != want[h.ID] || (i > 0 && h.Score > hits[i-1].Score) {
			t.Errorf("hit %d %v: bleve's score is %v (or order broken)", i, h, want[h.ID])
		}
	}
}

func TestSearchBadInput(t *testing.T) {
	ix := openTemp(t)
	mustAdd(t, ix, tagged("a", "x"))
	for _, c := range []struct {
		q    string
		n    int
		want error
	}{
		{"", 10, ErrEmptyQuery},
		{" \t\n", 10, ErrEmptyQuery},
		{"!!! ...", 10, ErrEmptyQuery},
		{strings.Repeat("é", MaxQueryLen+1), 10, ErrQueryTooLong},
		{"x", 0, ErrBadN},
		{"x", -1, ErrBadN},
	} {
		if _, _, err := ix.Search(t.Context(), c.q, c.n, 0); !errors.Is(err, c.want) || !errors.Is(err, ErrQuery) {
			t.Errorf("Search(%.20q, %d) = %v, want %v", c.q, c.n, err, c.want)
		}
	}
	long := strings.Repeat("x ", MaxQueryLen/2)
	if hits, _, err := ix.Search(t.Context(), long, 10, 0); err != nil || len(hits) != 1 {
		t.Errorf("query of exactly %d characters: %v, %v", MaxQueryLen, hits, err)
	}
}

// tieIndex holds 50 docs with the single tag "sunset", added in reverse id
// order so that neither the id order nor the insertion order is random.
func tieIndex(t *testing.T) (*Index, []string) {
	ix := openTemp(t)
	var all []string
	for i := 49; i >= 0; i-- {
		id := fmt.Sprintf("img%02d", i)
		all = append(all, id)
		mustAdd(t, ix, tagged(id, "sunset"))
	}
	return ix, all
}

func TestTieBreakIsSeededAndUnbiased(t *testing.T) {
	ix, inserted := tieIndex(t)
	search := func(seed int64) []string {
		hits, total, err := ix.Search(t.Context(), "sunset", 10, seed)
		if err != nil || total != 50 || len(hits) != 10 {
			t.Fatalf("Search(seed %d) = %v, total %d, %v", seed, hits, total, err)
		}
		return ids(hits)
	}
	sorted := slices.Sorted(slices.Values(inserted))
	if a, b := search(1), search(1); !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different results: %v %v", a, b)
	}
	if a, b := search(1), search(2); reflect.DeepEqual(a, b) {
		t.Errorf("seeds 1 and 2 gave the same results %v", a)
	}

	const seeds = 2000
	count := map[string]int{}
	for seed := range int64(seeds) {
		got := search(seed)
		set := slices.Sorted(slices.Values(got))
		if reflect.DeepEqual(set, sorted[:10]) || reflect.DeepEqual(got, inserted[:10]) {
			t.Errorf("seed %d returned the id-sorted or insertion-order prefix %v", seed, got)
		}
		for _, id := range got {
			count[id]++
		}
	}
	// Each doc is in the top 10 with probability 1/5: expect 400 of 2000,
	// standard deviation ~17.9; 300..500 is over 5 sigma either way.
	for _, id := range inserted {
		if c := count[id]; c < 300 || c > 500 {
			t.Errorf("%s returned for %d of %d seeds, want about 400", id, c, seeds)
		}
	}
}

func TestTieAtTheCutKeepsHigherScores(t *testing.T) {
	ix := openTemp(t)
	// Five docs with only "sunset" outscore the forty with a second tag
	// (bleve's length norm), which all tie among themselves.
	var top, tied []string
	for i := range 5 {
		top = append(top, fmt.Sprintf("solo%d", i))
		mustAdd(t, ix, tagged(top[i], "sunset"))
	}
	for i := range 40 {
		tied = append(tied, fmt.Sprintf("pair%02d", i))
		mustAdd(t, ix, tagged(tied[i], "sunset", fmt.Sprintf("other%d", i)))
	}
	seen := map[string]bool{}
	for seed := range int64(50) {
		hits, total, err := ix.Search(t.Context(), "sunset", 10, seed)
		if err != nil || total != 45 || len(hits) != 10 {
			t.Fatalf("Search = %v, %d, %v", hits, total, err)
		}
		if got := slices.Sorted(slices.Values(ids(hits[:5]))); !reflect.DeepEqual(got, top) {
			t.Fatalf("seed %d: first five %v, want %v", seed, got, top)
		}
		for _, h := range hits[5:] {
			if h.Score != hits[5].Score || h.Score >= hits[4].Score || !slices.Contains(tied, h.ID) {
				t.Fatalf("seed %d: tail %v", seed, hits[5:])
			}
			seen[h.ID] = true
		}
	}
	if len(seen) < 35 {
		t.Errorf("over 50 seeds only %d of the 40 tied docs were sampled", len(seen))
	}
}

func TestTieKeyPermutationsDiffer(t *testing.T) {
	// Two seeds must order ids independently: the
	// fraction of pairs ordered alike should be near 1/2.
	rng := rand.New(rand.NewPCG(1, 2))
	idsN := make([]string, 1000)
	for i := range idsN {
		idsN[i] = fmt.Sprintf("id-%d", rng.IntN(1e9))
	}
	alike, pairs := 0, 0
	for i := 0; i < len(idsN); i += 2 {
		a, b := idsN[i], idsN[i+1]
		if (tieKey(1, a) < tieKey(1, b)) == (tieKey(2, a) < tieKey(2, b)) {
			alike++
		}
		pairs++
	}
	if f := float64(alike) / float64(pairs); f < 0.4 || f > 0.6 {
		t.Errorf("seeds 1 and 2 order %.2f of pairs alike, want about 0.5", f)
	}
}

func TestConcurrentReadersAndWriter(t *testing.T) {
	ix := openTemp(t)
	mustAdd(t, ix, Doc{ID: "base", Tags: []string{"sky"}, Features: []float32{1, 2}})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 20 {
			mustAdd(t, ix, Doc{ID: fmt.Sprintf("d%d", i), Tags: []string{"sky", "sea"}, Features: []float32{1, 2}})
		}
	})
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if _, _, err := ix.Search(t.Context(), "sky sea", 5, 1); err != nil {
					t.Error(err)
				}
				if _, err := ix.GetMany([]string{"base", "d3"}); err != nil {
					t.Error(err)
				}
				if _, err := ix.Features([]string{"base"}); err != nil {
					t.Error(err)
				}
				ix.DocFreq("sky")
			}
		})
	}
	wg.Wait()
	if ix.DocFreq("sky") != 21 || ix.Count() != 21 {
		t.Errorf("DocFreq(sky) %d Count %d, want 21 21", ix.DocFreq("sky"), ix.Count())
	}
}

func TestNormalizeQuery(t *testing.T) {
	ix := openTemp(t)
	mustAdd(t, ix, tagged("a", "blue sky", "sea"), tagged("b", "sky"), tagged("c", "Sea"))
	for text, want := range map[string]string{
		"sky":             "sky",
		"  Sea SKY sea  ": "sea sky",
		"sky, sea!":       "sea sky",
		"ｓｋｙ":             "sky", // full-width, NFKC
	} {
		got, err := ix.NormalizeQuery(text)
		if err != nil || got != want {
			t.Errorf("NormalizeQuery(%q) = %q, %v; want %q", text, got, err, want)
			continue
		}
		// The canonical form searches as the text does.
		h1, _, err1 := ix.Search(t.Context(), text, 10, 0)
		h2, _, err2 := ix.Search(t.Context(), got, 10, 0)
		if err1 != nil || err2 != nil || !slices.Equal(ids(h1), ids(h2)) {
			t.Errorf("%q searches %v, its form %q searches %v (%v, %v)", text, ids(h1), got, ids(h2), err1, err2)
		}
	}
	for _, text := range []string{"", " ", "?!", strings.Repeat("x", MaxQueryLen+1)} {
		if _, err := ix.NormalizeQuery(text); !errors.Is(err, ErrQuery) {
			t.Errorf("NormalizeQuery(%.20q) = %v, want an ErrQuery", text, err)
		}
	}
}
