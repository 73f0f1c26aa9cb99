package recommend_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

// plantedTags is a network whose friendships the tags explain: 72 users
// in 6 communities, each tagged with its community, friends with about a
// third of their community and no one else. Places are drawn at random,
// or with lonePlace one user alone has been anywhere: a location kernel
// that no pair of users shares.
func plantedTags(t *testing.T, lonePlace bool) *social.Dataset {
	rng := rand.New(rand.NewPCG(7, 11))
	var users, friends strings.Builder
	const n, groups = 72, 6
	for i := range n {
		place := fmt.Sprintf(`"p%d"`, rng.IntN(4))
		if lonePlace {
			place = map[bool]string{true: `"moon"`, false: ""}[i == 0]
		}
		fmt.Fprintf(&users, `{"id":"u%02d","tags":["c%d"],"places":[%s]}`+"\n", i, i%groups, place)
		for j := i + groups; j < n; j += groups {
			if rng.Float64() < 1.0/3 {
				fmt.Fprintf(&friends, "u%02d,u%02d\n", i, j)
			}
		}
	}
	return writeData(t, users.String(), friends.String(), "")
}

// TestExplanationNamesThePlantedModality checks that on plantedTags the
// tags' contribution relative to a typical candidate is, for every true
// friend, the largest modality's and positive, and that the places'
// kernel, which separates no pair, has weight 0 and shows 0.
func TestExplanationNamesThePlantedModality(t *testing.T) {
	ds := plantedTags(t, false)
	m := train(t, ds, recommend.Options{})
	pairs := 0
	for u := range ds.N() {
		for _, v := range m.FriendsOf(u) {
			rec, err := m.ExplainFriend(u, v)
			if err != nil {
				t.Fatal(err)
			}
			if top := rec.Modalities[0]; top.Modality != "tags" || top.Relative <= 0 {
				t.Errorf("%s, %s: modalities %+v, want tags first and positive", ds.Users[u].ID, rec.User, rec.Modalities)
			}
			pairs++
		}
	}
	if pairs == 0 {
		t.Fatal("no friendships planted")
	}
}

// TestZeroWeightKernelShowsZero checks that a kernel that separates no
// pair (plantedTags with lonePlace) gets combination weight 0 and
// coefficient 0, and shows 0 in every explanation.
func TestZeroWeightKernelShowsZero(t *testing.T) {
	ds := plantedTags(t, true)
	m := train(t, ds, recommend.Options{})
	for _, u := range []int{0, 1, 40} {
		got, err := m.RecommendFriends(u, 5)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range got.Items {
			i := slices.IndexFunc(rec.Contributions, func(c recommend.Contribution) bool { return c.Kernel == social.KernelLocation })
			j := slices.IndexFunc(rec.Modalities, func(p recommend.ModalityPart) bool { return p.Modality == "places" })
			if i < 0 || j < 0 {
				t.Fatalf("%s: no location kernel or places modality listed: %+v", rec.User, rec.Modalities)
			}
			if c, p := rec.Contributions[i], rec.Modalities[j]; c.Weight != 0 || c.Coefficient != 0 || c.Relative != 0 || p.Relative != 0 {
				t.Errorf("%s: location %+v, places %+v, want 0", rec.User, c, p)
			}
		}
	}
}

// TestLearnedGroupSignalsAddUp checks the learned group scorer's
// explanation: every signal listed once, largest part first, the parts
// adding up to the score.
func TestLearnedGroupSignalsAddUp(t *testing.T) {
	ds := recommend.PairedGroups(t)
	m := train(t, ds, recommend.Options{Learner: "uniform"})
	if m.GroupScorer() != recommend.GroupLearned {
		t.Fatalf("group scorer %s: this test needs the data where learned is chosen", m.GroupScorer())
	}
	for _, u := range []int{3, 50} {
		got, err := m.RecommendGroups(u, 5)
		if err != nil || len(got.Items) == 0 {
			t.Fatalf("user %d: %v, %v", u, got, err)
		}
		for _, rec := range got.Items {
			sum, seen := 0.0, map[string]bool{}
			for i, s := range rec.Signals {
				sum += s.Part
				seen[s.Signal] = true
				if s.Part != s.Weight*s.Value || i > 0 && s.Part > rec.Signals[i-1].Part {
					t.Errorf("%s: signals %+v", rec.Group, rec.Signals)
				}
			}
			if rec.Scorer != recommend.GroupLearned || len(seen) != 7 || math.Abs(sum-rec.Score) > 1e-9 {
				t.Errorf("%s: scorer %s, %d signals adding up to %v, score %v", rec.Group, rec.Scorer, len(seen), sum, rec.Score)
			}
		}
	}
}
