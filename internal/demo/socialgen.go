// # The generated social network
//
// GenerateSocial builds the bundled social demo: a clearly labelled,
// generated network (no real person) whose users own photos that are the
// demo corpus' drawings, for the friend and group recommenders. WriteDir
// writes it in the kernelrank import format of package social, which
// social.LoadDir reads with no problem. The generator is deterministic: the
// same seed and options give byte-identical files (DefaultSocialSeed is the
// bundled one). SOCIAL.md documents the model, its parameters
// (SocialModel, DefaultSocialModel) and the measured statistics. In short,
// with the defaults:
//
//   - 600 users u001..u600, each with a home city (8 real cities, weighted),
//     1-3 latent interests, which are corpus folders with a subcategory and
//     at least 20 drawings ("food/fruit", "animals/birds": 42 of them; the
//     first drawn in proportion to the folder's size, a further one from
//     the same category half of the time), and a sociability w ~
//     Pareto(2.2) capped at 25, which makes hubs;
//   - photos, 1 + geometric (mean 3 in all): a drawing of one of the user's
//     interests with probability 0.85, else any drawing; each drawing is
//     owned once: the photo id is the drawing id, its tags the drawing's
//     keywords, its visual vector features.Visual of the embedded PNG; a
//     time in 2009-2012; a position around home (0.04 degree), in another
//     city (0.15) or none (0.1). Profile tags: each interest's subcategory
//     (0.5); places: the home city (0.7); attrs: the latent city and
//     interests (no kernel reads attrs);
//   - 30 groups: one a city, the 15 most followed interests, and the 7
//     interest-and-city pairs with most users; users join their interests'
//     groups (0.6), their city's (0.4), matching interest-and-city ones
//     (0.6), and 0.5 others on average;
//   - friendships: a Chung-Lu graph with homophily, P(i~j) = min(1,
//     c w_i w_j h_ij), h_ij = exp(2 shared interests + 2 [same city] +
//     min(common groups, 3) + 2 v_ij), v_ij the visual similarity of the two
//     users' photos (the visual kernel's RBF: a shared taste in pictures), c
//     set for a mean degree of 14; then triadic closure (a random user
//     introduces two of its friends, who accept with probability h/(1+h))
//     adds 6 to the mean degree; an isolated user gets one partner;
//   - comments, Poisson(10 w / mean w) a user: on a friend's photo (0.6), on
//     the photo of a user sharing an interest (0.25), else anyone's;
//   - faves, Poisson(12) a user: from a friend's faves (the feed, 0.3), else
//     a friend's photo (0.35), a photo of an interest (0.4) or any photo,
//     drawn by a log-normal popularity.
//
// Each of the seven modalities of the thesis (visual, textual, comments,
// groups, contacts, location, faves) thus carries real but imperfect
// evidence of friendship.
package demo

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kernelrank/kernelrank/features"
	"github.com/kernelrank/kernelrank/social"
)

// DefaultSocialSeed is the seed of the bundled social demo.
const DefaultSocialSeed uint64 = 20240601

// SocialOptions sizes the generated network. The zero value gives the
// defaults.
type SocialOptions struct {
	// Users is the number of users (default 600, at most 1000: every photo
	// is a distinct drawing of the 4,000).
	Users int
	// Groups is the number of groups (default 30; at least the number of
	// cities plus 2).
	Groups int
	// Workers computes the visual vectors in parallel (default GOMAXPROCS).
	Workers int
	// Model holds the model parameters; nil means DefaultSocialModel().
	Model *SocialModel
}

// City is a home city of the generated users.
type City struct {
	ID       string // lower-case slug, used in places, attrs and group names
	Lat, Lon float64
	Weight   float64 // relative share of the users
}

