package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
)

// MaxQueryLen is the longest accepted query, in characters.
const MaxQueryLen = 1000

// Errors of Search caused by its input: each wraps ErrQuery, so a server
// maps them all to a client error with one test.
var (
	ErrQuery        = errors.New("index: bad query")
	ErrEmptyQuery   = fmt.Errorf("%w: no searchable words", ErrQuery)
	ErrQueryTooLong = fmt.Errorf("%w: longer than %d characters", ErrQuery, MaxQueryLen)
	ErrBadN         = fmt.Errorf("%w: the number of results must be at least 1", ErrQuery)
)

// Hit is one search result.
type Hit struct {
	ID    string
	Score float64
}

// Search returns the top n docs for text by bleve's tf-idf score on the tags
// field (titles are not searched), best first, and the total number of
// matching docs.
//
// The query is split into terms by the tag analyser; a doc matches if it has
// any of them, and bleve's coordination factor ranks docs with more of the
// terms higher. No query syntax is interpreted, so "tags:x", "+x" or "-x"
// are just words.
//
// Docs with equal scores are ordered by a pseudo-random permutation drawn
// from seed (a hash of seed and id), so when the cut at n falls inside a
// group of tied docs, the ones returned are a uniform sample of that group
// rather than the first inserted or the smallest ids; the same seed gives
// the same result on the same index.
func (ix *Index) Search(ctx context.Context, text string, n int, seed int64) ([]Hit, int, error) {
	if n < 1 {
		return nil, 0, ErrBadN
	}
	q, err := ix.query(text)
	if err != nil {
		return nil, 0, err
	}
	top := topN{n: n, seed: uint64(seed), h: make([]candidate, 0, min(n, 1024))}
	// Every match goes through top's handler instead of bleve's own top-n
	// collector, whose order among tied scores is the internal doc order. The
	// request itself asks for no hits, hence no stored-field loading.
	ctx = context.WithValue(ctx, search.MakeDocumentMatchHandlerKey,
		search.MakeDocumentMatchHandler(top.handler))
	res, err := ix.bi.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, 0, 0, false))
	if err != nil {
		return nil, 0, err
	}
	return top.hits(), int(res.Total), nil
}

// NormalizeQuery returns the canonical form of a query: its distinct index
// terms, sorted, joined by one space. Two texts with the same canonical form
// get the same results from Search, and the form searches as itself, so it
// serves as a cache key and as a query to replay.
func (ix *Index) NormalizeQuery(text string) (string, error) {
	ts, err := ix.queryTerms(text)
	if err != nil {
		return "", err
	}
	return strings.Join(ts, " "), nil
}

// queryTerms returns the distinct index terms of text, sorted.
func (ix *Index) queryTerms(text string) ([]string, error) {
	if utf8.RuneCountInString(text) > MaxQueryLen {
		return nil, ErrQueryTooLong
	}
	if strings.TrimSpace(text) == "" {
		return nil, ErrEmptyQuery
	}
	ts := terms(ix.an, text)
	if len(ts) == 0 {
		return nil, ErrEmptyQuery
	}
	// A repeated word must not count twice.
	slices.Sort(ts)
	return slices.Compact(ts), nil
}

// query turns user text into a disjunction of term queries on the tags field.
func (ix *Index) query(text string) (query.Query, error) {
	ts, err := ix.queryTerms(text)
	if err != nil {
		return nil, err
	}
	qs := make([]query.Query, len(ts))
	for i, t := range ts {
		tq := bleve.NewTermQuery(t)
		tq.SetField(fieldTags)
		qs[i] = tq
	}
	if len(qs) == 1 {
		return qs[0], nil
	}
	return bleve.NewDisjunctionQuery(qs...), nil
}

type candidate struct {
	id    string
	score float64
	key   uint64 // place in the seed's permutation
}

// worse reports whether a ranks below b.
func worse(a, b candidate) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	if a.key != b.key {
		return a.key > b.key
	}
	return a.id > b.id // a 64-bit hash collision; keeps the order total
}

// topN keeps the best n candidates in a heap whose root is the worst kept.
type topN struct {
	n    int
	seed uint64
	h    []candidate
}

func (t *topN) handler(sc *search.SearchContext) (search.DocumentMatchHandler, bool, error) {
	return func(d *search.DocumentMatch) error {
		if d == nil { // end of the search
			return nil
		}
		defer sc.DocumentMatchPool.Put(d)
		// Only a doc that can enter the heap needs its external id (a
		// lookup and an allocation); lower scores are rejected outright.
		if len(t.h) == t.n && d.Score < t.h[0].score {
			return nil
		}
		id, err := sc.IndexReader.ExternalID(d.IndexInternalID)
		if err != nil {
			return err
		}
		c := candidate{id: id, score: d.Score, key: tieKey(t.seed, id)}
		switch {
		case len(t.h) < t.n:
			t.push(c)
		case worse(t.h[0], c):
			t.h[0] = c
			t.down(0)
		}
		return nil
	}, false, nil
}

func (t *topN) push(c candidate) {
	t.h = append(t.h, c)
	for i := len(t.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !worse(t.h[i], t.h[p]) {
			return
		}
		t.h[i], t.h[p] = t.h[p], t.h[i]
		i = p
	}
}

func (t *topN) down(i int) {
	for {
		m := 2*i + 1
		if m >= len(t.h) {
			return
		}
		if r := m + 1; r < len(t.h) && worse(t.h[r], t.h[m]) {
			m = r
		}
		if !worse(t.h[m], t.h[i]) {
			return
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// hits returns the kept candidates best first.
func (t *topN) hits() []Hit {
	slices.SortFunc(t.h, func(a, b candidate) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	out := make([]Hit, len(t.h))
	for i, c := range t.h {
		out[i] = Hit{ID: c.id, Score: c.score}
	}
	return out
}

// tieKey places id in the permutation of seed: FNV-1a from a seed-derived
// offset, then the splitmix64 finaliser so that every bit of seed and id
// affects the order.
func tieKey(seed uint64, id string) uint64 {
	h := mix64(seed)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 0x100000001b3
	}
	return mix64(h)
}

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
