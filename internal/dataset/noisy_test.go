package dataset

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func cloneTags(in [][]int) [][]int {
	out := make([][]int, len(in))
	for i, t := range in {
		out[i] = slices.Clone(t)
	}
	return out
}

func TestNoisyTagsDeterministic(t *testing.T) {
	ml := realCorel5k(t)
	before := cloneTags(ml.Y)
	a := NoisyTags(ml.Y, 0.8, 0.7, 42)
	b := NoisyTags(ml.Y, 0.8, 0.7, 42)
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different output")
	}
	if c := NoisyTags(ml.Y, 0.8, 0.7, 43); reflect.DeepEqual(a, c) {
		t.Error("seeds 42 and 43 gave the same output")
	}
	if !reflect.DeepEqual(ml.Y, before) {
		t.Error("NoisyTags modified its input")
	}
}

func TestNoisyTagsIdentity(t *testing.T) {
	ml := realCorel5k(t)
	if got := NoisyTags(ml.Y, 1, 0, 7); !reflect.DeepEqual(got, ml.Y) {
		t.Error("keep=1 swap=0 is not the identity")
	}
}

func TestNoisyTagsKeepNone(t *testing.T) {
	ml := realCorel5k(t)
	got := NoisyTags(ml.Y, 0, 0, 7)
	for i, tags := range got {
		if len(tags) != 1 || !slices.Contains(ml.Y[i], tags[0]) {
			t.Fatalf("image %d: tags %v, want exactly one of its true tags %v", i, tags, ml.Y[i])
		}
	}
}

func TestNoisyTagsSwapAll(t *testing.T) {
	ml := realCorel5k(t)
	holders := map[int][]int{} // keyword -> images that truly carry it
	for i, y := range ml.Y {
		for _, k := range y {
			holders[k] = append(holders[k], i)
		}
	}
	got := NoisyTags(ml.Y, 1, 1, 11)
	for i, tags := range got {
		truth := ml.Y[i]
		if len(tags) != len(truth) {
			t.Fatalf("image %d: %d tags, want %d (count unchanged)", i, len(tags), len(truth))
		}
		diff := -1
		for p := range tags {
			if tags[p] != truth[p] {
				if diff >= 0 {
					t.Fatalf("image %d: %v vs truth %v: more than one tag differs", i, tags, truth)
				}
				diff = p
			}
		}
		if diff < 0 {
			t.Fatalf("image %d: no tag replaced (%v)", i, tags)
		}
		kw := tags[diff]
		if slices.Contains(truth, kw) {
			t.Fatalf("image %d: swapped-in keyword %d is already a true tag", i, kw)
		}
		if !slices.ContainsFunc(holders[kw], func(j int) bool { return j != i }) {
			t.Fatalf("image %d: keyword %d is not a true keyword of another image", i, kw)
		}
	}
}

// With keep=0.8 and no swap the output is a subsequence of the truth and
// keeps 80% of the tags, plus the forced keeps of images that lost all
// theirs: E = sum over images of 0.8k + 0.2^k = 14126.75 of 17610 = 0.80221.
func TestNoisyTagsKeepRate(t *testing.T) {
	ml := realCorel5k(t)
	got := NoisyTags(ml.Y, 0.8, 0, 5)
	total, kept := 0, 0
	expected := 0.0
	for i, tags := range got {
		truth := ml.Y[i]
		total += len(truth)
		kept += len(tags)
		expected += 0.8*float64(len(truth)) + math.Pow(0.2, float64(len(truth)))
		if len(tags) == 0 {
			t.Fatalf("image %d lost all its tags", i)
		}
		p := 0
		for _, k := range tags {
			for p < len(truth) && truth[p] != k {
				p++
			}
			if p == len(truth) {
				t.Fatalf("image %d: %v is not a subsequence of its truth %v", i, tags, truth)
			}
			p++
		}
	}
	if total != 17610 {
		t.Errorf("%d true tags, want 17610", total)
	}
	rate := float64(kept) / float64(total)
	t.Logf("kept %d of %d tags: rate %.4f (expected %.4f)", kept, total, rate, expected/float64(total))
	if math.Abs(rate-0.8) > 0.01 {
		t.Errorf("keep rate %.4f, want 0.8 +- 0.01", rate)
	}
	sd := math.Sqrt(float64(total)*0.8*0.2) / float64(total)
	if math.Abs(rate-expected/float64(total)) > 4*sd {
		t.Errorf("keep rate %.4f more than 4 sd from its expectation %.4f", rate, expected/float64(total))
	}
}

