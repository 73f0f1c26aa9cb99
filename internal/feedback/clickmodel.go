package feedback

import (
	"cmp"
	"context"
	"math"
	"slices"
)

// Shown is one item shown on a list: what the list answered (a query, a
// user), the item, its rank, and whether it was clicked.
type Shown struct {
	Subject, Item string
	Rank          int
	Clicked       bool
}

// List is one list a client was shown: on one surface, by one ranker, for
// one subject, in one session, its items by rank.
type List struct {
	Surface, Session, Subject, Ranker string
	Items                             []Shown
}

// Collector groups events, as they are read, into the lists clients were
// shown (one a surface, session, subject and ranker), each item once at
// the rank it was shown at, clicked when a click names it there. A click
// with no impression counts as shown (a client that lost the impression
// still showed it). It keeps one copy of each string, and no event.
type Collector struct {
	events int
	idx    map[[4]string]int
	lists  []List
	strs   map[string]string
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{idx: map[[4]string]int{}, strs: map[string]string{}}
}

// Collect groups events.
func Collect(events []Event) *Collector {
	c := NewCollector()
	for _, e := range events {
		c.Add(e)
	}
	return c
}

// CollectLog groups the events of l.
func CollectLog(ctx context.Context, l Log) (*Collector, error) {
	c := NewCollector()
	err := l.Scan(ctx, func(e Event) error {
		c.Add(e)
		return nil
	})
	return c, err
}

func (c *Collector) intern(s string) string {
	if v, ok := c.strs[s]; ok {
		return v
	}
	c.strs[s] = s
	return s
}

// Add puts e on its list.
func (c *Collector) Add(e Event) {
	c.events++
	k := [4]string{c.intern(e.Surface), c.intern(e.Session), c.intern(e.Subject()), c.intern(e.Ranker())}
	i, ok := c.idx[k]
	if !ok {
		i = len(c.lists)
		c.idx[k] = i
		c.lists = append(c.lists, List{Surface: k[0], Session: k[1], Subject: k[2], Ranker: k[3]})
	}
	l := &c.lists[i]
	// Lists are short (a page of results): a scan beats a map per list.
	j := slices.IndexFunc(l.Items, func(s Shown) bool { return s.Rank == e.Rank && s.Item == e.Item })
	if j < 0 {
		j = len(l.Items)
		l.Items = append(l.Items, Shown{Subject: k[2], Item: c.intern(e.Item), Rank: e.Rank})
	}
	if e.Kind == Click {
		l.Items[j].Clicked = true
	}
}

// Events is how many events were added.
func (c *Collector) Events() int { return c.events }

// Lists returns the lists of surface, in the order of their first event,
// each one's items by rank.
func (c *Collector) Lists(surface string) []List {
	var out []List
	for _, l := range c.lists {
		if l.Surface == surface {
			slices.SortFunc(l.Items, func(a, b Shown) int { return cmp.Compare(a.Rank, b.Rank) })
			out = append(out, l)
		}
	}
	return out
}

// PBM is a position-based click model fitted to lists: an item shown at
// rank k is clicked with probability Examine[k-1] * Attract[subject][item],
// the chance that the user looks at rank k times the chance that the item,
// once seen, is clicked (its relevance to the subject). Examination falls
// with rank the same way on every list, so an item's clicks at a low rank
// count for more than at the top: this is how position bias is removed.
type PBM struct {
	Examine []float64                     // by rank - 1
	Attract map[string]map[string]float64 // subject -> item -> probability
	Shown   map[string]map[string]int     // subject -> item -> times shown
	Iter    int                           // EM iterations run
}

