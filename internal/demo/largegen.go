package demo

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
)

// LargeOptions sizes a generated network of friendships and group
// memberships only (no photos, tags or places), for scaling measurements
// up to millions of users. The zero value gives YouTube's shape
// (../shared/data/social/youtube: 77,381 users, mean degree 10.1, 0.39
// groups and 3.4 memberships a user, group sizes of median 2 and largest
// 8% of the users).
type LargeOptions struct {
	Users int // default 10,000
	// MeanDegree is the number of friendships drawn a user, times 2
	// (default 15: after the repeats are dropped, about 10 friends a user,
	// median 6, as YouTube's 10.1, median 3).
	MeanDegree float64
	// GroupsPerUser is the number of groups over the number of users
	// (default 0.39); GroupSizeAlpha the tail of the group sizes,
	// Pareto(GroupSizeAlpha) floored (default 1.0: median 2), capped at
	// MaxGroupShare of the users (default 0.08).
	GroupsPerUser, GroupSizeAlpha, MaxGroupShare float64
	// DegreeAlpha is the tail of the users' sociability, Pareto(DegreeAlpha)
	// capped at MaxSociability times the users (defaults 1.3 and 0.03: at
	// 77,381 users the largest degree is about 2,000, YouTube's 2,147; the
	// crawl of all YouTube, 1.1M users, has 28,754).
	DegreeAlpha, MaxSociability float64
	// Community is the mean size of the communities friendships and
	// groups form in (default 100), Local the share of friendships and
	// members drawn from one's own community (default 0.8).
	Community int
	Local     float64
}

func (o *LargeOptions) defaults() error {
	for _, p := range []struct {
		v   *float64
		def float64
	}{{&o.MeanDegree, 15}, {&o.GroupsPerUser, 0.39}, {&o.GroupSizeAlpha, 1}, {&o.MaxGroupShare, 0.08}, {&o.DegreeAlpha, 1.3}, {&o.MaxSociability, 0.03}, {&o.Local, 0.8}} {
		if *p.v == 0 {
			*p.v = p.def
		}
	}
	if o.Users == 0 {
		o.Users = 10000
	}
	if o.Community == 0 {
		o.Community = 100
	}
	switch {
	case o.Users < 2 || o.Users > math.MaxInt32:
		return fmt.Errorf("demo: %d users: want 2 to %d", o.Users, math.MaxInt32)
	case !(o.MeanDegree > 0) || o.MeanDegree >= float64(o.Users-1):
		return fmt.Errorf("demo: mean degree %v: want above 0 and below the users", o.MeanDegree)
	case !(o.GroupsPerUser > 0) || !(o.GroupSizeAlpha > 0) || !(o.MaxGroupShare > 0) || o.MaxGroupShare > 1 || !(o.DegreeAlpha > 1):
		return fmt.Errorf("demo: groups per user %v, group size alpha %v, largest group share %v and degree alpha %v: want positive, the share at most 1, the degree alpha above 1",
			o.GroupsPerUser, o.GroupSizeAlpha, o.MaxGroupShare, o.DegreeAlpha)
	case !(o.MaxSociability > 0):
		return fmt.Errorf("demo: largest sociability share %v: want positive", o.MaxSociability)
	case o.Community < 2 || o.Local < 0 || o.Local > 1:
		return fmt.Errorf("demo: community size %d and local share %v: want at least 2 and in [0, 1]", o.Community, o.Local)
	}
	return nil
}

// LargeNetwork is a generated network: users 0..Users-1, friendships i < j
// (unique), and each group's members (sorted, unique; every user in at
// least one group).
type LargeNetwork struct {
	Users   int
	Friends [][2]int32
	Groups  [][]int32
}