func TestNoisyTagsSwapRate(t *testing.T) {
	ml := realCorel5k(t)
	got := NoisyTags(ml.Y, 1, 0.7, 9)
	changed := 0
	for i := range got {
		if !slices.Equal(got[i], ml.Y[i]) {
			changed++
		}
	}
	rate := float64(changed) / float64(len(got))
	if math.Abs(rate-0.7) > 0.03 { // sd is 0.0065
		t.Errorf("swap rate %.4f, want 0.7 +- 0.03", rate)
	}
}

// TestNoisyTagsStream replays the documented random stream by hand on a
// small input and checks NoisyTags draws exactly that.
func TestNoisyTagsStream(t *testing.T) {
	truth := [][]int{{0, 1, 2}, {3}, {}, {4, 5}, {1, 6, 7, 8}}
	const keep, swap, seed = 0.5, 0.6, 2024
	rng := rand.New(rand.NewPCG(seed, 0))
	want := make([][]int, len(truth))
	for i, tags := range truth {
		kept := []int{}
		if len(tags) > 0 {
			for _, k := range tags {
				if rng.Float64() < keep {
					kept = append(kept, k)
				}
			}
			if len(kept) == 0 {
				kept = append(kept, tags[rng.IntN(len(tags))])
			}
			if rng.Float64() < swap {
				pos := rng.IntN(len(kept))
				for {
					j := rng.IntN(len(truth) - 1)
					if j >= i {
						j++
					}
					if len(truth[j]) == 0 {
						continue
					}
					kw := truth[j][rng.IntN(len(truth[j]))]
					if !slices.Contains(kept, kw) {
						kept[pos] = kw
						break
					}
				}
			}
		}
		want[i] = kept
	}
	got := NoisyTags(truth, keep, swap, seed)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NoisyTags = %v, replayed stream gives %v", got, want)
	}
	swapped := 0
	for i := range got {
		for _, k := range got[i] {
			if !slices.Contains(truth[i], k) {
				swapped++
			}
		}
	}
	if swapped == 0 {
		t.Errorf("no swap in %v: the replay does not exercise the swap step", got)
	}
}

// An image whose tags cover every keyword can never be swapped: the redraws
// are bounded and the tags stay as they are.
func TestNoisyTagsRedrawBound(t *testing.T) {
	truth := [][]int{{0, 1}, {0}, {1}, {}}
	got := NoisyTags(truth, 1, 1, 3)
	if !reflect.DeepEqual(got[0], []int{0, 1}) {
		t.Errorf("image 0 (all keywords): %v, want [0 1] unchanged", got[0])
	}
	if !reflect.DeepEqual(got[1], []int{1}) || !reflect.DeepEqual(got[2], []int{0}) {
		t.Errorf("images 1, 2: %v %v, want [1] [0]", got[1], got[2])
	}
	if len(got[3]) != 0 {
		t.Errorf("image without tags got %v", got[3])
	}
	if got := NoisyTags([][]int{{5, 6}}, 1, 1, 3); !reflect.DeepEqual(got, [][]int{{5, 6}}) {
		t.Errorf("single image: %v, want unchanged (no other image)", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("keep=1.5 did not panic")
		}
	}()
	NoisyTags(truth, 1.5, 0, 1)
}