// FitPBM fits the model by expectation-maximisation (Chuklin, Markov and
// de Rijke, Click Models for Web Search, 2015, section 4.2): from 0.5
// everywhere, each iteration sets every parameter to the mean, over the
// impressions it governs, of the posterior that its hidden event
// (examined, attracted) happened: 1 on a click, and on no click
// theta(1-gamma)/(1-theta gamma) for examination, (1-theta)gamma/(1-theta
// gamma) for attraction. It stops when no parameter moves by more than
// 1e-4 (EM's tail is slow: the attraction of an item never clicked creeps
// towards 0), or after maxIter iterations. The impressions are counted once by
// (subject, item, rank, clicked), so an iteration costs the number of
// distinct cells, not of impressions.
func FitPBM(lists []List, maxIter int) PBM {
	type pair struct{ subject, item string }
	type cell struct {
		pair, rank int // pair: index into pairs; rank from 0
		clicked    bool
	}
	ids := map[pair]int{}
	var pairs []pair
	var shown []int
	counts := map[cell]float64{}
	maxRank := 0
	for _, l := range lists {
		for _, s := range l.Items {
			p := pair{s.Subject, s.Item}
			id, ok := ids[p]
			if !ok {
				id = len(pairs)
				ids[p] = id
				pairs, shown = append(pairs, p), append(shown, 0)
			}
			shown[id]++
			counts[cell{id, s.Rank - 1, s.Clicked}]++
			maxRank = max(maxRank, s.Rank)
		}
	}
	cells := make([]cell, 0, len(counts))
	for c := range counts {
		cells = append(cells, c)
	}
	theta, gamma := make([]float64, maxRank), make([]float64, len(pairs))
	for k := range theta {
		theta[k] = 0.5
	}
	for i := range gamma {
		gamma[i] = 0.5
	}
	exSum, exN, atSum := make([]float64, maxRank), make([]float64, maxRank), make([]float64, len(pairs))
	m := PBM{}
	for m.Iter = 1; m.Iter <= maxIter; m.Iter++ {
		clear(exSum)
		clear(exN)
		clear(atSum)
		for _, c := range cells {
			n, th, g := counts[c], theta[c.rank], gamma[c.pair]
			e, a := 1.0, 1.0
			if !c.clicked {
				none := 1 - th*g
				e, a = th*(1-g)/none, (1-th)*g/none
			}
			exSum[c.rank] += n * e
			exN[c.rank] += n
			atSum[c.pair] += n * a
		}
		moved := 0.0
		for k := range theta {
			if exN[k] > 0 {
				v := exSum[k] / exN[k]
				moved, theta[k] = max(moved, math.Abs(v-theta[k])), v
			}
		}
		for i := range gamma {
			v := atSum[i] / float64(shown[i])
			moved, gamma[i] = max(moved, math.Abs(v-gamma[i])), v
		}
		if moved < 1e-4 {
			break
		}
	}
	m.Iter = min(m.Iter, maxIter)
	m.Examine = theta
	m.Attract, m.Shown = map[string]map[string]float64{}, map[string]map[string]int{}
	for i, p := range pairs {
		if m.Attract[p.subject] == nil {
			m.Attract[p.subject], m.Shown[p.subject] = map[string]float64{}, map[string]int{}
		}
		m.Attract[p.subject][p.item], m.Shown[p.subject][p.item] = gamma[i], shown[i]
	}
	return m
}

// JudgeOptions say which clicked items become relevance judgments.
type JudgeOptions struct {
	// MinShown is how many times an item must have been shown for a query
	// to be judged (default 5): fewer impressions say little.
	MinShown int
	// Threshold is the attraction (PBM.Attract) at or above which an item
	// is judged relevant (default 0.5: more likely clicked than not, once
	// seen).
	Threshold float64
	// MaxIter bounds the EM iterations (default 1000).
	MaxIter int
}

func (o *JudgeOptions) fill() {
	if o.MinShown <= 0 {
		o.MinShown = 5
	}
	if o.Threshold <= 0 {
		o.Threshold = 0.5
	}
	if o.MaxIter <= 0 {
		o.MaxIter = 1000
	}
}

// Judgment is a query and the items its clicks judge relevant to it,
// sorted.
type Judgment struct {
	Query    string
	Relevant []string
}

// Judgments turns the lists of search results users were shown (and what
// they clicked) into relevance judgments, what a --validation file gives: a
// position-based click model is fitted to the lists (FitPBM), and an item
// shown at least MinShown times for a query is relevant to it when its
// attraction is at least Threshold. Queries with no relevant item are left
// out; the rest come sorted by query.
func Judgments(lists []List, opt JudgeOptions) ([]Judgment, PBM) {
	opt.fill()
	m := FitPBM(lists, opt.MaxIter)
	var out []Judgment
	for subject, items := range m.Attract {
		q := Judgment{Query: subject}
		for item, gamma := range items {
			if m.Shown[subject][item] >= opt.MinShown && gamma >= opt.Threshold {
				q.Relevant = append(q.Relevant, item)
			}
		}
		if len(q.Relevant) > 0 {
			slices.Sort(q.Relevant)
			out = append(out, q)
		}
	}
	slices.SortFunc(out, func(a, b Judgment) int { return cmp.Compare(a.Query, b.Query) })
	return out, m
}
