package social

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

// The base kernels over users. The first seven are those of section 7.2.2
// of the thesis; the last two are graph kernels a friend recommender needs.
const (
	KernelVisual       = "visual"        // K1: RBF of the users' mean photo features
	KernelTextual      = "textual"       // K2: cosine of tf-idf tag vectors
	KernelComments     = "comments"      // K3: comments exchanged
	KernelGroups       = "groups"        // K4: groups both joined
	KernelFriends      = "friends"       // K5: common friends
	KernelLocation     = "location"      // K6: places both have been
	KernelFaves        = "faves"         // K7: photos both marked favourite
	KernelAdamicAdar   = "adamic-adar"   // common friends weighted 1/log(degree)
	KernelRegLaplacian = "reg-laplacian" // (I + gamma L)^-1, normalised Laplacian
)

// ThesisKernels returns the kernels of section 7.2.2, in the thesis' order.
func ThesisKernels() []string {
	return []string{KernelVisual, KernelTextual, KernelComments, KernelGroups, KernelFriends, KernelLocation, KernelFaves}
}

// AllKernels returns every kernel BuildKernels knows.
func AllKernels() []string { return append(ThesisKernels(), KernelAdamicAdar, KernelRegLaplacian) }

// Mode selects the preprocessing of the base kernels.
type Mode string

// The preprocessing modes.
const (
	// ModeDefault scales every kernel to mean diagonal 1, K n / tr K
	// (kernels whose diagonal is already 1 or bounded stay as built), and
	// adds no shift: every kernel is PSD by construction (the comment
	// kernel is built as the Gram matrix of the comment graph's incidence
	// matrix, whose off-diagonal is the thesis' count). A constant scale
	// keeps each user's degree in the kernel, which the friend ranking
	// needs (Adamic-Adar rewards it); alignment is then to be computed on
	// the centred kernels.
	ModeDefault Mode = "default"
	// ModeCosine normalises every kernel to unit diagonal,
	// K_ij / sqrt(K_ii K_jj), and adds no shift. It divides a
	// common-friends kernel by sqrt(deg_i deg_j), which takes out the
	// degrees the friend ranking needs (docs/evaluation.md, "Friend and
	// group recommendation").
	ModeCosine Mode = "cosine"
	// ModeThesis is section 7.5.1 as written: divide each row by its
	// maximum, symmetrise, and add delta I (delta = |lambda_min| + 1e-8) when
	// the smallest eigenvalue, found by Lanczos, is negative.
	ModeThesis Mode = "thesis"
)

// KernelOptions configures BuildKernels. The zero value is the default.
type KernelOptions struct {
	Mode Mode // "" means ModeDefault
	// Kernels lists the kernels to build, in the order wanted; empty means
	// every kernel whose modality the data has: ThesisKernels in thesis mode,
	// AllKernels in default mode. A listed kernel the data cannot give is an
	// error.
	Kernels []string
	// GeoCellDegrees is the side of the latitude/longitude grid cells photo
	// positions fall into for the location kernel (default 0.1, about 11 km).
	GeoCellDegrees float64
	// VisualDenseMax is the largest number of users for which the visual
	// kernel is dense and exact (default 4096: 128 MiB); above it, it is
	// approximated by VisualFeatures random Fourier features (default 512).
	VisualDenseMax int
	VisualFeatures int
	// Gamma is the gamma of the regularised Laplacian (default 1: decay 1/2
	// a hop); CGTol the relative residual its solves reach (default 1e-8).
	Gamma float64
	CGTol float64
	// Seed seeds the random Fourier features and the Lanczos start vector.
	Seed uint64
}

// NamedKernel is one base kernel over the users of a data set. K is safe
// for concurrent use. Its concrete type:
//
//   - *kernelmath.Gram, the factored X X^T: groups, friends, location, faves,
//     textual, adamic-adar, and comments in default mode;
//   - *kernelmath.SparseSym: comments in thesis mode (the count matrix);
//   - kernelmath.DenseKernel: visual up to VisualDenseMax users; above, a
//     cosine-normalised *kernelmath.LowRank (unit diagonal like the exact);
//   - *kernelmath.RegLaplacian: reg-laplacian;
//
// wrapped, in default mode, in a constant-scaling *kernelmath.ScaledKernel
// and in cosine mode in a cosine-normalising one (all but textual, visual
// and reg-laplacian, whose diagonals are already 1 or bounded), and in
// thesis mode in the row-scaling *kernelmath.ScaledKernel, shifted when not
// PSD (ScaledKernel.Base gives the kernel before preprocessing).
type NamedKernel struct {
	Name string
	K    kernelmath.KernelMatrix
	// PSD is the thesis-mode check; nil in default mode.
	PSD *PSDCheck

	fold foldFunc // FoldIn's; nil when the kernel has none
}

