package eval

import (
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/rerank"
	"github.com/kernelrank/kernelrank/search"
)

// On the demo's fish query the copies of the crawfish drawings (each filed
// in two folders, with identical features) no longer vote for one another:
// under the built-in default, before their votes counted once, eight of
// them filled the top 10; now copies share their cluster's score.
func TestDemoNearDuplicatesDoNotFillFish(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes the demo corpus")
	}
	ix, err := demoIndex(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	e := search.New(ix, nil, search.Options{})
	req := search.DefaultRequest("fish")
	req.K = 10
	r, err := e.Search(t.Context(), req)
	if err != nil || r.Rerank.Strategy != rerank.DefaultStrategy || len(r.Results) != 10 {
		t.Fatalf("fish: %+v, %v", r.Rerank, err)
	}
	crawfish := 0
	for _, h := range r.Results {
		if strings.Contains(h.ID, "crawfish") {
			crawfish++
		}
	}
	if crawfish > 2 {
		t.Errorf("%d crawfish drawings in fish's top 10", crawfish)
	}
}
