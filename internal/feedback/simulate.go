package feedback

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// SimRanker is a simulated ranker: it orders a query's items by their
// relevance plus Gaussian noise of this standard deviation, fixed per
// query (the same list every time), so less noise is a better ranker.
type SimRanker struct {
	Name  string
	Noise float64
}

// SimOptions describe a simulated click log: Sessions sessions, each one
// query of Queries, answered by one of Rankers (uniformly, as an A/B
// split), the top K of the query's Items items shown, and clicks drawn
// from a position-based model: an item at rank k is clicked with
// probability Examine(k) x its relevance. A fraction Relevant of each
// query's items have relevance High, the rest Low.
type SimOptions struct {
	Rankers        []SimRanker
	Queries, Items int
	K, Sessions    int
	Relevant       float64
	High, Low      float64
	// Examine is the examination probability of rank k (from 1); nil:
	// 1/k.
	Examine func(k int) float64
	Seed    uint64
}

// Simulated is a generated click log with the truth it came from.
type Simulated struct {
	Events []Event
	// Relevance is each query's items' click probability once examined.
	Relevance map[string]map[string]float64
}

// Simulate generates the events of opt: for each session its K
// impressions, then its clicks, at one-second steps from a fixed time.
// The same options give the same log.
func Simulate(opt SimOptions) (Simulated, error) {
	if len(opt.Rankers) == 0 || opt.Queries < 1 || opt.Items < 1 || opt.K < 1 || opt.K > MaxRank || opt.Sessions < 0 {
		return Simulated{}, errors.New("simulate: needs rankers, and positive queries, items and k (at most 1000)")
	}
	if opt.Relevant < 0 || opt.Relevant > 1 || opt.High < 0 || opt.High > 1 || opt.Low < 0 || opt.Low > 1 {
		return Simulated{}, errors.New("simulate: the relevant fraction and the relevances are probabilities")
	}
	examine := opt.Examine
	if examine == nil {
		examine = func(k int) float64 { return 1 / float64(k) }
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x5eed))
	sim := Simulated{Relevance: map[string]map[string]float64{}}
	lists := map[[2]int][]string{} // (ranker, query) -> its top K
	for q := range opt.Queries {
		query := fmt.Sprintf("q%d", q)
		rel := map[string]float64{}
		items := make([]string, opt.Items)
		for i := range items {
			items[i] = fmt.Sprintf("%s-i%d", query, i)
			rel[items[i]] = opt.Low
			if rng.Float64() < opt.Relevant {
				rel[items[i]] = opt.High
			}
		}
		sim.Relevance[query] = rel
		for r, rk := range opt.Rankers {
			score := map[string]float64{}
			for _, it := range items {
				score[it] = rel[it] + rk.Noise*rng.NormFloat64()
			}
			list := slices.Clone(items)
			slices.SortStableFunc(list, func(a, b string) int { return cmp.Compare(score[b], score[a]) })
			lists[[2]int{r, q}] = list[:min(opt.K, len(list))]
		}
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for s := range opt.Sessions {
		r, q := rng.IntN(len(opt.Rankers)), rng.IntN(opt.Queries)
		query := fmt.Sprintf("q%d", q)
		base := Event{Surface: Search, Query: query, Rerank: opt.Rankers[r].Name, Session: fmt.Sprintf("s%d", s)}
		list := lists[[2]int{r, q}]
		var clicks []Event
		for k, item := range list {
			e := base
			e.Kind, e.Item, e.Rank = Impression, item, k+1
			e.ClientTime, e.ServerTime = t, t
			sim.Events = append(sim.Events, e)
			if rng.Float64() < math.Min(1, examine(k+1))*sim.Relevance[query][item] {
				e.Kind = Click
				clicks = append(clicks, e)
			}
		}
		for _, e := range clicks {
			t = t.Add(time.Second)
			e.ClientTime, e.ServerTime = t, t
			sim.Events = append(sim.Events, e)
		}
		t = t.Add(time.Second)
	}
	return sim, nil
}