// PSDCheck records the PSD test of thesis mode on the row-scaled,
// symmetrised kernel.
type PSDCheck struct {
	// MinEig is the smallest eigenvalue by Lanczos: converged to 1e-8
	// relative to the largest when Residual is that small, else (a cluster
	// of eigenvalues near the smallest, after 400 steps) an upper bound.
	MinEig   float64
	Residual float64 // ||K v - MinEig v|| of the Lanczos vector
	Shift    float64 // delta of the delta I added: 0, or -MinEig + 1e-8
}

func (o *KernelOptions) setDefaults() error {
	if o.Mode == "" {
		o.Mode = ModeDefault
	}
	if o.Mode != ModeDefault && o.Mode != ModeThesis && o.Mode != ModeCosine {
		return fmt.Errorf("social: mode %q: want %q, %q or %q", o.Mode, ModeDefault, ModeCosine, ModeThesis)
	}
	for _, p := range []struct {
		name string
		v    *float64
		def  float64
	}{{"GeoCellDegrees", &o.GeoCellDegrees, 0.1}, {"Gamma", &o.Gamma, 1}, {"CGTol", &o.CGTol, 1e-8}} {
		if *p.v == 0 {
			*p.v = p.def
		}
		if !(*p.v > 0) || math.IsInf(*p.v, 0) {
			return fmt.Errorf("social: %s must be positive and finite, got %v", p.name, *p.v)
		}
	}
	if o.CGTol >= 1 {
		return fmt.Errorf("social: CGTol must be below 1, got %v", o.CGTol)
	}
	for _, p := range []struct {
		name string
		v    *int
		def  int
	}{{"VisualDenseMax", &o.VisualDenseMax, 4096}, {"VisualFeatures", &o.VisualFeatures, 512}} {
		if *p.v == 0 {
			*p.v = p.def
		}
		if *p.v < 0 {
			return fmt.Errorf("social: %s must be positive, got %d", p.name, *p.v)
		}
	}
	for k, name := range o.Kernels {
		if !slices.Contains(AllKernels(), name) {
			return fmt.Errorf("social: unknown kernel %q (known: %v)", name, AllKernels())
		}
		if slices.Contains(o.Kernels[:k], name) {
			return fmt.Errorf("social: kernel %q listed twice", name)
		}
	}
	return nil
}

// BuildKernels builds the base kernels over the users of ds from the
// friendships and memberships of view (the visible part, in an evaluation)
// and all other modalities of ds, and preprocesses them as opts.Mode says.
// Kernels whose modality is absent are left out unless opts.Kernels asks for
// them (then it is an error). Costs: README.md.
func BuildKernels(ctx context.Context, ds *Dataset, view View, opts KernelOptions) ([]NamedKernel, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	in, err := newKernelInput(ds, view, opts)
	if err != nil {
		return nil, err
	}
	names, explicit := opts.Kernels, true
	if len(names) == 0 {
		names, explicit = AllKernels(), false
		if opts.Mode == ModeThesis {
			names = ThesisKernels()
		}
	}
	var out []NamedKernel
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := in.build(name)
		if err != nil {
			return nil, fmt.Errorf("social: kernel %s: %w", name, err)
		}
		if b.k == nil {
			if explicit {
				return nil, fmt.Errorf("social: kernel %s: the data has no %s", name, b.missing)
			}
			continue
		}
		nk, err := preprocess(ctx, name, b, opts)
		if err != nil {
			return nil, fmt.Errorf("social: kernel %s: %w", name, err)
		}
		out = append(out, nk)
	}
	return out, nil
}

// base is a kernel before preprocessing. k is nil when the modality is
// absent (missing names it); unit reports a diagonal that is already 1 (or
// 0 for users without the modality) or bounded, so that the default mode
// leaves the kernel as it is.
type base struct {
	k       kernelmath.KernelMatrix
	unit    bool
	missing string
	fold    foldFunc // nil: no row for a user outside the kernel (foldin.go)
}

// kernelInput holds the validated inputs of BuildKernels.
type kernelInput struct {
	ds          *Dataset
	opts        KernelOptions
	friends     [][2]int // i < j, unique
	memberships [][2]int // unique
}