// corel5kQueriesFromText counts images per keyword straight from the ARFF
// text (attribute index - 499 for indices >= 499), independently of the
// loader, and returns the keywords with at least min images.
func corel5kQueriesFromText(t *testing.T, min int) []int {
	dir := realData(t)
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(Corel5kARFF)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	count := map[int]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		for _, e := range strings.Split(strings.Trim(line, "{}"), ",") {
			idx, err := strconv.Atoi(strings.Fields(e)[0])
			if err != nil {
				t.Fatal(err)
			}
			if idx >= 499 {
				count[idx-499]++
			}
		}
	}
	var q []int
	for k, c := range count {
		if c >= min {
			q = append(q, k)
		}
	}
	slices.Sort(q)
	return q
}

func TestQuerySplitCorel5k(t *testing.T) {
	ml := realCorel5k(t)
	want := corel5kQueriesFromText(t, 40)
	if len(want) != 90 {
		t.Errorf("%d keywords with >= 40 images in the raw file, expected 90", len(want))
	}
	val, test := QuerySplit(ml.Y, len(ml.LabelNames), 40, 1)
	t.Logf("%d queries: %d validation, %d test", len(want), len(val), len(test))
	if len(val) != len(want)/2 || len(test) != len(want)-len(want)/2 {
		t.Errorf("split sizes %d/%d, want %d/%d", len(val), len(test), len(want)/2, len(want)-len(want)/2)
	}
	if !slices.IsSorted(val) || !slices.IsSorted(test) {
		t.Error("halves not sorted")
	}
	for _, k := range val {
		if slices.Contains(test, k) {
			t.Errorf("keyword %d in both halves", k)
		}
	}
	union := slices.Sorted(slices.Values(append(slices.Clone(val), test...)))
	if !reflect.DeepEqual(union, want) {
		t.Errorf("union of the halves %v\nwant %v", union, want)
	}
	v2, t2 := QuerySplit(ml.Y, len(ml.LabelNames), 40, 1)
	if !reflect.DeepEqual(v2, val) || !reflect.DeepEqual(t2, test) {
		t.Error("same seed, different split")
	}
	if v3, _ := QuerySplit(ml.Y, len(ml.LabelNames), 40, 2); reflect.DeepEqual(v3, val) {
		t.Error("seeds 1 and 2 gave the same split")
	}
}

func TestQuerySplitSmall(t *testing.T) {
	// Images per keyword: 0 -> 3, 1 -> 2 (listed twice in image 0 but one
	// image), 2 -> 1, 3 -> 3, 4 -> 2, 5 -> 0.
	truth := [][]int{{0, 1, 1}, {0, 3}, {0, 1, 3, 4}, {2, 3, 4}}
	val, test := QuerySplit(truth, 6, 2, 8)
	union := slices.Sorted(slices.Values(append(slices.Clone(val), test...)))
	if want := []int{0, 1, 3, 4}; !reflect.DeepEqual(union, want) {
		t.Errorf("queries %v, want %v", union, want)
	}
	if len(val) != 2 || len(test) != 2 {
		t.Errorf("halves %v / %v, want 2 / 2", val, test)
	}
	val, test = QuerySplit(truth, 6, 3, 8)
	if len(val)+len(test) != 2 || len(val) != 1 {
		t.Errorf("min 3: halves %v / %v, want one query each of 0 and 3", val, test)
	}
	val, test = QuerySplit(truth[:1], 6, 2, 8)
	if len(val) != 0 || len(test) != 0 {
		t.Errorf("keyword repeated within one image counted twice: %v / %v", val, test)
	}
	// Odd count: validation gets floor(q/2).
	val, test = QuerySplit(truth, 6, 1, 8)
	if len(val) != 2 || len(test) != 3 {
		t.Errorf("5 queries split %d / %d, want 2 / 3", len(val), len(test))
	}
	defer func() {
		if recover() == nil {
			t.Error("keyword out of range did not panic")
		}
	}()
	QuerySplit([][]int{{6}}, 6, 1, 1)
}
