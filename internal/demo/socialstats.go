package demo

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
)

// SocialStats summarises a generated network.
type SocialStats struct {
	Users, Photos, Groups, Friendships, Memberships int
	Comments                                        int // comments (lines of comments.csv)
	CommentPairs                                    int // (author, owner) pairs with at least one comment
	Faves                                           int
	Degree, GroupSize, PhotosPerUser                Summary
	// Transitivity is the global clustering coefficient: 3 x triangles /
	// connected triples.
	Transitivity float64
	// Homophily compares friend pairs with all other pairs of users, one
	// modality a row (see SocialStats.Homophily names).
	Homophily []Homophily
}

// Summary is the distribution of a count over users or groups.
type Summary struct {
	Min, Median, P90, P99, Max int
	Mean                       float64
}

func (s Summary) String() string {
	return fmt.Sprintf("mean %.2f, min %d, median %d, p90 %d, p99 %d, max %d", s.Mean, s.Min, s.Median, s.P90, s.P99, s.Max)
}

// Homophily is the mean of a pair statistic over friend pairs and over
// non-friend pairs (all of them). For every row but "visual distance" the
// statistic is 0/1 and the mean a fraction.
type Homophily struct {
	Name                string
	Friends, NonFriends float64
}

// The rows of SocialStats.Homophily, in order.
const (
	HomophilyInterest = "shared interest"   // latent: an interest in common
	HomophilyCity     = "same city"         // latent: the same home city
	HomophilyVisual   = "visual distance"   // visual: distance of the mean photo vectors
	HomophilyTag      = "shared tag"        // textual: a profile or photo tag in common
	HomophilyComment  = "comment exchanged" // comments: a comment either way
	HomophilyGroup    = "common group"      // groups
	HomophilyFriend   = "common friend"     // contacts
	HomophilyCell     = "common place"      // location: a place or 0.1-degree photo cell in common
	HomophilyFave     = "common fave"       // faves: a photo both faved
)