func newKernelInput(ds *Dataset, view View, opts KernelOptions) (*kernelInput, error) {
	n := ds.N()
	friends, err := uniquePairs(n, n, view.Friends, true)
	if err != nil {
		return nil, fmt.Errorf("social: view friends: %w", err)
	}
	memberships, err := uniquePairs(n, len(ds.Groups), view.Memberships, false)
	if err != nil {
		return nil, fmt.Errorf("social: view memberships: %w", err)
	}
	return &kernelInput{ds: ds, opts: opts, friends: friends, memberships: memberships}, nil
}

func (in *kernelInput) build(name string) (base, error) {
	switch name {
	case KernelVisual:
		return in.visual()
	case KernelTextual:
		return in.textual()
	case KernelComments:
		return in.comments()
	case KernelGroups:
		return in.gram("memberships", len(in.ds.Groups), in.memberships, nil, foldGroups)
	case KernelFriends:
		return in.gram("friendships", in.ds.N(), in.directedFriends(), nil, foldFriends)
	case KernelLocation:
		return in.sets("places or geo-tagged photos", in.cells)
	case KernelFaves:
		return in.sets("faves", func(u *User) []string { return u.Faves })
	case KernelAdamicAdar:
		return in.adamicAdar()
	default: // KernelRegLaplacian; setDefaults rejected unknown names
		return in.regLaplacian()
	}
}

// gram returns the Gram kernel of the n x m 0/1 matrix with ones at pairs
// (weighted by weight[column] when weight is not nil); absent when there are
// no pairs. cols gives the columns of a user outside the kernel (fold-in).
func (in *kernelInput) gram(missing string, m int, pairs [][2]int, weight []float64, cols foldColumns) (base, error) {
	if len(pairs) == 0 {
		return base{missing: missing}, nil
	}
	t := make([]kernelmath.Triplet, len(pairs))
	for k, p := range pairs {
		v := 1.0
		if weight != nil {
			v = weight[p[1]]
		}
		t[k] = kernelmath.Triplet{I: p[0], J: p[1], V: v}
	}
	g, err := kernelmath.NewGram(in.ds.N(), m, t)
	return base{k: g, fold: gramFold(g, weight, cols)}, err
}

// directedFriends lists every friendship in both orientations: the
// adjacency matrix A as (row, column) pairs.
func (in *kernelInput) directedFriends() [][2]int {
	out := make([][2]int, 0, 2*len(in.friends))
	for _, p := range in.friends {
		out = append(out, p, [2]int{p[1], p[0]})
	}
	return out
}

// sets returns the Gram kernel of the users' sets of items: K_ij is the
// number of items both have.
func (in *kernelInput) sets(missing string, items func(*User) []string) (base, error) {
	column := map[string]int{}
	var pairs [][2]int
	for i := range in.ds.Users {
		for _, it := range items(&in.ds.Users[i]) {
			c, ok := column[it]
			if !ok {
				c = len(column)
				column[it] = c
			}
			pairs = append(pairs, [2]int{i, c})
		}
	}
	slices.SortFunc(pairs, comparePairs)
	return in.gram(missing, len(column), slices.Compact(pairs), nil, itemColumns(column, items))
}

// cells returns the places of a user and the grid cells of its geo-tagged
// photos.
func (in *kernelInput) cells(u *User) []string {
	out := slices.Clone(u.Places)
	for _, p := range u.Photos {
		if p.Geo != nil {
			s := in.opts.GeoCellDegrees
			out = append(out, fmt.Sprintf("geo:%d:%d", int(math.Floor(p.Geo.Lat/s)), int(math.Floor(p.Geo.Lon/s))))
		}
	}
	return out
}

// adamicAdar returns A W A, W = diag(1/ln(deg)), as the Gram kernel of
// A W^1/2: K_ij (i != j) sums 1/ln(deg_k) over the common friends k, and
// K_ii over the friends of i. A friend of degree 1 can only appear on the
// diagonal (it is no one else's friend); it gets the weight of degree 2,
// 1/ln 2, so that weights never grow with the degree.
func (in *kernelInput) adamicAdar() (base, error) {
	deg := make([]int, in.ds.N())
	for _, p := range in.friends {
		deg[p[0]]++
		deg[p[1]]++
	}
	w := make([]float64, len(deg))
	for k, d := range deg {
		w[k] = math.Sqrt(1 / math.Log(float64(max(d, 2))))
	}
	return in.gram("friendships", in.ds.N(), in.directedFriends(), w, foldFriends)
}

