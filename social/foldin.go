package social

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

// ErrNoFoldIn is returned by NamedKernel.FoldIn for a kernel that gives no
// row for a user outside it: the regularised Laplacian (its row is a
// linear solve over the graph with the user in it) and every kernel of
// thesis mode (its row-maximum scaling and PSD shift are properties of the
// whole matrix).
var ErrNoFoldIn = errors.New("social: the kernel has no row for a user outside it")

// FoldUser is a user as fold-in reads it: its profile and relations, with
// users and groups as indices of the data set the kernels were built on
// (relations to users or groups that data set lacks are left out: they
// change no entry of the row against its users).
type FoldUser struct {
	Profile *User // photos, tags, places, faves
	Friends []int // sorted, unique
	Groups  []int // sorted, unique
	// Comments counts the comments exchanged with each user (written and
	// received); SelfComments those on the user's own photos.
	Comments     map[int]int
	SelfComments int
	// Index is the user's own index in the kernel's data set, -1 for a
	// user it lacks: the comment kernel's own entry needs it (the set
	// kernels find it through the relations).
	Index int
}

// foldFunc sets dst to the row of the kernel before preprocessing between
// a user outside it and its users, and returns that user's diagonal
// entry.
type foldFunc func(u *FoldUser, dst []float64) (diag float64)

// foldColumns returns the factor columns of a user outside a Gram kernel,
// ascending, and the diagonal share of its features outside them.
type foldColumns func(u *FoldUser) (cols []int, extra float64)

// FoldIn sets dst (one entry per user of the kernel) to the kernel's row
// for u, preprocessed as the kernel was when built (the scales, idf,
// bandwidth and random features of its data set): for a user of that data
// set with its relations unchanged, exactly its row. Errors:
// ErrNoFoldIn, or a dst of the wrong length.
func (k NamedKernel) FoldIn(u *FoldUser, dst []float64) error {
	if k.fold == nil {
		return fmt.Errorf("%w: %s", ErrNoFoldIn, k.Name)
	}
	if len(dst) != k.K.Dim() {
		return fmt.Errorf("social: kernel %s: a row of %d for %d users", k.Name, len(dst), k.K.Dim())
	}
	k.fold(u, dst)
	return nil
}

func foldGroups(u *FoldUser) ([]int, float64)  { return u.Groups, 0 }
func foldFriends(u *FoldUser) ([]int, float64) { return u.Friends, 0 }

// gramFold folds a user into the Gram kernel g: its feature vector has
// weight[c] (1 without weights) at its columns c.
func gramFold(g *kernelmath.Gram, weight []float64, columns foldColumns) foldFunc {
	return func(u *FoldUser, dst []float64) float64 {
		cols, diag := columns(u)
		vals := make([]float64, len(cols))
		for p, c := range cols {
			vals[p] = 1
			if weight != nil {
				vals[p] = weight[c]
			}
			diag += vals[p] * vals[p]
		}
		if err := g.RowOf(cols, vals, dst); err != nil {
			panic(err) // the columns come from this package's mapping: a bug
		}
		return diag
	}
}

// itemColumns maps a user's items to the columns of a set kernel; items
// the kernel's data set lacks count on the diagonal only.
func itemColumns(column map[string]int, items func(*User) []string) foldColumns {
	return func(u *FoldUser) ([]int, float64) {
		var cols []int
		extra := 0.0
		for _, it := range uniqueStrings(items(u.Profile)) {
			if c, ok := column[it]; ok {
				cols = append(cols, c)
			} else {
				extra++
			}
		}
		slices.Sort(cols)
		return cols, extra
	}
}

// textualFold folds a user into the tf-idf kernel with the idf of the
// kernel's data set (n users, docFreq by column); a tag none of its users
// has weighs ln(n) as if the user alone had it, in the norm only.
func textualFold(g *kernelmath.Gram, n int, column map[string]int, docFreq []int) foldFunc {
	return func(u *FoldUser, dst []float64) float64 {
		tf := map[int]float64{}
		unseen := map[string]float64{}
		eachTag(u.Profile, func(tag string) {
			if c, ok := column[tag]; ok {
				tf[c]++
			} else {
				unseen[tag]++
			}
		})
		var cols []int
		var vals []float64
		norm := 0.0
		for _, c := range slices.Sorted(maps.Keys(tf)) {
			if v := tf[c] * math.Log(float64(n)/float64(docFreq[c])); v != 0 {
				cols, vals = append(cols, c), append(vals, v)
				norm += v * v
			}
		}
		for _, t := range slices.Sorted(maps.Keys(unseen)) {
			v := unseen[t] * math.Log(float64(n))
			norm += v * v
		}
		if norm == 0 {
			clear(dst)
			return 0
		}
		for p := range vals {
			vals[p] /= math.Sqrt(norm)
		}
		if err := g.RowOf(cols, vals, dst); err != nil {
			panic(err)
		}
		return 1
	}
}