// SocialModel holds the parameters of the generator (SOCIAL.md explains
// each). Probabilities are in [0, 1]; the values are used as given, so start
// from DefaultSocialModel to change one.
type SocialModel struct {
	Cities []City
	// MinTopicDrawings: the interests are the corpus folders with a
	// subcategory ("food/fruit") holding at least this many drawings.
	MinTopicDrawings int
	// InterestCounts[k] is the probability that a user has k+1 interests.
	InterestCounts []float64
	// SameCategory is the probability that a further interest is drawn from
	// the category of the first ("food/desserts" after "food/fruit").
	SameCategory float64
	// Sociability w ~ Pareto(SociabilityAlpha), capped at SociabilityMax.
	SociabilityAlpha, SociabilityMax float64

	// PhotosMean is the mean number of photos a user (1 + geometric).
	PhotosMean float64
	// InterestPhoto is the probability that a photo shows one of the user's
	// interests.
	InterestPhoto float64
	// NoGeo and Travel are the probabilities that a photo has no position,
	// or one in a city other than home (drawn by weight); GeoSpread is the
	// standard deviation of a position around the city centre, in degrees
	// of latitude (longitude scaled by 1/cos(latitude)).
	NoGeo, Travel, GeoSpread float64
	// ProfileTag: a user lists each interest's subcategory ("fruit") as a
	// profile tag with this probability; Place: a user lists the home city
	// as a place with this probability.
	ProfileTag, Place float64
	// PhotoStart and PhotoEnd bound the photo times (uniform, whole seconds).
	PhotoStart, PhotoEnd time.Time

	// Join probabilities: a group of one of the user's interests, the group
	// of the home city, an interest-and-city group matching both;
	// RandomGroups is the mean number of other groups joined; a group with
	// fewer than MinGroupSize members is topped up with matching users.
	JoinInterest, JoinCity, JoinCombo, RandomGroups float64
	MinGroupSize                                    int

	// Friendship: phase 1 P(i~j) = min(1, c w_i w_j h_ij) with
	// h_ij = exp(BetaInterest*shared interests + BetaCity*[same city] +
	// BetaGroups*min(common groups, MaxCommonGroups) + BetaVisual*v_ij),
	// v_ij = exp(-d_ij^2/sigma^2) the visual similarity of the users' photos
	// (d_ij the distance of their mean visual vectors, sigma the mean
	// distance: a shared taste in pictures), and c set so that the
	// expected mean degree is BaseDegree; phase 2 triadic closure adds
	// ClosureDegree to the mean degree (two friends of a random user become
	// friends with probability h/(1+h)).
	BetaInterest, BetaCity, BetaGroups, BetaVisual float64
	MaxCommonGroups                                int
	BaseDegree, ClosureDegree                      float64

	// Comments: a user writes Poisson(CommentsMean * w / mean w) comments,
	// each on a friend's photo (CommentFriend), on the photo of a user who
	// shares an interest (CommentInterest), else on anyone's.
	CommentsMean, CommentFriend, CommentInterest float64
	// Faves: a user faves Poisson(FavesMean) photos. Each is, with
	// probability FaveFeed, taken from the feed: one of the own finds of a
	// random friend. The others are own finds: a friend's photo
	// (FaveFriend), a photo of one of the user's interests (FaveInterest),
	// else any photo; within a pool, a photo is drawn in proportion to its
	// popularity exp(PopularitySigma * N(0,1)).
	FavesMean, FaveFeed, FaveFriend, FaveInterest, PopularitySigma float64
}

// DefaultSocialModel returns the parameters of the bundled demo.
func DefaultSocialModel() SocialModel {
	return SocialModel{
		Cities: []City{
			{"paris", 48.8566, 2.3522, 3},
			{"london", 51.5074, -0.1278, 3},
			{"new-york", 40.7128, -74.0060, 3},
			{"tokyo", 35.6762, 139.6503, 3},
			{"berlin", 52.5200, 13.4050, 2},
			{"sao-paulo", -23.5505, -46.6333, 2},
			{"sydney", -33.8688, 151.2093, 2},
			{"toronto", 43.6532, -79.3832, 2},
		},
		MinTopicDrawings: 20,
		InterestCounts:   []float64{0.35, 0.40, 0.25},
		SameCategory:     0.5,
		SociabilityAlpha: 2.2,
		SociabilityMax:   25,
		PhotosMean:       3,
		InterestPhoto:    0.85,
		NoGeo:            0.1,
		Travel:           0.15,
		GeoSpread:        0.04,
		ProfileTag:       0.5,
		Place:            0.7,
		PhotoStart:       time.Date(2009, 1, 1, 0, 0, 0, 0, time.UTC),
		PhotoEnd:         time.Date(2013, 1, 1, 0, 0, 0, 0, time.UTC),
		JoinInterest:     0.6,
		JoinCity:         0.4,
		JoinCombo:        0.6,
		RandomGroups:     0.5,
		MinGroupSize:     3,
		BetaInterest:     2.0,
		BetaCity:         2.0,
		BetaGroups:       1.0,
		BetaVisual:       2.0,
		MaxCommonGroups:  3,
		BaseDegree:       14,
		ClosureDegree:    6,
		CommentsMean:     10,
		CommentFriend:    0.6,
		CommentInterest:  0.25,
		FavesMean:        12,
		FaveFeed:         0.3,
		FaveFriend:       0.35,
		FaveInterest:     0.4,
		PopularitySigma:  0.7,
	}
}

// SocialDemo is a generated network. Users, Friends, Memberships and
// Comments are what WriteDir writes; Profiles and the group themes are the
// latent truth the data was drawn from (also in each user's Attrs).
type SocialDemo struct {
	Seed    uint64
	Options SocialOptions // with the defaults filled in
	Model   SocialModel
	// Users are sorted by id (u001, u002, ...), which is also the order of
	// social.Dataset.Users after loading: indices agree.
	Users []social.User
	// Profiles[i] is the latent profile of Users[i].
	Profiles []SocialProfile
	// Groups are sorted by name in natural order (the order of
	// social.Dataset.Groups after loading).
	Groups []SocialGroup
	// Friends holds each friendship once as (i, j), i < j, sorted.
	Friends [][2]int
	// Memberships holds (user, group) pairs, sorted.
	Memberships [][2]int
	// Comments holds one entry a comment (a line of comments.csv), in the
	// order written.
	Comments []SocialComment
}

// SocialProfile is the latent truth about a user.
type SocialProfile struct {
	City        string   // City.ID
	Interests   []string // corpus folders, the first the main one
	Sociability float64
}

// SocialGroup is a group and its theme: a city, an interest, or both.
type SocialGroup struct {
	Name  string
	City  string // "" for an interest group
	Topic string // "" for a city group
}

