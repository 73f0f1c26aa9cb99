package demo

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kernelrank/kernelrank/features"
	"github.com/kernelrank/kernelrank/social"
)

// The default network is generated once for the tests that read it.
var (
	defaultOnce sync.Once
	defaultDemo *SocialDemo
	defaultErr  error
)

func defaultSocial(t *testing.T) *SocialDemo {
	t.Helper()
	defaultOnce.Do(func() { defaultDemo, defaultErr = GenerateSocial(DefaultSocialSeed, SocialOptions{}) })
	if defaultErr != nil {
		t.Fatal(defaultErr)
	}
	return defaultDemo
}

// writeAndLoad writes d into a temporary directory and loads it back,
// failing on any import problem.
func writeAndLoad(t *testing.T, d *SocialDemo) (string, *social.Dataset) {
	t.Helper()
	dir := t.TempDir()
	if err := d.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	format, err := social.DetectFormat(dir)
	if err != nil || format != social.FormatKernelrank {
		t.Fatalf("DetectFormat = %q, %v; want %q", format, err, social.FormatKernelrank)
	}
	ds, rep, err := social.LoadDir(dir, social.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Format != social.FormatKernelrank || ds.Format != social.FormatKernelrank {
		t.Errorf("loaded as %q / %q, want %q", rep.Format, ds.Format, social.FormatKernelrank)
	}
	if n := len(rep.Problems) + rep.MoreProblems; n > 0 || rep.Skipped() > 0 {
		t.Fatalf("%d import problems, %d skipped:\n%s", n, rep.Skipped(), rep)
	}
	for _, f := range rep.Files {
		if f.SelfLoops > 0 || f.Duplicates > 0 || f.Records != f.Lines {
			t.Errorf("%s: %d lines, %d records, %d self-loops, %d duplicates; want every line a record",
				f.Name, f.Lines, f.Records, f.SelfLoops, f.Duplicates)
		}
	}
	return dir, ds
}

// TestSocialDefaultStatistics checks the statistics the default model is
// designed for: sizes, every user with photos and friends, 1-3 interests, a
// mean degree in [15, 25] with hubs, non-empty groups, and homophily.
func TestSocialDefaultStatistics(t *testing.T) {
	d := defaultSocial(t)
	st := d.Stats()
	t.Logf("photos %d (%s); groups %d (%s); friendships %d (degree %s), transitivity %.3f; memberships %d; comments %d (%d pairs); faves %d",
		st.Photos, st.PhotosPerUser, st.Groups, st.GroupSize, st.Friendships, st.Degree, st.Transitivity,
		st.Memberships, st.Comments, st.CommentPairs, st.Faves)
	for _, h := range st.Homophily {
		t.Logf("%-18s friends %.3f non-friends %.3f", h.Name, h.Friends, h.NonFriends)
	}
	if st.Users != 600 || st.Groups != 30 || len(d.Profiles) != 600 {
		t.Fatalf("%d users, %d groups, %d profiles; want 600, 30, 600", st.Users, st.Groups, len(d.Profiles))
	}
	if st.PhotosPerUser.Min < 1 || st.Degree.Min < 1 {
		t.Errorf("a user without photo or friend: photos %s, degree %s", st.PhotosPerUser, st.Degree)
	}
	if st.Degree.Mean < 15 || st.Degree.Mean > 25 {
		t.Errorf("mean degree %.2f, want 15..25", st.Degree.Mean)
	}
	if float64(st.Degree.Max) < 4*st.Degree.Mean || st.Degree.Median >= int(st.Degree.Mean) {
		t.Errorf("degree %s: want hubs (max >= 4 x mean) and a right skew (median below the mean)", st.Degree)
	}
	if st.GroupSize.Min < d.Model.MinGroupSize || st.GroupSize.Min < 1 {
		t.Errorf("group sizes %s, want every group with >= %d members", st.GroupSize, d.Model.MinGroupSize)
	}
	if st.Transitivity < 0.05 {
		t.Errorf("transitivity %.3f: triadic closure left no clustering", st.Transitivity)
	}
	if st.Comments < 3000 || st.Faves < 3000 || st.Memberships < 600 {
		t.Errorf("comments %d, faves %d, memberships %d: want thousands, thousands, >= one a user", st.Comments, st.Faves, st.Memberships)
	}
	for i, p := range d.Profiles {
		if len(p.Interests) < 1 || len(p.Interests) > 3 || p.City == "" {
			t.Fatalf("user %d: profile %+v, want 1-3 interests and a city", i, p)
		}
	}
	// Homophily margins (SOCIAL.md): friends share an interest at least 3
	// times as often as other pairs and 25 points more; a home city 2 times
	// and 15 points more; every modality's statistic is on the friends' side
	// by at least 20% (visual: a mean distance at least 5% shorter).
	hi, _ := st.HomophilyOf(HomophilyInterest)
	if hi.Friends < 3*hi.NonFriends || hi.Friends < hi.NonFriends+0.25 {
		t.Errorf("shared interest: friends %.3f, others %.3f; want >= 3x and +0.25", hi.Friends, hi.NonFriends)
	}
	hc, _ := st.HomophilyOf(HomophilyCity)
	if hc.Friends < 2*hc.NonFriends || hc.Friends < hc.NonFriends+0.15 {
		t.Errorf("same city: friends %.3f, others %.3f; want >= 2x and +0.15", hc.Friends, hc.NonFriends)
	}
	for _, h := range st.Homophily {
		if h.Name == HomophilyVisual {
			if h.Friends > 0.95*h.NonFriends {
				t.Errorf("visual distance: friends %.3f, others %.3f; want friends 5%% closer", h.Friends, h.NonFriends)
			}
			continue
		}
		if h.Friends < 1.2*h.NonFriends || h.Friends >= 0.99 && h.Name != HomophilyFriend {
			t.Errorf("%s: friends %.3f, others %.3f; want friends >= 1.2x others, and not all friends", h.Name, h.Friends, h.NonFriends)
		}
	}
}

// TestSocialPhotosAreCorpusDrawings checks that every photo is a distinct
// drawing of the corpus with the drawing's keywords, a time in the model's
// range, a position near a city (or none) and the drawing's visual vector.
func TestSocialPhotosAreCorpusDrawings(t *testing.T) {
	d := defaultSocial(t)
	draws, err := loadDrawings()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]drawing{}
	for _, dr := range draws {
		byID[dr.ID] = dr
	}
	seen := map[string]bool{}
	geo, interest, photos := 0, 0, 0
	for i, u := range d.Users {
		for _, p := range u.Photos {
			photos++
			dr, ok := byID[p.ID]
			if !ok || seen[p.ID] {
				t.Fatalf("%s: photo %q not a drawing or owned twice", u.ID, p.ID)
			}
			seen[p.ID] = true
			if !slices.Equal(p.Tags, dr.Tags) || len(p.Visual) != features.Dim {
				t.Fatalf("%s: photo %s has tags %v (drawing %v) and %d visual values", u.ID, p.ID, p.Tags, dr.Tags, len(p.Visual))
			}
			if p.Time.Before(d.Model.PhotoStart) || !p.Time.Before(d.Model.PhotoEnd) {
				t.Fatalf("%s: photo time %v outside the model's range", u.ID, p.Time)
			}
			if p.Geo != nil {
				geo++
				near := false
				for _, c := range d.Model.Cities {
					near = near || math.Abs(p.Geo.Lat-c.Lat) < 1 && math.Abs(p.Geo.Lon-c.Lon) < 2
				}
				if !near {
					t.Fatalf("%s: photo %s at %+v, near no city", u.ID, p.ID, *p.Geo)
				}
			}
			for _, l := range dr.Labels {
				if slices.Contains(d.Profiles[i].Interests, l) {
					interest++
					break
				}
			}
		}
	}
	if frac := float64(interest) / float64(photos); frac < 0.75 || frac > 0.95 {
		t.Errorf("%.3f of the photos show an interest of their owner, want about %.2f", frac, d.Model.InterestPhoto)
	}
	if frac := float64(geo) / float64(photos); math.Abs(frac-(1-d.Model.NoGeo)) > 0.05 {
		t.Errorf("%.3f of the photos have a position, want about %.2f", frac, 1-d.Model.NoGeo)
	}
	// The visual vectors are the drawings' features, rounded.
	for _, p := range d.Users[0].Photos {
		img, err := features.Decode(bytes.NewReader(mustRead(t, "corpus/"+byID[p.ID].Image)))
		if err != nil {
			t.Fatal(err)
		}
		for k, x := range features.Visual(img) {
			if math.Abs(x-p.Visual[k]) > 1e-5*math.Max(1, math.Abs(x)) {
				t.Fatalf("%s: visual[%d] = %v, features.Visual gives %v", p.ID, k, p.Visual[k], x)
			}
		}
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := corpus.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSocialLoadsBack writes the default network and loads it with
// social.LoadDir: no problem, the kernelrank format detected, and the
// loaded data set equal to the generator's.
func TestSocialLoadsBack(t *testing.T) {
	d := defaultSocial(t)
	dir, ds := writeAndLoad(t, d)
	if ds.N() != len(d.Users) || len(ds.Groups) != len(d.Groups) {
		t.Fatalf("loaded %d users, %d groups; generated %d, %d", ds.N(), len(ds.Groups), len(d.Users), len(d.Groups))
	}
	if !reflect.DeepEqual(ds.Users, d.Users) {
		for i := range ds.Users {
			if !reflect.DeepEqual(ds.Users[i], d.Users[i]) {
				t.Fatalf("user %d differs after loading:\nloaded    %+v\ngenerated %+v", i, ds.Users[i], d.Users[i])
			}
		}
	}
	for k, g := range d.Groups {
		if ds.Groups[k] != g.Name {
			t.Fatalf("group %d: loaded %q, generated %q", k, ds.Groups[k], g.Name)
		}
	}
	if !slices.Equal(ds.Friends, d.Friends) {
		t.Errorf("friendships differ: loaded %d, generated %d", len(ds.Friends), len(d.Friends))
	}
	if !slices.Equal(ds.Memberships, d.Memberships) {
		t.Errorf("memberships differ: loaded %d, generated %d", len(ds.Memberships), len(d.Memberships))
	}
	counts := map[[2]int]int{}
	for _, c := range d.Comments {
		counts[[2]int{c.Author, c.Owner}]++
	}
	total := 0
	for _, c := range ds.Comments {
		total += c.Count
		if counts[[2]int{c.Author, c.Owner}] != c.Count {
			t.Fatalf("comments %d -> %d: loaded %d, generated %d", c.Author, c.Owner, c.Count, counts[[2]int{c.Author, c.Owner}])
		}
	}
	if len(ds.Comments) != len(counts) || total != len(d.Comments) {
		t.Errorf("loaded %d comment pairs (%d comments), generated %d (%d)", len(ds.Comments), total, len(counts), len(d.Comments))
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil || !strings.Contains(string(readme), "GENERATED DATA") {
		t.Errorf("README.md missing or not labelled as generated (%v)", err)
	}
}

// TestSocialKernels builds all nine base kernels of the loaded network and
// checks that every modality carries real but imperfect evidence of
// friendship: over all pairs, the AUC of the kernel value for telling friends
// from other pairs is above 0.55 (0.6 for the graph kernels), and below 0.97
// for the seven modalities of the thesis.
func TestSocialKernels(t *testing.T) {
	d := defaultSocial(t)
	_, ds := writeAndLoad(t, d)
	ks, err := social.BuildKernels(context.Background(), ds, ds.FullView(), social.KernelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	if !slices.Equal(names, social.AllKernels()) {
		t.Fatalf("kernels %v, want all of %v", names, social.AllKernels())
	}
	n := ds.N()
	friend := make([]bool, n*n)
	for _, f := range ds.Friends {
		friend[f[0]*n+f[1]] = true
	}
	row := make([]float64, n)
	for _, k := range ks {
		if k.K.Dim() != n {
			t.Fatalf("%s: dimension %d, want %d", k.Name, k.K.Dim(), n)
		}
		if k.Name == social.KernelRegLaplacian {
			continue // one CG solve a row; built is enough
		}
		var pos, neg []float64
		for i := range n {
			k.K.Row(i, row)
			for j := i + 1; j < n; j++ {
				if friend[i*n+j] {
					pos = append(pos, row[j])
				} else {
					neg = append(neg, row[j])
				}
			}
		}
		a := auc(pos, neg)
		t.Logf("%-12s AUC %.3f (friends' mean %.4f, others' %.4f)", k.Name, a, mean(pos), mean(neg))
		lo, hi := 0.55, 0.97
		if k.Name == social.KernelFriends || k.Name == social.KernelAdamicAdar {
			lo = 0.6
		}
		if k.Name == social.KernelAdamicAdar {
			hi = 1
		}
		if a < lo || a > hi {
			t.Errorf("%s: AUC %.3f, want %.2f..%.2f", k.Name, a, lo, hi)
		}
	}
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// auc returns P(pos > neg) + P(pos = neg)/2 (the Mann-Whitney statistic).
func auc(pos, neg []float64) float64 {
	p, q := slices.Clone(pos), slices.Clone(neg)
	sort.Float64s(p)
	sort.Float64s(q)
	wins, j, k := 0.0, 0, 0
	for _, v := range p {
		for j < len(q) && q[j] < v {
			j++
		}
		for k < len(q) && q[k] <= v {
			k++
		}
		wins += float64(j) + float64(k-j)/2
	}
	return wins / (float64(len(p)) * float64(len(q)))
}

// TestSocialDeterministic: the same seed gives byte-identical files, with
// any number of workers; another seed gives other files.
func TestSocialDeterministic(t *testing.T) {
	opts := SocialOptions{Users: 60, Groups: 16}
	write := func(seed uint64, workers int) map[string][]byte {
		o := opts
		o.Workers = workers
		d, err := GenerateSocial(seed, o)
		if err != nil {
			t.Fatal(err)
		}
		dir, _ := writeAndLoad(t, d)
		files := map[string][]byte{}
		for _, name := range []string{"users.jsonl", "friends.csv", "memberships.csv", "comments.csv", "README.md"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = b
		}
		return files
	}
	a, b, c := write(7, 2), write(7, 1), write(8, 2)
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two runs with seed 7", name)
		}
		if len(a[name]) == 0 {
			t.Errorf("%s is empty", name)
		}
		if bytes.Equal(a[name], c[name]) {
			t.Errorf("%s is the same with seeds 7 and 8", name)
		}
	}
}

// TestSocialSmallAndLarge generates the extremes of the allowed sizes.
func TestSocialSmallAndLarge(t *testing.T) {
	d, err := GenerateSocial(1, SocialOptions{Users: 20, Groups: 10})
	if err != nil {
		t.Fatal(err)
	}
	_, ds := writeAndLoad(t, d)
	st := d.Stats()
	if ds.N() != 20 || st.Degree.Min < 1 || st.PhotosPerUser.Min < 1 || len(d.Groups) == 0 || len(d.Groups) > 10 ||
		st.GroupSize.Min < 1 {
		t.Errorf("20 users: %d loaded, degree %s, photos %s, %d groups (sizes %s)", ds.N(), st.Degree, st.PhotosPerUser, len(d.Groups), st.GroupSize)
	}
	// 1000 users with 10 photos each cannot be served by 4,000 drawings:
	// an error, found before any feature is computed.
	m := DefaultSocialModel()
	m.PhotosMean = 10
	if _, err := GenerateSocial(1, SocialOptions{Users: 1000, Model: &m}); err == nil || !strings.Contains(err.Error(), "all taken") {
		t.Errorf("1000 users x 10 photos: err = %v, want the corpus exhausted", err)
	}
}

// TestSocialOptionErrors checks that invalid options are refused.
func TestSocialOptionErrors(t *testing.T) {
	bad := func(f func(*SocialModel)) *SocialModel {
		m := DefaultSocialModel()
		f(&m)
		return &m
	}
	for name, o := range map[string]SocialOptions{
		"too few users":      {Users: 5},
		"too many users":     {Users: 5000},
		"too few groups":     {Groups: 3},
		"probability":        {Model: bad(func(m *SocialModel) { m.InterestPhoto = 1.5 })},
		"comment mix":        {Model: bad(func(m *SocialModel) { m.CommentFriend, m.CommentInterest = 0.7, 0.7 })},
		"no cities":          {Model: bad(func(m *SocialModel) { m.Cities = nil })},
		"duplicate city":     {Model: bad(func(m *SocialModel) { m.Cities = append(m.Cities, m.Cities[0]) })},
		"city with a comma":  {Model: bad(func(m *SocialModel) { m.Cities[0].ID = "paris,fr" })},
		"no interest counts": {Model: bad(func(m *SocialModel) { m.InterestCounts = []float64{0, 0} })},
		"negative beta":      {Model: bad(func(m *SocialModel) { m.BetaCity = -1 })},
		"NaN degree":         {Model: bad(func(m *SocialModel) { m.BaseDegree = math.NaN() })},
		"time range":         {Model: bad(func(m *SocialModel) { m.PhotoEnd = m.PhotoStart })},
		"no topics":          {Model: bad(func(m *SocialModel) { m.MinTopicDrawings = 100000 })},
	} {
		if _, err := GenerateSocial(1, o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSocialRNG checks the samplers the generator draws with.
func TestSocialRNG(t *testing.T) {
	r := newSocialRNG(1, 1)
	cum := cumsum([]float64{0, 1, 0, 3, 0})
	var hits [5]int
	const draws = 40000
	for range draws {
		hits[r.weighted(cum)]++
	}
	if hits[0]+hits[2]+hits[4] > 0 || math.Abs(float64(hits[3])/draws-0.75) > 0.01 {
		t.Errorf("weighted: %v, want 0 on zero weights and 3/4 on index 3", hits)
	}
	for _, m := range []float64{0.5, 4, 12, 80} {
		s, s2 := 0.0, 0.0
		for range draws {
			x := float64(r.poisson(m))
			s += x
			s2 += x * x
		}
		mu := s / draws
		if v := s2/draws - mu*mu; math.Abs(mu-m) > 0.05*m+0.02 || math.Abs(v-m) > 0.1*m+0.05 {
			t.Errorf("poisson(%v): mean %.3f, variance %.3f", m, mu, v)
		}
		g := 0.0
		for range draws {
			g += float64(r.geometric(m))
		}
		if math.Abs(g/draws-m) > 0.05*m+0.02 {
			t.Errorf("geometric(%v): mean %.3f", m, g/draws)
		}
	}
	s, s2 := 0.0, 0.0
	for range draws {
		x := r.normal()
		s += x
		s2 += x * x
	}
	if math.Abs(s/draws) > 0.02 || math.Abs(s2/draws-1) > 0.03 {
		t.Errorf("normal: mean %.3f, second moment %.3f", s/draws, s2/draws)
	}
	p := r.perm(50)
	if q := slices.Sorted(slices.Values(p)); q[0] != 0 || q[49] != 49 || len(slices.Compact(q)) != 50 {
		t.Errorf("perm(50) = %v, not a permutation", p)
	}
}