// GenerateLarge builds a network with YouTube's shape in time and memory
// linear in users plus friendships plus memberships: users fall into
// communities (uniformly, Community users on average) and have a
// sociability w ~ Pareto(DegreeAlpha), capped; each of the Users*MeanDegree/2
// friendships picks its first end in proportion to w, and its second in
// proportion to w within the first's community (Local) or among all
// users; a group has a home community and floor(Pareto(GroupSizeAlpha))
// members (capped), each from the home community (with probability Local,
// scaled down by Community/size for groups larger than a community) or
// anyone, in proportion to w; a user in no group then joins one of its
// community's. Duplicate pairs and self-pairs are dropped, so the mean
// degree comes out a little under MeanDegree. Deterministic for a seed.
func GenerateLarge(seed uint64, opts LargeOptions) (*LargeNetwork, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	n := opts.Users
	r := newSocialRNG(seed, phaseUsers)
	communities := max(1, n/opts.Community)
	home := make([]int32, n)
	w := make([]float64, n)
	for i := range home {
		home[i] = int32(r.intn(communities))
		w[i] = min(r.pareto(opts.DegreeAlpha), max(1, opts.MaxSociability*float64(n)))
	}
	// members[c] lists community c's users, with cumulative weights.
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	sort.SliceStable(order, func(a, b int) bool { return home[order[a]] < home[order[b]] })
	start := make([]int, communities+1)
	for _, u := range order {
		start[home[u]+1]++
	}
	for c := 0; c < communities; c++ {
		start[c+1] += start[c]
	}
	cum := make([]float64, n) // cumulative weight within each community, in order's order
	for c := 0; c < communities; c++ {
		s := 0.0
		for p := start[c]; p < start[c+1]; p++ {
			s += w[order[p]]
			cum[p] = s
		}
	}
	all := cumsum(w)
	pickAll := func(r *socialRNG) int32 { return int32(r.weighted(all)) }
	pickIn := func(r *socialRNG, c int32) int32 {
		lo, hi := start[c], start[c+1]
		if lo == hi {
			return pickAll(r)
		}
		x := r.float() * cum[hi-1]
		p := lo + sort.SearchFloat64s(cum[lo:hi], x)
		return order[min(p, hi-1)]
	}

	r = newSocialRNG(seed, phaseFriends)
	edges := int(float64(n) * opts.MeanDegree / 2)
	pairs := make([][2]int32, 0, edges)
	for range edges {
		a := pickAll(r)
		b := pickAll(r)
		if r.bernoulli(opts.Local) {
			b = pickIn(r, home[a])
		}
		if a != b {
			pairs = append(pairs, [2]int32{min(a, b), max(a, b)})
		}
	}
	slices.SortFunc(pairs, func(x, y [2]int32) int {
		if x[0] != y[0] {
			return int(x[0] - y[0])
		}
		return int(x[1] - y[1])
	})
	pairs = slices.Compact(pairs)

	r = newSocialRNG(seed, phaseGroups)
	ng := max(1, int(float64(n)*opts.GroupsPerUser))
	largest := max(1, int(opts.MaxGroupShare*float64(n)))
	groups := make([][]int32, ng)
	groupHome := make([]int32, ng)
	inGroup := make([]bool, n)
	for g := range groups {
		c := int32(r.intn(communities))
		groupHome[g] = c
		size := min(largest, int(r.pareto(opts.GroupSizeAlpha)))
		local := opts.Local * min(1, float64(opts.Community)/float64(size)) // a big group outgrows its community
		for range size {
			u := pickAll(r)
			if r.bernoulli(local) {
				u = pickIn(r, c)
			}
			groups[g] = append(groups[g], u)
			inGroup[u] = true
		}
	}
	byHome := make([][]int, communities)
	for g, c := range groupHome {
		byHome[c] = append(byHome[c], g)
	}
	for u, in := range inGroup {
		if !in {
			g := r.intn(ng)
			if own := byHome[home[u]]; len(own) > 0 {
				g = own[r.intn(len(own))]
			}
			groups[g] = append(groups[g], int32(u))
		}
	}
	for g := range groups {
		slices.Sort(groups[g])
		groups[g] = slices.Compact(groups[g])
	}
	return &LargeNetwork{Users: n, Friends: pairs, Groups: groups}, nil
}

// WriteBlogCatalog writes the network in the BlogCatalog layout that
// social.LoadDir reads (nodes.csv, edges.csv, groups.csv, group-edges.csv;
// ids from 1), creating dir.
func (l *LargeNetwork) WriteBlogCatalog(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, body func(w *bufio.Writer)) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		body(w)
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	id := func(w *bufio.Writer, v int) { w.WriteString(strconv.Itoa(v + 1)) }
	ids := func(count int) func(w *bufio.Writer) { // the ids 1..count, a line each
		return func(w *bufio.Writer) {
			for v := range count {
				id(w, v)
				w.WriteByte('\n')
			}
		}
	}
	steps := []struct {
		name string
		body func(w *bufio.Writer)
	}{
		{"nodes.csv", ids(l.Users)},
		{"edges.csv", func(w *bufio.Writer) {
			for _, p := range l.Friends {
				id(w, int(p[0]))
				w.WriteByte(',')
				id(w, int(p[1]))
				w.WriteByte('\n')
			}
		}},
		{"groups.csv", ids(len(l.Groups))},
		{"group-edges.csv", func(w *bufio.Writer) {
			for g, members := range l.Groups {
				for _, u := range members {
					id(w, int(u))
					w.WriteByte(',')
					id(w, g)
					w.WriteByte('\n')
				}
			}
		}},
	}
	for _, s := range steps {
		if err := write(s.name, s.body); err != nil {
			return err
		}
	}
	return nil
}