// SocialComment is one comment of Author (a user index) on a photo of Owner.
type SocialComment struct {
	Author, Owner int
	Photo         string
}

// drawing is one entry of the embedded corpus.
type drawing struct {
	ID     string   `json:"id"`
	Tags   []string `json:"tags"`
	Image  string   `json:"image"`
	Labels []string `json:"labels"`
}

// loadDrawings reads the embedded corpus.jsonl (sorted by id).
func loadDrawings() ([]drawing, error) {
	b, err := corpus.ReadFile("corpus/corpus.jsonl")
	if err != nil {
		return nil, err
	}
	var out []drawing
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var d drawing
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("demo corpus line %d: %w", len(out)+1, err)
		}
		out = append(out, d)
	}
	return out, sc.Err()
}

// socialGen holds the state of one generation.
type socialGen struct {
	seed  uint64
	m     SocialModel
	n     int
	draws []drawing

	topics      []string       // interest folders, sorted
	topicIndex  map[string]int // folder -> index into topics
	topicPool   [][]int        // drawings of each topic
	topicUsers  [][]int        // users with each topic as an interest
	cityCum     []float64
	cityIndex   map[string]int
	userCity    []int
	userTopics  [][]int // interests, main first
	sociability []float64

	users []social.User
	used  []bool // drawing already a photo

	photos      []photoRef // every photo, in user order
	userPhotos  [][]int    // indices into photos
	topicPhotos [][]int    // photos of each topic (by the drawing's labels)

	groups     []SocialGroup // in creation order
	userGroups [][]int       // sorted group indices (creation order)

	// vis holds exp(-d_ij^2 / sigma^2) for i < j (pairIndex), d_ij the
	// distance of the users' mean visual vectors, sigma the mean distance.
	vis []float64

	adj     [][]int  // friends in the order added
	adjBits []uint64 // n x n bit matrix of friendships
	words   int
}

type photoRef struct {
	owner, drawing int
	popularity     float64
}

