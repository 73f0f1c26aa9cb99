package demo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A drawing's curated folders (its labels: the openclipart package's
// category/subcategory, chosen by the packagers, not by the authors) are a
// ground truth that does not depend on its keywords. They give the demo
// two sets of labelled queries, held apart by their words: the queries the
// search page suggests and a new user tries first (Suggested), judged by
// hand-picked folders, for measuring; and a validation set derived from
// the folders alone (Validation), on which the demo's default re-ranker is
// chosen as any deployment's is (the search facade's SelectDefault).

// Suggested are the queries the search page suggests (its placeholder: cat,
// flower, car) and the ones a new user tried first (dog, fish, tree), each
// with the folder whose drawings answer it (the folder or any below it).
var Suggested = []struct{ Query, Folder string }{
	{"cat", "animals/mammals"}, {"dog", "animals/mammals"}, {"car", "transportation"},
	{"fish", "animals/fish"}, {"flower", "plants"}, {"tree", "plants"},
}

// Validation rules: a folder gives a validation query when it holds at
// least minFolder drawings (itself and below) and its name, as a word, is a
// whole tag of at least minTagged drawings.
const (
	minFolder = 15
	minTagged = 10
)

type record struct {
	ID     string   `json:"id"`
	Tags   []string `json:"tags"`
	Labels []string `json:"labels"`
}

func records() ([]record, error) {
	b, err := corpus.ReadFile("corpus/corpus.jsonl")
	if err != nil {
		return nil, err
	}
	var out []record
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("demo corpus line %d: %w", len(out)+1, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// under reports whether a drawing with labels is filed in folder or below it.
func under(labels []string, folder string) bool {
	return slices.ContainsFunc(labels, func(l string) bool { return l == folder || strings.HasPrefix(l, folder+"/") })
}

func relevant(recs []record, folder string) map[string]bool {
	out := map[string]bool{}
	for _, r := range recs {
		if under(r.Labels, folder) {
			out[r.ID] = true
		}
	}
	return out
}

// Query is a labelled query: its words and the ids of the drawings that
// answer it.
type Query struct {
	Query    string
	Relevant map[string]bool
}

// SuggestedQueries are Suggested as labelled queries.
func SuggestedQueries() ([]Query, error) {
	recs, err := records()
	if err != nil {
		return nil, err
	}
	out := make([]Query, len(Suggested))
	for i, s := range Suggested {
		out[i] = Query{Query: s.Query, Relevant: relevant(recs, s.Folder)}
	}
	return out, nil
}

// Validation is the demo's built-in validation set, derived from the
// folders alone, in the order of the folders' names. Every folder (a label,
// or the category of one) of at least minFolder drawings whose name is one
// word (no "_" or "-") gives the query that word, or that word less a final
// "s" when more drawings have that as a whole tag ("birds": "bird"), if at
// least minTagged drawings have it as a tag; its relevant drawings are
// those filed in the folder or below. A query word of Suggested is left
// out, so the queries a user is shown are not the ones the default was
// chosen on. The folder "unsorted" is no category: it is left out too.
func Validation() ([]Query, error) {
	recs, err := records()
	if err != nil {
		return nil, err
	}
	folders := map[string]bool{}
	tagged := map[string]int{}
	for _, r := range recs {
		for _, l := range r.Labels {
			folders[l] = true
			folders[strings.Split(l, "/")[0]] = true
		}
		seen := map[string]bool{}
		for _, t := range r.Tags {
			if t = strings.ToLower(t); !seen[t] {
				seen[t] = true
				tagged[t]++
			}
		}
	}
	held := map[string]bool{}
	for _, s := range Suggested {
		held[s.Query] = true
	}
	var out []Query
	for _, f := range slices.Sorted(maps.Keys(folders)) {
		word := f[strings.LastIndex(f, "/")+1:]
		if strings.ContainsAny(word, "_-") || f == "unsorted" {
			continue
		}
		if one := strings.TrimSuffix(word, "s"); tagged[one] > tagged[word] {
			word = one
		}
		rel := relevant(recs, f)
		if len(rel) < minFolder || tagged[word] < minTagged || held[word] {
			continue
		}
		out = append(out, Query{Query: word, Relevant: rel})
	}
	return out, nil
}
