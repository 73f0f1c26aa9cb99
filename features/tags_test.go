package features

import (
	"math"
	"testing"
)

// Corpus of n = 3 images: {cat, dog}, {cat, bird, dog}, {fish, cat}.
// Document frequencies: cat 3, dog 2, bird 1, fish 1.
var corpusDF = map[string]int{"cat": 3, "dog": 2, "bird": 1, "fish": 1}

func df(tag string) int { return corpusDF[tag] }

// By hand: idf(cat) = ln(3/3) = 0, idf(dog) = ln(3/2) = 0.405465,
// idf(bird) = idf(fish) = ln 3 = 1.098612. Image 2's norm is
// sqrt(0.405465^2 + 1.098612^2) = 1.171047, so bird = 0.938145 and
// dog = 0.346242; images 1 and 3 are a single tag each, weight 1.
func TestTFIDF(t *testing.T) {
	img1 := TFIDF([]string{"cat", "dog"}, 3, df)
	img2 := TFIDF([]string{"cat", "bird", "dog"}, 3, df)
	img3 := TFIDF([]string{"fish", "cat"}, 3, df)
	checkTags(t, img1, TagVector{"dog": 1})
	checkTags(t, img2, TagVector{"bird": 0.9381453975, "dog": 0.3462415531})
	checkTags(t, img3, TagVector{"fish": 1})
	for _, c := range []struct {
		a, b TagVector
		want float64
	}{
		{img1, img2, 0.3462415531}, // shared dog
		{img2, img1, 0.3462415531},
		{img1, img3, 0},
		{img2, img2, 1},
	} {
		if got := c.a.Dot(c.b); !near(got, c.want, 1e-9) {
			t.Errorf("Dot(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// Tags are trimmed and lowercased, duplicates count once, docFreq sees the
// normalised form, and an unseen tag (docFreq 0) counts as r = 1.
func TestTFIDFNormalisation(t *testing.T) {
	var asked []string
	got := TFIDF([]string{" Bird", "bird ", "DOG", "cat", "", "  "}, 3, func(tag string) int {
		asked = append(asked, tag)
		return df(tag)
	})
	checkTags(t, got, TagVector{"bird": 0.9381453975, "dog": 0.3462415531})
	for _, tag := range asked {
		if tag != NormalizeTag(tag) || tag == "" {
			t.Errorf("docFreq got %q", tag)
		}
	}
	// "zebra" is unseen: idf ln(3/1), like bird.
	checkTags(t, TFIDF([]string{"zebra", "dog"}, 3, df), TagVector{"zebra": 0.9381453975, "dog": 0.3462415531})
}

func TestTFIDFDegenerate(t *testing.T) {
	for name, v := range map[string]TagVector{
		"no tags":    TFIDF(nil, 3, df),
		"all common": TFIDF([]string{"cat", "CAT"}, 3, df),
		"r > n":      TFIDF([]string{"dog"}, 1, df),
		"n = 0":      TFIDF([]string{"bird"}, 0, df),
	} {
		if len(v) != 0 {
			t.Errorf("%s: %v, want empty", name, v)
		}
		if d := v.Dot(TagVector{"cat": 1}); d != 0 {
			t.Errorf("%s: Dot = %v, want 0", name, d)
		}
	}
	// A common tag beside a rare one leaves the rare one alone, at weight 1.
	checkTags(t, TFIDF([]string{"cat", "fish"}, 3, df), TagVector{"fish": 1})
}

func TestTFIDFUnitNorm(t *testing.T) {
	freq := func(tag string) int { return len(tag) }
	v := TFIDF([]string{"a", "bb", "ccc", "dddd", "eeeee", "ffffff"}, 100, freq)
	if len(v) != 6 {
		t.Fatalf("%d tags, want 6", len(v))
	}
	if n := math.Sqrt(v.Dot(v)); !near(n, 1, 1e-12) {
		t.Errorf("norm %v, want 1", n)
	}
	// Rarer tags weigh more.
	if !(v["a"] > v["bb"] && v["bb"] > v["ffffff"]) {
		t.Errorf("weights not decreasing with document frequency: %v", v)
	}
}

func checkTags(t *testing.T, got, want TagVector) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
		return
	}
	for tag, w := range want {
		if g, ok := got[tag]; !ok || !near(g, w, 1e-9) {
			t.Errorf("weight of %q = %v, want %v (vector %v)", tag, g, w, got)
		}
	}
}