// GenerateSocial generates the social demo network with the given seed (use
// DefaultSocialSeed for the bundled one). The result depends only on seed,
// opts (Workers aside) and the embedded corpus.
func GenerateSocial(seed uint64, opts SocialOptions) (*SocialDemo, error) {
	if opts.Users == 0 {
		opts.Users = 600
	}
	if opts.Groups == 0 {
		opts.Groups = 30
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	m := DefaultSocialModel()
	if opts.Model != nil {
		m = *opts.Model
	}
	opts.Model = nil
	if err := m.check(opts); err != nil {
		return nil, err
	}
	draws, err := loadDrawings()
	if err != nil {
		return nil, err
	}
	g := &socialGen{seed: seed, m: m, n: opts.Users, draws: draws}
	g.setup()
	if len(g.topics) == 0 {
		return nil, fmt.Errorf("demo: no corpus folder has %d drawings", m.MinTopicDrawings)
	}
	g.makeUsers()
	if err := g.makePhotos(); err != nil {
		return nil, err
	}
	if err := g.computeVisual(opts.Workers); err != nil {
		return nil, err
	}
	g.visualSimilarity()
	g.makeGroups(opts.Groups)
	g.makeFriends()
	comments := g.makeComments()
	g.makeFaves()
	return g.result(opts, comments), nil
}

func (m *SocialModel) check(opts SocialOptions) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("demo: "+format, args...)) }
	if opts.Users < 20 || opts.Users > 1000 {
		bad("Users = %d, want 20..1000", opts.Users)
	}
	if len(m.Cities) == 0 {
		bad("no cities")
	}
	seen := map[string]bool{}
	for _, c := range m.Cities {
		if c.ID == "" || strings.ContainsAny(c.ID, ", \t") || seen[c.ID] || !(c.Weight > 0) ||
			math.Abs(c.Lat) > 80 || math.Abs(c.Lon) > 180 {
			bad("city %+v: want a unique id without commas or spaces, a positive weight, |lat| <= 80", c)
		}
		seen[c.ID] = true
	}
	if opts.Groups < len(m.Cities)+2 || opts.Groups > 200 {
		bad("Groups = %d, want %d..200", opts.Groups, len(m.Cities)+2)
	}
	if m.MinTopicDrawings < 1 {
		bad("MinTopicDrawings = %d, want >= 1", m.MinTopicDrawings)
	}
	if len(m.InterestCounts) == 0 || slices.ContainsFunc(m.InterestCounts, func(p float64) bool { return !(p >= 0) }) ||
		!(sum(m.InterestCounts) > 0) {
		bad("InterestCounts %v: want non-negative weights, not all zero", m.InterestCounts)
	}
	for name, p := range map[string]float64{
		"SameCategory": m.SameCategory, "InterestPhoto": m.InterestPhoto, "NoGeo": m.NoGeo, "Travel": m.Travel,
		"ProfileTag": m.ProfileTag, "Place": m.Place, "JoinInterest": m.JoinInterest, "JoinCity": m.JoinCity,
		"JoinCombo": m.JoinCombo, "CommentFriend": m.CommentFriend, "CommentInterest": m.CommentInterest,
		"FaveFeed": m.FaveFeed, "FaveFriend": m.FaveFriend, "FaveInterest": m.FaveInterest,
		"CommentFriend+CommentInterest": m.CommentFriend + m.CommentInterest,
		"FaveFriend+FaveInterest":       m.FaveFriend + m.FaveInterest,
	} {
		if !(p >= 0 && p <= 1) {
			bad("%s = %v, want a probability", name, p)
		}
	}
	for name, v := range map[string]float64{
		"SociabilityAlpha": m.SociabilityAlpha, "SociabilityMax - 1": m.SociabilityMax - 1, "PhotosMean - 1": m.PhotosMean - 1,
		"GeoSpread": m.GeoSpread, "RandomGroups": m.RandomGroups, "BetaInterest": m.BetaInterest,
		"BetaCity": m.BetaCity, "BetaGroups": m.BetaGroups, "BetaVisual": m.BetaVisual, "BaseDegree": m.BaseDegree,
		"ClosureDegree": m.ClosureDegree, "CommentsMean": m.CommentsMean, "FavesMean": m.FavesMean,
		"PopularitySigma": m.PopularitySigma,
	} {
		if !(v >= 0) || math.IsInf(v, 0) {
			bad("%s = %v, want a finite value >= 0", name, v)
		}
	}
	if !(m.SociabilityAlpha > 0) || !(m.BaseDegree > 0) {
		bad("SociabilityAlpha and BaseDegree must be positive")
	}
	if m.MinGroupSize < 1 || m.MaxCommonGroups < 0 {
		bad("MinGroupSize >= 1 and MaxCommonGroups >= 0 wanted")
	}
	if !m.PhotoEnd.After(m.PhotoStart) {
		bad("PhotoEnd must follow PhotoStart")
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

func sum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// setup finds the interest folders and the city weights.
func (g *socialGen) setup() {
	count := map[string]int{}
	for _, d := range g.draws {
		for _, l := range d.Labels {
			count[l]++
		}
	}
	for l, c := range count {
		if strings.Contains(l, "/") && c >= g.m.MinTopicDrawings {
			g.topics = append(g.topics, l)
		}
	}
	slices.Sort(g.topics)
	g.topicIndex = map[string]int{}
	for t, l := range g.topics {
		g.topicIndex[l] = t
	}
	g.topicPool = make([][]int, len(g.topics))
	for k, d := range g.draws {
		for _, l := range d.Labels {
			if t, ok := g.topicIndex[l]; ok {
				g.topicPool[t] = append(g.topicPool[t], k)
			}
		}
	}
	w := make([]float64, len(g.m.Cities))
	g.cityIndex = map[string]int{}
	for c, city := range g.m.Cities {
		w[c] = city.Weight
		g.cityIndex[city.ID] = c
	}
	g.cityCum = cumsum(w)
	g.used = make([]bool, len(g.draws))
}

func category(topic string) string {
	c, _, _ := strings.Cut(topic, "/")
	return c
}

// makeUsers draws every user's city, interests, sociability, profile tags,
// places and attributes.
func (g *socialGen) makeUsers() {
	r := newSocialRNG(g.seed, phaseUsers)
	n, m := g.n, g.m
	width := len(strconv.Itoa(n))
	sizes := make([]float64, len(g.topics))
	for t := range g.topics {
		sizes[t] = float64(len(g.topicPool[t]))
	}
	countCum := cumsum(m.InterestCounts)
	g.users = make([]social.User, n)
	g.userCity = make([]int, n)
	g.userTopics = make([][]int, n)
	g.sociability = make([]float64, n)
	g.topicUsers = make([][]int, len(g.topics))
	for i := range n {
		u := &g.users[i]
		u.ID = fmt.Sprintf("u%0*d", width, i+1)
		c := r.weighted(g.cityCum)
		g.userCity[i] = c
		k := min(1+r.weighted(countCum), len(g.topics))
		var mine []int
		for len(mine) < k {
			sameCat := len(mine) > 0 && r.bernoulli(m.SameCategory)
			w := g.interestWeights(sizes, mine, sameCat)
			if sum(w) == 0 { // no other folder in the category
				w = g.interestWeights(sizes, mine, false)
			}
			mine = append(mine, r.weighted(cumsum(w)))
		}
		g.userTopics[i] = mine
		for _, t := range mine {
			g.topicUsers[t] = append(g.topicUsers[t], i)
		}
		g.sociability[i] = min(r.pareto(m.SociabilityAlpha), m.SociabilityMax)
		u.Attrs = []string{"city:" + m.Cities[c].ID}
		for _, t := range mine {
			u.Attrs = append(u.Attrs, "interest:"+g.topics[t])
			if r.bernoulli(m.ProfileTag) {
				u.Tags = append(u.Tags, path.Base(g.topics[t]))
			}
		}
		if r.bernoulli(m.Place) {
			u.Places = []string{m.Cities[c].ID}
		}
	}
}

// interestWeights returns the weights of the folders a user with the
// interests mine may add: their sizes, 0 for those taken and, with sameCat,
// for those outside the category of the first interest.
func (g *socialGen) interestWeights(sizes []float64, mine []int, sameCat bool) []float64 {
	w := slices.Clone(sizes)
	for t := range w {
		if slices.Contains(mine, t) || (sameCat && category(g.topics[t]) != category(g.topics[mine[0]])) {
			w[t] = 0
		}
	}
	return w
}

// makePhotos gives every user 1 + geometric(PhotosMean - 1) photos, each a
// drawing no one else owns.
func (g *socialGen) makePhotos() error {
	r := newSocialRNG(g.seed, phasePhotos)
	m := g.m
	remaining := make([][]int, len(g.topics))
	for t := range g.topics {
		remaining[t] = slices.Clone(g.topicPool[t])
	}
	free := len(g.draws)
	take := func(t int) int { // a free drawing of topic t, or -1
		for len(remaining[t]) > 0 {
			k := r.intn(len(remaining[t]))
			d := remaining[t][k]
			remaining[t][k] = remaining[t][len(remaining[t])-1]
			remaining[t] = remaining[t][:len(remaining[t])-1]
			if !g.used[d] {
				return d
			}
		}
		return -1
	}
	span := int64(m.PhotoEnd.Sub(m.PhotoStart) / time.Second)
	g.userPhotos = make([][]int, g.n)
	for i := range g.n {
		count := 1 + r.geometric(m.PhotosMean-1)
		mine := g.userTopics[i]
		for range count {
			if free == 0 {
				return fmt.Errorf("demo: the %d drawings of the corpus are all taken: fewer users or photos wanted", len(g.draws))
			}
			d := -1
			if r.bernoulli(m.InterestPhoto) {
				start := r.intn(len(mine))
				for k := range mine {
					if d = take(mine[(start+k)%len(mine)]); d >= 0 {
						break
					}
				}
			}
			for d < 0 { // noise, or the interests are exhausted
				if k := r.intn(len(g.draws)); !g.used[k] {
					d = k
				}
			}
			g.used[d] = true
			free--
			g.userPhotos[i] = append(g.userPhotos[i], len(g.photos))
			g.photos = append(g.photos, photoRef{owner: i, drawing: d, popularity: math.Exp(m.PopularitySigma * r.normal())})
			p := social.Photo{
				ID:   g.draws[d].ID,
				Tags: slices.Clone(g.draws[d].Tags),
				Time: m.PhotoStart.Add(time.Duration(r.intn(int(span))) * time.Second),
			}
			if !r.bernoulli(m.NoGeo) {
				c := g.userCity[i]
				if r.bernoulli(m.Travel) {
					c = r.weighted(g.cityCum)
				}
				city := m.Cities[c]
				lat := city.Lat + m.GeoSpread*r.normal()
				lon := city.Lon + m.GeoSpread*r.normal()/math.Cos(city.Lat*math.Pi/180)
				p.Geo = &social.LatLon{Lat: round5(max(-90, min(90, lat))), Lon: round5(wrapLon(lon))}
			}
			g.users[i].Photos = append(g.users[i].Photos, p)
		}
		// Photos in time order (stable: equal times keep the draw order).
		ph := g.users[i].Photos
		order := make([]int, len(ph))
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(a, b int) int { return ph[a].Time.Compare(ph[b].Time) })
		sortedPh := make([]social.Photo, len(ph))
		sortedRef := make([]int, len(ph))
		for k, o := range order {
			sortedPh[k], sortedRef[k] = ph[o], g.userPhotos[i][o]
		}
		g.users[i].Photos, g.userPhotos[i] = sortedPh, sortedRef
	}
	g.topicPhotos = make([][]int, len(g.topics))
	for p, ref := range g.photos {
		for _, l := range g.draws[ref.drawing].Labels {
			if t, ok := g.topicIndex[l]; ok {
				g.topicPhotos[t] = append(g.topicPhotos[t], p)
			}
		}
	}
	return nil
}

