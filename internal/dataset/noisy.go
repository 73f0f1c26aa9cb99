package dataset

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// MaxSwapRedraws bounds the redraws of NoisyTags' swap step; when every draw
// lands on a keyword the image already carries, the tag is kept unchanged.
const MaxSwapRedraws = 1000

// newRand returns the seeded stream used by NoisyTags and QuerySplit:
// math/rand/v2 PCG with state (uint64(seed), 0).
func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0))
}

// NoisyTags simulates noisy user tags from ground-truth keywords (truth[i]
// holds image i's true keyword ids), following the image-search evaluation
// protocol: "noisy user tags, seeded, with each image's tag count unchanged:
// each true keyword kept with probability keep (if none is kept, keep one at
// random); then with probability swap one kept tag, chosen at random, is
// replaced by a keyword drawn at random from the true keywords of a random
// other image (redraw if already present)".
//
// Reading taken: the keep step drops tags, so an image ends with as many
// tags as it kept; "tag count unchanged" refers to the swap step, which
// replaces one tag in place and never adds or removes one. "Already present"
// means among the image's current tags (the kept tags, including the one
// being replaced), so a swap always changes the tag set; a keyword that was
// true for the image but dropped by the keep step may come back through a
// swap. On a redraw both the other image and its keyword are drawn again;
// after MaxSwapRedraws failed draws the tag is left as it is.
//
// Randomness: one math/rand/v2 PCG stream, rand.NewPCG(uint64(seed), 0), for
// the whole call, consumed image by image in order: for image i with a
// non-empty truth, one Float64 per true keyword (kept iff < keep), one IntN if
// none was kept, one Float64 for the swap (done iff < swap), and when
// swapping one IntN for the position, then per draw one IntN for the other
// image (uniform over the n-1 others) and one IntN for its keyword (images
// with no keywords are drawn and rejected like a duplicate). Images with no
// true keywords consume nothing and get no tags; with a single image no swap
// is possible. keep = 1 and swap = 0 give back truth; keep = 0 leaves exactly
// one true tag an image.
//
// The result keeps the order of truth[i], the swapped-in keyword taking the
// position of the tag it replaced; truth is not modified. NoisyTags panics if
// keep or swap is outside [0, 1].
func NoisyTags(truth [][]int, keep, swap float64, seed int64) [][]int {
	if !(keep >= 0 && keep <= 1) || !(swap >= 0 && swap <= 1) {
		panic(fmt.Sprintf("dataset: NoisyTags: keep=%v and swap=%v must be in [0,1]", keep, swap))
	}
	rng := newRand(seed)
	n := len(truth)
	out := make([][]int, n)
	for i, tags := range truth {
		kept := make([]int, 0, len(tags))
		if len(tags) == 0 {
			out[i] = kept
			continue
		}
		for _, t := range tags {
			if rng.Float64() < keep {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 {
			kept = append(kept, tags[rng.IntN(len(tags))])
		}
		if rng.Float64() < swap && n > 1 {
			pos := rng.IntN(len(kept))
			for range MaxSwapRedraws {
				j := rng.IntN(n - 1)
				if j >= i {
					j++
				}
				other := truth[j]
				if len(other) == 0 {
					continue
				}
				kw := other[rng.IntN(len(other))]
				if !slices.Contains(kept, kw) {
					kept[pos] = kw
					break
				}
			}
		}
		out[i] = kept
	}
	return out
}

// QuerySplit returns the evaluation queries of the image-search protocol:
// every keyword in [0, nLabels) that at least minImages images carry in truth
// (an image listing a keyword twice counts once), shuffled with the seeded
// stream rand.NewPCG(uint64(seed), 0) (one Shuffle call) and split into
// validation = the first floor(q/2) and test = the remaining ceil(q/2), each
// returned in ascending order. It panics on a keyword outside [0, nLabels).
func QuerySplit(truth [][]int, nLabels, minImages int, seed int64) (validation, test []int) {
	count := make([]int, nLabels)
	last := make([]int, nLabels) // last image (1-based) that counted the keyword
	for i, tags := range truth {
		for _, t := range tags {
			if t < 0 || t >= nLabels {
				panic(fmt.Sprintf("dataset: QuerySplit: image %d has keyword %d outside [0,%d)", i, t, nLabels))
			}
			if last[t] != i+1 {
				last[t] = i + 1
				count[t]++
			}
		}
	}
	var q []int
	for k, c := range count {
		if c >= minImages {
			q = append(q, k)
		}
	}
	rng := newRand(seed)
	rng.Shuffle(len(q), func(a, b int) { q[a], q[b] = q[b], q[a] })
	h := len(q) / 2
	validation = slices.Clone(q[:h])
	test = slices.Clone(q[h:])
	slices.Sort(validation)
	slices.Sort(test)
	return validation, test
}
