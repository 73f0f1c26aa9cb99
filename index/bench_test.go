package index

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"
	"github.com/kernelrank/kernelrank/features"
)

// corel5kARFF is the Corel5k keyword data: 499 binary ClusterN attributes,
// then one binary attribute per keyword; each sparse @data row lists the
// indices whose value is 1.
const corel5kARFF = "/work/shared/data/images/corel5k/Corel5k-sparse.arff"

const corelClusters = 499

// tagModel is the empirical keyword distribution of Corel5k: how many
// keywords an image has, and how often each keyword is used.
type tagModel struct {
	keywords []string
	cumFreq  []int // cumulative keyword use counts, for weighted draws
	counts   []int // keywords per image, one entry per image with any
}

func loadCorel5k(path string) (*tagModel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := &tagModel{}
	var attrs int
	var freq []int
	data := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "@attribute"):
			if attrs >= corelClusters {
				m.keywords = append(m.keywords, strings.Fields(line)[1])
			}
			attrs++
		case strings.HasPrefix(line, "@data"):
			data = true
			freq = make([]int, len(m.keywords))
		case data && strings.HasPrefix(line, "{"):
			n := 0
			for _, cell := range strings.Split(strings.Trim(line, "{}"), ",") {
				idx, err := strconv.Atoi(strings.Fields(cell)[0])
				if err != nil {
					return nil, fmt.Errorf("%s: bad row %q", path, line)
				}
				if idx >= corelClusters {
					freq[idx-corelClusters]++
					n++
				}
			}
			if n > 0 {
				m.counts = append(m.counts, n)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(m.keywords) == 0 || len(m.counts) == 0 {
		return nil, fmt.Errorf("%s: no keywords or no rows", path)
	}
	total := 0
	for _, c := range freq {
		total += c
		m.cumFreq = append(m.cumFreq, total)
	}
	return m, nil
}

// tags draws one image's tags: a count from the empirical distribution,
// then distinct keywords with probability proportional to their use.
func (m *tagModel) tags(rng *rand.Rand) []string {
	k := m.counts[rng.IntN(len(m.counts))]
	out := make([]string, 0, k)
	for len(out) < k {
		i := sort.SearchInts(m.cumFreq, rng.IntN(m.cumFreq[len(m.cumFreq)-1])+1)
		if !slices.Contains(out, m.keywords[i]) {
			out = append(out, m.keywords[i])
		}
	}
	return out
}

// mostFrequent returns the n most used keywords, most used first.
func (m *tagModel) mostFrequent(n int) []string {
	idx := make([]int, len(m.keywords))
	for i := range idx {
		idx[i] = i
	}
	use := func(i int) int {
		if i == 0 {
			return m.cumFreq[0]
		}
		return m.cumFreq[i] - m.cumFreq[i-1]
	}
	slices.SortFunc(idx, func(a, b int) int { return use(b) - use(a) })
	out := make([]string, n)
	for i := range out {
		out[i] = m.keywords[idx[i]]
	}
	return out
}

// bench100k is the 100,000-doc index shared by the benchmarks, built once;
// TestMain removes it.
var bench100k struct {
	once     sync.Once
	dir      string
	ix       *Index
	frequent []string
	err      error
}

const benchDocs = 100_000

func index100k(b *testing.B) (*Index, []string) {
	if _, err := os.Stat(corel5kARFF); err != nil {
		b.Skipf("Corel5k keyword data not available (%v): the 100k index samples its tags", err)
	}
	bb := &bench100k
	bb.once.Do(func() {
		var m *tagModel
		if m, bb.err = loadCorel5k(corel5kARFF); bb.err != nil {
			return
		}
		bb.frequent = m.mostFrequent(6)
		if bb.dir, bb.err = os.MkdirTemp("", "kernelrank-bench-"); bb.err != nil {
			return
		}
		if bb.ix, bb.err = Open(bb.dir); bb.err != nil {
			return
		}
		start := time.Now()
		rng := rand.New(rand.NewPCG(5000, 1))
		batch := make([]Doc, 0, 1000)
		for i := range benchDocs {
			v := make([]float32, features.Dim)
			for j := range v {
				v[j] = rng.Float32()
			}
			batch = append(batch, Doc{ID: fmt.Sprintf("img%06d", i), Tags: m.tags(rng), Image: fmt.Sprintf("/corpus/%06d.jpg", i), Features: v})
			if len(batch) == cap(batch) {
				if bb.err = bb.ix.Add(batch); bb.err != nil {
					return
				}
				batch = batch[:0]
			}
		}
		built := time.Since(start)
		// Measure a settled index, as a server sees it some time after an
		// ingest, not one whose background merges are still running.
		var adv bindex.Index
		if adv, bb.err = bb.ix.bi.Advanced(); bb.err != nil {
			return
		}
		if bb.err = adv.(*scorch.Scorch).ForceMerge(context.Background(), nil); bb.err != nil {
			return
		}
		fmt.Fprintf(os.Stderr, "built a %d-doc index (%d-d features) in %v, merged in %v; most frequent tags %v\n",
			bb.ix.Count(), features.Dim, built.Round(time.Millisecond), (time.Since(start) - built).Round(time.Millisecond), bb.frequent)
	})
	if bb.err != nil {
		b.Fatal(bb.err)
	}
	return bb.ix, bb.frequent
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench100k.ix != nil {
		bench100k.ix.Close()
	}
	if bench100k.dir != "" {
		os.RemoveAll(bench100k.dir)
	}
	os.Exit(code)
}

// BenchmarkSearch100k measures the text stage: top 200 with the tie-break on
// a 100k-doc index with Corel5k's tag distribution.
func BenchmarkSearch100k(b *testing.B) {
	ix, frequent := index100k(b)
	single := frequent[:5]
	var pairs []string
	for i := 0; i < len(frequent); i += 2 {
		pairs = append(pairs, frequent[i]+" "+frequent[i+1])
	}
	for _, set := range []struct {
		name    string
		queries []string
	}{{"single-tag", single}, {"two-term", pairs}} {
		b.Run(set.name, func(b *testing.B) {
			b.ReportAllocs()
			matches, i := 0, 0
			for b.Loop() {
				_, total, err := ix.Search(b.Context(), set.queries[i%len(set.queries)], 200, int64(i))
				if err != nil {
					b.Fatal(err)
				}
				matches += total
				i++
			}
			b.ReportMetric(float64(matches)/float64(i), "matches/op")
		})
	}
}

// BenchmarkFetch100k measures what the re-ranker and the result page read
// for 200 candidates: stored fields (GetMany) and vectors (Features).
func BenchmarkFetch100k(b *testing.B) {
	ix, frequent := index100k(b)
	hits, _, err := ix.Search(b.Context(), frequent[0], 200, 1)
	if err != nil {
		b.Fatal(err)
	}
	ids := ids(hits)
	b.Run("GetMany", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ix.GetMany(ids); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Features", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ix.Features(ids); err != nil {
				b.Fatal(err)
			}
		}
	})
}