// foldComments is the default-mode comment kernel's row: the comments
// exchanged with each user, and on the own entry all of the user's.
func foldComments(u *FoldUser, dst []float64) float64 {
	clear(dst)
	diag := float64(u.SelfComments)
	for v, c := range u.Comments {
		dst[v] = float64(c)
		diag += float64(c)
	}
	if u.Index >= 0 {
		dst[u.Index] = diag
	}
	return diag
}

// visualDenseFold folds a user into the exact RBF kernel over the mean
// photo features x (row a: user users[a]) with 1/sigma^2 = inv.
func visualDenseFold(users []int, x *mat.Dense, inv float64) foldFunc {
	return func(u *FoldUser, dst []float64) float64 {
		clear(dst)
		c := centroid(u.Profile)
		_, dim := x.Dims()
		if len(c) != dim {
			return 0 // no photo features (or of another extractor): a zero row, as for such users inside
		}
		for a, i := range users {
			d := 0.0
			for r, v := range x.RawRowView(a) {
				t := c[r] - v
				d += t * t
			}
			dst[i] = math.Exp(-d * inv)
		}
		return 1
	}
}

// visualFeaturesFold folds a user into the cosine-normalised random
// Fourier features z (rff maps mean photo features to a row of z).
func visualFeaturesFold(z *mat.Dense, rff func(c, dst []float64) bool) foldFunc {
	n, features := z.Dims()
	norms := make([]float64, n)
	for i := range norms {
		r := z.RawRowView(i)
		norms[i] = floats.Dot(r, r)
	}
	return func(u *FoldUser, dst []float64) float64 {
		clear(dst)
		zu := make([]float64, features)
		c := centroid(u.Profile)
		if c == nil || !rff(c, zu) {
			return 0
		}
		nu := floats.Dot(zu, zu)
		if nu <= 0 {
			return 0
		}
		for i := range dst {
			if norms[i] > 0 {
				dst[i] = floats.Dot(zu, z.RawRowView(i)) / math.Sqrt(nu) / math.Sqrt(norms[i])
			}
		}
		return 1
	}
}

// scaledFold is fold under the preprocessing of a ScaledKernel with row
// scales a and column scales b: entry (u, j) times (a_u b_j + b_u a_j)/2,
// where u's own scales come from its diagonal through self.
func scaledFold(fold foldFunc, a, b []float64, self func(diag float64) (au, bu float64)) foldFunc {
	return func(u *FoldUser, dst []float64) float64 {
		diag := fold(u, dst)
		au, bu := self(diag)
		for j := range dst {
			dst[j] *= (au*b[j] + bu*a[j]) / 2
		}
		return diag * au * bu
	}
}

// FoldUser returns user u of ds, with the given friends and groups (ds's
// indices: its adjacency, which the caller keeps), as a FoldUser against
// on, the data set the kernels were built on: users and groups are
// matched by id and name. Its comments are read from ds.Comments.
func (ds *Dataset) FoldUser(u int, friends, groups []int, on *Dataset) *FoldUser {
	id := ds.Users[u].ID
	fu := &FoldUser{Profile: &ds.Users[u], Index: -1}
	if i, ok := on.UserIndex(id); ok {
		fu.Index = i
	}
	for _, v := range friends {
		if i, ok := on.UserIndex(ds.Users[v].ID); ok {
			fu.Friends = append(fu.Friends, i)
		}
	}
	for _, g := range groups {
		if h, ok := on.GroupIndex(ds.Groups[g]); ok {
			fu.Groups = append(fu.Groups, h)
		}
	}
	slices.Sort(fu.Friends)
	slices.Sort(fu.Groups)
	fu.Friends, fu.Groups = slices.Compact(fu.Friends), slices.Compact(fu.Groups)
	for _, c := range ds.Comments {
		other := -1
		switch {
		case c.Author == u && c.Owner == u:
			fu.SelfComments += c.Count
			continue
		case c.Author == u:
			other = c.Owner
		case c.Owner == u:
			other = c.Author
		default:
			continue
		}
		if i, ok := on.UserIndex(ds.Users[other].ID); ok {
			if fu.Comments == nil {
				fu.Comments = map[int]int{}
			}
			fu.Comments[i] += c.Count
		}
	}
	return fu
}
