package recommend

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
)

// A model ranking on demand with a cache answers as the model without it,
// whether the ranking is computed, cached, or longer than what is cached.
func TestWithCacheAnswersAsComputed(t *testing.T) {
	m := trainT(t, sharedFaves(t), Options{})
	c, err := m.WithCache(1<<20, 5)
	if err != nil {
		t.Fatal(err)
	}
	for u := range m.ds.N() {
		for _, k := range []int{3, 5, 3, 8} { // computed, cached, cached, beyond the cache
			want, wantScores := m.topFriends(u, k)
			got, scores := c.topFriends(u, k)
			if !slices.Equal(got, want) || !slices.Equal(scores, wantScores) {
				t.Fatalf("user %d, k %d: %v %v, want %v %v", u, k, got, scores, want, wantScores)
			}
			wantG, _ := m.topGroups(u, k)
			gotG, _ := c.topGroups(u, k)
			if !slices.Equal(gotG, wantG) {
				t.Fatalf("user %d, k %d: groups %v, want %v", u, k, gotG, wantG)
			}
		}
	}
	if n := c.cached.cache.EstimatedSize(); n == 0 {
		t.Error("nothing was cached")
	}
	// Explanations: answers from the cache equal the model's.
	for u := range m.ds.N() {
		want, err := m.RecommendFriends(u, 5)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the ranking computed, then cached
			got, err := c.RecommendFriends(u, 5)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("user %d: cached answer %+v, want %+v", u, got, want)
			}
		}
	}
	if _, err := m.WithCache(100, 50); !errors.Is(err, learners.ErrInput) {
		t.Errorf("a 100-byte cache for rankings of 50: err = %v", err)
	}
}