// regLaplacian returns (I + gamma L)^-1 of the friendship graph.
func (in *kernelInput) regLaplacian() (base, error) {
	if len(in.friends) == 0 {
		return base{missing: "friendships"}, nil
	}
	adj, err := FriendMatrix(in.ds.N(), in.friends)
	if err != nil {
		return base{}, err
	}
	rl, err := kernelmath.NewRegLaplacian(adj, in.opts.Gamma, in.opts.CGTol)
	return base{k: rl, unit: true}, err
}

// textual returns the cosine of tf-idf tag vectors: tf counts the photos of
// a user with the tag (plus one for a profile tag), idf = ln(n / r) with r
// the number of users with the tag (thesis: "the inverse document frequency
// is the number of users containing that tag"; a tag every user has weighs
// 0). Users without tags have a zero row.
func (in *kernelInput) textual() (base, error) {
	n := in.ds.N()
	column := map[string]int{}
	var users []int // users with tags
	var rowTF []map[int]float64
	var docFreq []int
	for i := range in.ds.Users {
		u := &in.ds.Users[i]
		tf := map[int]float64{}
		eachTag(u, func(tag string) {
			c, ok := column[tag]
			if !ok {
				c = len(column)
				column[tag] = c
				docFreq = append(docFreq, 0)
			}
			if tf[c] == 0 {
				docFreq[c]++
			}
			tf[c]++
		})
		if len(tf) > 0 {
			users = append(users, i)
			rowTF = append(rowTF, tf)
		}
	}
	if len(users) == 0 {
		return base{missing: "tags"}, nil
	}
	var t []kernelmath.Triplet
	for k, i := range users {
		start := len(t)
		norm := 0.0
		cols := slices.Sorted(maps.Keys(rowTF[k])) // a fixed order: the same bits every run
		for _, c := range cols {
			v := rowTF[k][c] * math.Log(float64(n)/float64(docFreq[c]))
			if v != 0 {
				t = append(t, kernelmath.Triplet{I: i, J: c, V: v})
				norm += v * v
			}
		}
		for p := start; p < len(t); p++ {
			t[p].V /= math.Sqrt(norm)
		}
	}
	g, err := kernelmath.NewGram(n, len(column), t)
	return base{k: g, unit: true, fold: textualFold(g, n, column, docFreq)}, err
}

// eachTag calls add once for each distinct profile tag of u and once for
// each distinct tag of each of its photos: the term counts of its tf.
func eachTag(u *User, add func(tag string)) {
	for _, tag := range uniqueStrings(u.Tags) {
		add(tag)
	}
	for _, p := range u.Photos {
		for _, tag := range uniqueStrings(p.Tags) {
			add(tag)
		}
	}
}

func uniqueStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// comments returns the comment kernel. Thesis mode: the symmetric count
// matrix C, C_ij the comments exchanged by i and j, C_ii the comments of i
// on its own photos; it is not PSD in general. Default mode: B B^T with B
// the incidence matrix of the comment graph (one column an unordered pair
// {i, j} with sqrt(C_ij) in rows i and j, one column a user with
// self-comments holding sqrt(C_ii)): the same off-diagonal, C_ii replaced by
// all the comments of i (given, received, on its own photos), and PSD by
// construction.
func (in *kernelInput) comments() (base, error) {
	n := in.ds.N()
	if len(in.ds.Comments) == 0 {
		return base{missing: "comments"}, nil
	}
	count := map[[2]int]float64{}
	for _, c := range in.ds.Comments {
		count[[2]int{min(c.Author, c.Owner), max(c.Author, c.Owner)}] += float64(c.Count)
	}
	pairs := sortedKeys(count)
	var t []kernelmath.Triplet
	for e, p := range pairs {
		if in.opts.Mode == ModeThesis {
			t = append(t, kernelmath.Triplet{I: p[0], J: p[1], V: count[p]})
			continue
		}
		v := math.Sqrt(count[p])
		t = append(t, kernelmath.Triplet{I: p[0], J: e, V: v})
		if p[1] != p[0] {
			t = append(t, kernelmath.Triplet{I: p[1], J: e, V: v})
		}
	}
	if in.opts.Mode == ModeThesis {
		s, err := kernelmath.NewSparseSym(n, t)
		return base{k: s}, err
	}
	g, err := kernelmath.NewGram(n, len(pairs), t)
	return base{k: g, fold: foldComments}, err
}