func round5(x float64) float64 { return math.Round(x*1e5) / 1e5 }

func wrapLon(x float64) float64 {
	for x > 180 {
		x -= 360
	}
	for x < -180 {
		x += 360
	}
	return x
}

// makeGroups creates the groups (one a city, then interest groups and
// interest-and-city groups by the number of users they fit) and the
// memberships.
func (g *socialGen) makeGroups(total int) {
	r := newSocialRNG(g.seed, phaseGroups)
	m := g.m
	for _, c := range m.Cities {
		g.groups = append(g.groups, SocialGroup{Name: c.ID + "-photowalks", City: c.ID})
	}
	rest := total - len(m.Cities)
	nInterest := min((2*rest+2)/3, len(g.topics))
	byUsers := make([]int, len(g.topics))
	for t := range byUsers {
		byUsers[t] = t
	}
	slices.SortStableFunc(byUsers, func(a, b int) int { return len(g.topicUsers[b]) - len(g.topicUsers[a]) })
	for _, t := range byUsers[:nInterest] {
		g.groups = append(g.groups, SocialGroup{Name: strings.ReplaceAll(g.topics[t], "/", "-") + "-fans", Topic: g.topics[t]})
	}
	type combo struct{ t, c, users int }
	var combos []combo
	for t := range g.topics {
		per := make([]int, len(m.Cities))
		for _, i := range g.topicUsers[t] {
			per[g.userCity[i]]++
		}
		for c, k := range per {
			if k >= 2 {
				combos = append(combos, combo{t, c, k})
			}
		}
	}
	slices.SortStableFunc(combos, func(a, b combo) int { return b.users - a.users })
	for _, co := range combos[:min(len(combos), total-len(g.groups))] {
		g.groups = append(g.groups, SocialGroup{
			Name:  m.Cities[co.c].ID + "-" + strings.ReplaceAll(g.topics[co.t], "/", "-"),
			City:  m.Cities[co.c].ID,
			Topic: g.topics[co.t],
		})
	}
	fits := func(i int, gr SocialGroup) (city, topic bool) {
		city = gr.City != "" && m.Cities[g.userCity[i]].ID == gr.City
		topic = gr.Topic != "" && slices.Contains(g.userTopics[i], g.topicIndex[gr.Topic])
		return
	}
	pRandom := m.RandomGroups / float64(len(g.groups))
	g.userGroups = make([][]int, g.n)
	size := make([]int, len(g.groups))
	for i := range g.n {
		for k, gr := range g.groups {
			city, topic := fits(i, gr)
			p := pRandom
			switch {
			case gr.City != "" && gr.Topic != "" && city && topic:
				p = m.JoinCombo
			case gr.Topic == "" && city:
				p = m.JoinCity
			case gr.City == "" && topic:
				p = m.JoinInterest
			}
			if r.bernoulli(p) {
				g.userGroups[i] = append(g.userGroups[i], k)
				size[k]++
			}
		}
	}
	// Top up small groups: users that fit the theme best first, in a random
	// order among equals.
	for k, gr := range g.groups {
		if size[k] >= m.MinGroupSize {
			continue
		}
		perm := r.perm(g.n)
		slices.SortStableFunc(perm, func(a, b int) int {
			score := func(i int) int {
				c, t := fits(i, gr)
				return b2i(c) + b2i(t)
			}
			return score(b) - score(a)
		})
		for _, i := range perm {
			if size[k] >= m.MinGroupSize {
				break
			}
			if !slices.Contains(g.userGroups[i], k) {
				g.userGroups[i] = append(g.userGroups[i], k)
				slices.Sort(g.userGroups[i])
				size[k]++
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// perm returns a random permutation of 0..n-1 (Fisher-Yates).
func (r *socialRNG) perm(n int) []int {
	p := make([]int, n)
	for k := range p {
		p[k] = k
	}
	for k := n - 1; k > 0; k-- {
		j := r.intn(k + 1)
		p[k], p[j] = p[j], p[k]
	}
	return p
}

// visualSimilarity sets g.vis from the users' mean photo vectors.
func (g *socialGen) visualSimilarity() {
	n := g.n
	means := make([][]float64, n)
	for i, u := range g.users {
		means[i] = make([]float64, features.Dim)
		for _, p := range u.Photos {
			for k, x := range p.Visual {
				means[i][k] += x / float64(len(u.Photos))
			}
		}
	}
	g.vis = make([]float64, 0, n*(n-1)/2)
	total := 0.0
	for i := range n {
		for j := i + 1; j < n; j++ {
			d2 := 0.0
			for k, x := range means[i] {
				y := x - means[j][k]
				d2 += y * y
			}
			g.vis = append(g.vis, d2)
			total += math.Sqrt(d2)
		}
	}
	sigma := total / float64(len(g.vis))
	for k, d2 := range g.vis {
		if sigma > 0 {
			g.vis[k] = math.Exp(-d2 / (sigma * sigma))
		} else {
			g.vis[k] = 1
		}
	}
}

// pairIndex returns the position of (i, j), i < j, in the row-major list of
// the pairs of n users.
func pairIndex(n, i, j int) int { return i*n - i*(i+1)/2 + j - i - 1 }

// homophily returns h_ij = exp(BetaInterest*shared interests +
// BetaCity*[same city] + BetaGroups*min(common groups, MaxCommonGroups) +
// BetaVisual*v_ij).
func (g *socialGen) homophily(i, j int) float64 {
	if i > j {
		i, j = j, i
	}
	shared := 0
	for _, t := range g.userTopics[i] {
		if slices.Contains(g.userTopics[j], t) {
			shared++
		}
	}
	x := g.m.BetaInterest * float64(shared)
	if g.userCity[i] == g.userCity[j] {
		x += g.m.BetaCity
	}
	x += g.m.BetaGroups * float64(min(intersectSorted(g.userGroups[i], g.userGroups[j]), g.m.MaxCommonGroups))
	x += g.m.BetaVisual * g.vis[pairIndex(g.n, i, j)]
	return math.Exp(x)
}

// intersectSorted counts the values two sorted slices share.
func intersectSorted(a, b []int) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

func (g *socialGen) areFriends(i, j int) bool {
	return g.adjBits[i*g.words+j/64]&(1<<(j%64)) != 0
}

func (g *socialGen) link(i, j int) {
	g.adjBits[i*g.words+j/64] |= 1 << (j % 64)
	g.adjBits[j*g.words+i/64] |= 1 << (i % 64)
	g.adj[i] = append(g.adj[i], j)
	g.adj[j] = append(g.adj[j], i)
}

// makeFriends draws the friendships: the homophilous Chung-Lu graph, triadic
// closure, and a partner for every isolated user.
func (g *socialGen) makeFriends() {
	n, m := g.n, g.m
	g.words = (n + 63) / 64
	g.adjBits = make([]uint64, n*g.words)
	g.adj = make([][]int, n)
	s := make([]float64, 0, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			s = append(s, g.sociability[i]*g.sociability[j]*g.homophily(i, j))
		}
	}
	target := min(float64(n)*m.BaseDegree/2, float64(len(s)))
	expected := func(c float64) float64 {
		e := 0.0
		for _, v := range s {
			e += min(1, c*v)
		}
		return e
	}
	lo, hi := 0.0, target/sum(s)
	for expected(hi) < target && hi < 1e300 {
		lo, hi = hi, 2*hi
	}
	for range 100 {
		mid := (lo + hi) / 2
		if expected(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	c := (lo + hi) / 2
	r := newSocialRNG(g.seed, phaseFriends)
	k := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			if r.bernoulli(c * s[k]) {
				g.link(i, j)
			}
			k++
		}
	}
	// Triadic closure.
	rc := newSocialRNG(g.seed, phaseClosure)
	want := int(math.Round(float64(n) * m.ClosureDegree / 2))
	for added, tries := 0, 0; added < want && tries < 100*want; tries++ {
		u := rc.intn(n)
		if len(g.adj[u]) < 2 {
			continue
		}
		a := rc.intn(len(g.adj[u]))
		b := rc.intn(len(g.adj[u]) - 1)
		if b >= a {
			b++
		}
		v, w := g.adj[u][a], g.adj[u][b]
		if g.areFriends(v, w) {
			continue
		}
		h := g.homophily(v, w)
		if rc.bernoulli(h / (1 + h)) {
			g.link(v, w)
			added++
		}
	}
	// Isolated users get one partner, drawn in proportion to w_i w_j h_ij.
	for i := range n {
		if len(g.adj[i]) > 0 {
			continue
		}
		w := make([]float64, n)
		for j := range n {
			if j != i {
				w[j] = g.sociability[i] * g.sociability[j] * g.homophily(i, j)
			}
		}
		g.link(i, rc.weighted(cumsum(w)))
	}
}

// friendPairs returns the friendships as sorted (i, j), i < j.
func (g *socialGen) friendPairs() [][2]int {
	var out [][2]int
	for i := range g.n {
		for _, j := range g.adj[i] {
			if i < j {
				out = append(out, [2]int{i, j})
			}
		}
	}
	slices.SortFunc(out, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return out
}

// interestPeer returns a user other than i sharing one of i's interests, or
// -1.
func (g *socialGen) interestPeer(r *socialRNG, i int) int {
	mine := g.userTopics[i]
	start := r.intn(len(mine))
	for k := range mine {
		pool := g.topicUsers[mine[(start+k)%len(mine)]]
		if len(pool) < 2 {
			continue
		}
		j := pool[r.intn(len(pool)-1)]
		if j == i {
			j = pool[len(pool)-1]
		}
		return j
	}
	return -1
}

// otherUser returns a uniform user other than i.
func (g *socialGen) otherUser(r *socialRNG, i int) int {
	j := r.intn(g.n - 1)
	if j >= i {
		j++
	}
	return j
}

// makeComments draws the comments.
func (g *socialGen) makeComments() []SocialComment {
	r := newSocialRNG(g.seed, phaseComments)
	m := g.m
	meanW := sum(g.sociability) / float64(g.n)
	var out []SocialComment
	for a := range g.n {
		count := r.poisson(m.CommentsMean * g.sociability[a] / meanW)
		for range count {
			owner := -1
			x := r.float()
			switch {
			case x < m.CommentFriend:
				owner = g.adj[a][r.intn(len(g.adj[a]))]
			case x < m.CommentFriend+m.CommentInterest:
				owner = g.interestPeer(r, a)
			}
			if owner < 0 {
				owner = g.otherUser(r, a)
			}
			// Half of the time the author picks a photo of its interests.
			photos := g.userPhotos[owner]
			var liked []int
			for _, p := range photos {
				if g.hasInterestIn(a, g.photos[p].drawing) {
					liked = append(liked, p)
				}
			}
			pick := photos
			if len(liked) > 0 && r.bernoulli(0.5) {
				pick = liked
			}
			p := pick[r.intn(len(pick))]
			out = append(out, SocialComment{Author: a, Owner: owner, Photo: g.draws[g.photos[p].drawing].ID})
		}
	}
	return out
}

// hasInterestIn reports whether drawing d is in one of user i's interests.
func (g *socialGen) hasInterestIn(i, d int) bool {
	for _, l := range g.draws[d].Labels {
		if t, ok := g.topicIndex[l]; ok && slices.Contains(g.userTopics[i], t) {
			return true
		}
	}
	return false
}

// makeFaves draws the faves: first every user's own finds (a friend's
// photo, a photo of an interest, any photo, by popularity), then the faves
// taken from the feed (a find of a random friend).
func (g *socialGen) makeFaves() {
	r := newSocialRNG(g.seed, phaseFaves)
	m := g.m
	popCum := func(ps []int) []float64 {
		w := make([]float64, len(ps))
		for k, p := range ps {
			w[k] = g.photos[p].popularity
		}
		return cumsum(w)
	}
	all := make([]int, len(g.photos))
	for p := range all {
		all[p] = p
	}
	allCum := popCum(all)
	topicCum := make([][]float64, len(g.topics))
	for t, ps := range g.topicPhotos {
		if len(ps) > 0 {
			topicCum[t] = popCum(ps)
		}
	}
	userCum := make([][]float64, g.n)
	for i, ps := range g.userPhotos {
		userCum[i] = popCum(ps)
	}
	faved := make([]map[int]bool, g.n)
	finds := make([][]int, g.n) // own finds, in the order drawn
	fromFeed := make([]int, g.n)
	for i := range g.n {
		faved[i] = map[int]bool{}
		count := min(r.poisson(m.FavesMean), len(g.photos)-len(g.userPhotos[i]))
		for range count {
			if r.bernoulli(m.FaveFeed) {
				fromFeed[i]++
			}
		}
		own := count - fromFeed[i]
		for tries := 0; len(finds[i]) < own && tries < 20*own; tries++ {
			p := -1
			x := r.float()
			switch {
			case x < m.FaveFriend:
				f := g.adj[i][r.intn(len(g.adj[i]))]
				p = g.userPhotos[f][r.weighted(userCum[f])]
			case x < m.FaveFriend+m.FaveInterest:
				t := g.userTopics[i][r.intn(len(g.userTopics[i]))]
				if len(g.topicPhotos[t]) > 0 {
					p = g.topicPhotos[t][r.weighted(topicCum[t])]
				}
			}
			if p < 0 {
				p = all[r.weighted(allCum)]
			}
			if g.photos[p].owner == i || faved[i][p] {
				continue
			}
			faved[i][p] = true
			finds[i] = append(finds[i], p)
		}
	}
	for i := range g.n {
		list := slices.Clone(finds[i])
		for tries, got := 0, 0; got < fromFeed[i] && tries < 20*fromFeed[i]; tries++ {
			f := g.adj[i][r.intn(len(g.adj[i]))]
			if len(finds[f]) == 0 {
				continue
			}
			p := finds[f][r.intn(len(finds[f]))]
			if g.photos[p].owner == i || faved[i][p] {
				continue
			}
			faved[i][p] = true
			list = append(list, p)
			got++
		}
		slices.Sort(list) // photo order: owner, then the order drawn
		for _, p := range list {
			g.users[i].Faves = append(g.users[i].Faves, g.draws[g.photos[p].drawing].ID)
		}
	}
}

// computeVisual sets the visual vector of every photo: features.Visual of
// the embedded PNG, each value rounded to 6 significant digits (what
// users.jsonl holds, so that the generator's and the loaded vectors agree).
func (g *socialGen) computeVisual(workers int) error {
	type job struct{ i, k int }
	jobs := make(chan job)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range min(workers, len(g.photos)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for jb := range jobs {
				p := &g.users[jb.i].Photos[jb.k]
				v, err := drawingVisual(g.draws[g.photos[g.userPhotos[jb.i][jb.k]].drawing])
				if err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
					continue
				}
				p.Visual = v
			}
		}()
	}
	for i := range g.n {
		for k := range g.users[i].Photos {
			jobs <- job{i, k}
		}
	}
	close(jobs)
	wg.Wait()
	return firstErr
}

// drawingVisual returns the rounded visual vector of an embedded drawing.
func drawingVisual(d drawing) ([]float64, error) {
	b, err := corpus.ReadFile("corpus/" + d.Image)
	if err != nil {
		return nil, fmt.Errorf("demo: %s: %w", d.ID, err)
	}
	img, err := features.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("demo: %s: %w", d.ID, err)
	}
	v := features.Visual(img)
	for k, x := range v {
		v[k], _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	}
	return v, nil
}

// result assembles the SocialDemo: groups in natural order of their names,
// memberships and friendships sorted.
func (g *socialGen) result(opts SocialOptions, comments []SocialComment) *SocialDemo {
	d := &SocialDemo{Seed: g.seed, Options: opts, Model: g.m, Users: g.users, Comments: comments}
	order := make([]int, len(g.groups)) // sorted position -> creation index
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int {
		if social.NaturalLess(g.groups[a].Name, g.groups[b].Name) {
			return -1
		}
		if social.NaturalLess(g.groups[b].Name, g.groups[a].Name) {
			return 1
		}
		return 0
	})
	rank := make([]int, len(g.groups)) // creation index -> sorted position
	for pos, k := range order {
		d.Groups = append(d.Groups, g.groups[k])
		rank[k] = pos
	}
	for i, gs := range g.userGroups {
		for _, k := range gs {
			d.Memberships = append(d.Memberships, [2]int{i, rank[k]})
		}
	}
	slices.SortFunc(d.Memberships, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	d.Friends = g.friendPairs()
	d.Profiles = make([]SocialProfile, g.n)
	for i := range g.n {
		p := SocialProfile{City: g.m.Cities[g.userCity[i]].ID, Sociability: g.sociability[i]}
		for _, t := range g.userTopics[i] {
			p.Interests = append(p.Interests, g.topics[t])
		}
		d.Profiles[i] = p
	}
	return d
}
