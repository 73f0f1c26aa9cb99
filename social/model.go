package social

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

// Dataset is a set of users and their relations. Users are sorted by ID in
// natural order (NaturalLess) and identified by their index in Users; groups
// likewise by their index in Groups. Friendships are undirected.
type Dataset struct {
	// Format names the importer that read the data: FormatKernelrank,
	// FormatEgoFacebook or FormatBlogCatalog.
	Format string
	Users  []User
	// Groups holds the group names, in natural order.
	Groups []string
	// Friends holds each friendship once as (i, j) with i < j, sorted.
	Friends [][2]int
	// Memberships holds (user, group) pairs, sorted, each once.
	Memberships [][2]int
	// Comments holds the comment counts from author to photo owner, sorted by
	// (Author, Owner), each pair once.
	Comments []Comment

	userIndex  map[string]int
	groupIndex map[string]int
	// userHashes are the users' hashes of Version, kept by the data sets
	// of Build and Update, which are not changed after; nil elsewhere.
	userHashes []userHash
}

// User is one user.
type User struct {
	ID     string  `json:"id"`
	Photos []Photo `json:"photos,omitempty"`
	// Tags are profile-level tags, counted once each in the textual kernel
	// besides the tags of the photos (ego-Facebook: the education, work and
	// languages features).
	Tags []string `json:"tags,omitempty"`
	// Places are profile-level location cells, shared with the grid cells of
	// the photos in the location kernel (ego-Facebook: the location and
	// hometown features).
	Places []string `json:"places,omitempty"`
	// Attrs are profile attributes for attribute prediction; no kernel uses
	// them (ego-Facebook: every feature name of the user, those in Tags and
	// Places included).
	Attrs []string `json:"attrs,omitempty"`
	// Faves are the ids of the photos the user marked favourite; they need
	// not be photos of the data set.
	Faves []string `json:"faves,omitempty"`
}

// Photo is one photo of a user.
type Photo struct {
	// ID identifies the photo for comments.csv and faves; optional, unique
	// across the data set when given.
	ID     string    `json:"id,omitempty"`
	Visual []float64 `json:"visual,omitempty"`
	Tags   []string  `json:"tags,omitempty"`
	Time   time.Time `json:"time,omitzero"`
	Geo    *LatLon   `json:"geo,omitempty"`
}

// LatLon is a position in degrees.
type LatLon struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

// Comment counts the comments Author wrote on photos of Owner.
type Comment struct {
	Author, Owner, Count int
}

// N returns the number of users.
func (ds *Dataset) N() int { return len(ds.Users) }

// UserIndex returns the index of the user with the given id.
func (ds *Dataset) UserIndex(id string) (int, bool) {
	i, ok := ds.userIndex[id]
	return i, ok
}

// GroupIndex returns the index of the group with the given name.
func (ds *Dataset) GroupIndex(name string) (int, bool) {
	g, ok := ds.groupIndex[name]
	return g, ok
}

// View is the part of the relations kernels are built from: an evaluation
// hides some friendships or memberships and builds the kernels from the
// rest. Pairs are unordered and may repeat (a repeat counts once).
type View struct {
	Friends     [][2]int // (i, j) user pairs
	Memberships [][2]int // (user, group) pairs
}

// FullView returns the view of all relations of the data set.
func (ds *Dataset) FullView() View {
	return View{Friends: ds.Friends, Memberships: ds.Memberships}
}

// FriendMatrix returns the 0/1 adjacency matrix of the friendships among n
// users (the target of the friend task). Repeated pairs, in either
// orientation, count once; self-loops and indices outside [0, n) are errors.
func FriendMatrix(n int, friends [][2]int) (*kernelmath.SparseSym, error) {
	pairs, err := uniquePairs(n, n, friends, true)
	if err != nil {
		return nil, fmt.Errorf("social: friends: %w", err)
	}
	return kernelmath.NewSparseSym(n, tripletsOf(pairs))
}

// uniquePairs validates pairs against [0, rows) x [0, cols) and returns them
// sorted without repeats; with undirected, (i, j) and (j, i) are one pair,
// returned as i < j, and self-loops are errors.
func uniquePairs(rows, cols int, pairs [][2]int, undirected bool) ([][2]int, error) {
	out := make([][2]int, 0, len(pairs))
	for _, p := range pairs {
		if p[0] < 0 || p[0] >= rows || p[1] < 0 || p[1] >= cols {
			return nil, fmt.Errorf("pair (%d, %d) outside [0, %d) x [0, %d)", p[0], p[1], rows, cols)
		}
		if undirected {
			if p[0] == p[1] {
				return nil, fmt.Errorf("self-loop (%d, %d)", p[0], p[1])
			}
			p = [2]int{min(p[0], p[1]), max(p[0], p[1])}
		}
		out = append(out, p)
	}
	slices.SortFunc(out, comparePairs)
	return slices.Compact(out), nil
}

func comparePairs(a, b [2]int) int {
	if a[0] != b[0] {
		return a[0] - b[0]
	}
	return a[1] - b[1]
}

// tripletsOf gives every pair the value 1.
func tripletsOf(pairs [][2]int) []kernelmath.Triplet {
	t := make([]kernelmath.Triplet, len(pairs))
	for k, p := range pairs {
		t[k] = kernelmath.Triplet{I: p[0], J: p[1], V: 1}
	}
	return t
}

// NaturalLess orders strings with digit runs compared as numbers ("2" <
// "10", "0/circle2" < "0/circle10"); equal numbers with different leading
// zeros, and everything else, compare bytewise.
func NaturalLess(a, b string) bool { return naturalOrder(a, b) < 0 }

// naturalOrder is the comparison function of NaturalLess.
func naturalOrder(a, b string) int {
	if c := naturalCompare(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// naturalCompare compares digit runs by value; 0 for "7" and "007".
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := len(na) - len(nb); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitRun(s string) int {
	k := 0
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	return k
}
