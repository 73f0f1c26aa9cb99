package features

import (
	"math"
	"strings"
)

// TagVector is a sparse tag vector: tag -> weight. Vectors built by TFIDF
// have unit L2 norm, or are empty.
type TagVector map[string]float64

// NormalizeTag is the form tags are compared in: trimmed and lowercased.
func NormalizeTag(tag string) string {
	return strings.ToLower(strings.TrimSpace(tag))
}

// TFIDF returns the normalised tf-idf vector of an image's tags (thesis
// section 6.4.3): each distinct tag j gets idf_j = log(n / r_j), r_j =
// docFreq(tag) the number of the n images tagged with it, and the vector is
// scaled to unit L2 norm. Term frequency is binary: tags are normalised with
// NormalizeTag (docFreq receives that form), empty ones dropped and
// duplicates counted once.
//
// The thesis prints idf_j = log(r_j), which would weight frequent tags up;
// we use the standard log(n / r_j). A tag with docFreq 0 (unseen) counts as
// r = 1. A tag in every image (r >= n) gets idf 0 and is left out; if no
// tag has a positive weight, or n < 1, the vector is empty.
func TFIDF(tags []string, n int, docFreq func(tag string) int) TagVector {
	v := TagVector{}
	if n < 1 {
		return v
	}
	var norm2 float64
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		t = NormalizeTag(t)
		if seen[t] || t == "" {
			continue
		}
		seen[t] = true
		r := max(docFreq(t), 1)
		if r >= n {
			continue
		}
		idf := math.Log(float64(n) / float64(r))
		v[t] = idf
		norm2 += idf * idf
	}
	norm := math.Sqrt(norm2)
	for t, w := range v {
		v[t] = w / norm
	}
	return v
}

// Dot returns the inner product of a and b: their cosine similarity when
// both come from TFIDF.
func (a TagVector) Dot(b TagVector) float64 {
	if len(b) < len(a) {
		a, b = b, a
	}
	var s float64
	for t, w := range a {
		s += w * b[t]
	}
	return s
}