func summarize(v []int) Summary {
	if len(v) == 0 {
		return Summary{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	at := func(q float64) int { return s[min(len(s)-1, int(q*float64(len(s))))] }
	t := 0
	for _, x := range s {
		t += x
	}
	return Summary{Min: s[0], Median: at(0.5), P90: at(0.9), P99: at(0.99), Max: s[len(s)-1], Mean: float64(t) / float64(len(s))}
}

// Stats computes the statistics of the network (over all n(n-1)/2 pairs;
// O(n^2 (d + interests + groups + tags + faves + cells)), well under a
// second for 600 users).
func (d *SocialDemo) Stats() SocialStats {
	n := len(d.Users)
	st := SocialStats{Users: n, Groups: len(d.Groups), Friendships: len(d.Friends), Memberships: len(d.Memberships), Comments: len(d.Comments)}
	deg := make([]int, n)
	words := (n + 63) / 64
	adj := make([]uint64, n*words)
	for _, f := range d.Friends {
		deg[f[0]]++
		deg[f[1]]++
		adj[f[0]*words+f[1]/64] |= 1 << (f[1] % 64)
		adj[f[1]*words+f[0]/64] |= 1 << (f[0] % 64)
	}
	st.Degree = summarize(deg)
	size := make([]int, len(d.Groups))
	groups := make([][]int, n)
	for _, m := range d.Memberships {
		size[m[1]]++
		groups[m[0]] = append(groups[m[0]], m[1])
	}
	st.GroupSize = summarize(size)
	photos := make([]int, n)
	// Items of each user as sorted ids: tags, places and cells, faves.
	ids := map[string]int{}
	id := func(s string) int {
		k, ok := ids[s]
		if !ok {
			k = len(ids)
			ids[s] = k
		}
		return k
	}
	tags, cells, faves := make([][]int, n), make([][]int, n), make([][]int, n)
	mean := make([][]float64, n)
	sortUnique := func(x []int) []int { slices.Sort(x); return slices.Compact(x) }
	for i, u := range d.Users {
		photos[i] = len(u.Photos)
		st.Photos += len(u.Photos)
		st.Faves += len(u.Faves)
		for _, t := range u.Tags {
			tags[i] = append(tags[i], id("tag:"+t))
		}
		for _, pl := range u.Places {
			cells[i] = append(cells[i], id("place:"+pl))
		}
		for _, f := range u.Faves {
			faves[i] = append(faves[i], id("fave:"+f))
		}
		for _, p := range u.Photos {
			for _, t := range p.Tags {
				tags[i] = append(tags[i], id("tag:"+t))
			}
			if p.Geo != nil {
				cells[i] = append(cells[i], id("geo:"+strconv.Itoa(int(math.Floor(p.Geo.Lat/0.1)))+":"+strconv.Itoa(int(math.Floor(p.Geo.Lon/0.1)))))
			}
			if len(p.Visual) > 0 {
				if mean[i] == nil {
					mean[i] = make([]float64, len(p.Visual))
				}
				for k, x := range p.Visual {
					mean[i][k] += x / float64(len(u.Photos))
				}
			}
		}
		tags[i], cells[i], faves[i] = sortUnique(tags[i]), sortUnique(cells[i]), sortUnique(faves[i])
	}
	st.PhotosPerUser = summarize(photos)
	exchanged := map[[2]int]bool{}
	pairs := map[[2]int]bool{}
	for _, c := range d.Comments {
		pairs[[2]int{c.Author, c.Owner}] = true
		exchanged[[2]int{min(c.Author, c.Owner), max(c.Author, c.Owner)}] = true
	}
	st.CommentPairs = len(pairs)

	// Transitivity: closed triples over all triples.
	triangles, triples := 0, 0
	for _, f := range d.Friends {
		for w := range words {
			triangles += bits.OnesCount64(adj[f[0]*words+w] & adj[f[1]*words+w])
		}
	}
	for _, k := range deg {
		triples += k * (k - 1) / 2
	}
	if triples > 0 {
		st.Transitivity = float64(triangles) / float64(triples) // each triangle is met once an edge: 3 x triangles
	}

	names := []string{HomophilyInterest, HomophilyCity, HomophilyVisual, HomophilyTag, HomophilyComment,
		HomophilyGroup, HomophilyFriend, HomophilyCell, HomophilyFave}
	var sumF, sumN [9]float64
	nf, nn := 0, 0
	b := func(x bool) float64 {
		if x {
			return 1
		}
		return 0
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			common := false
			for w := range words {
				if adj[i*words+w]&adj[j*words+w] != 0 {
					common = true
					break
				}
			}
			dist := 0.0
			if mean[i] != nil && mean[j] != nil {
				for k := range mean[i] {
					x := mean[i][k] - mean[j][k]
					dist += x * x
				}
				dist = math.Sqrt(dist)
			}
			v := [9]float64{
				b(intersectStrings(d.Profiles[i].Interests, d.Profiles[j].Interests)),
				b(d.Profiles[i].City == d.Profiles[j].City),
				dist,
				b(intersectSorted(tags[i], tags[j]) > 0),
				b(exchanged[[2]int{i, j}]),
				b(intersectSorted(groups[i], groups[j]) > 0),
				b(common),
				b(intersectSorted(cells[i], cells[j]) > 0),
				b(intersectSorted(faves[i], faves[j]) > 0),
			}
			if adj[i*words+j/64]&(1<<(j%64)) != 0 {
				nf++
				for k := range v {
					sumF[k] += v[k]
				}
			} else {
				nn++
				for k := range v {
					sumN[k] += v[k]
				}
			}
		}
	}
	for k, name := range names {
		h := Homophily{Name: name}
		if nf > 0 {
			h.Friends = sumF[k] / float64(nf)
		}
		if nn > 0 {
			h.NonFriends = sumN[k] / float64(nn)
		}
		st.Homophily = append(st.Homophily, h)
	}
	return st
}

// HomophilyOf returns the row of the given name.
func (st SocialStats) HomophilyOf(name string) (Homophily, bool) {
	for _, h := range st.Homophily {
		if h.Name == name {
			return h, true
		}
	}
	return Homophily{}, false
}

func intersectStrings(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
