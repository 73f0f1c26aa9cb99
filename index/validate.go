package index

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
)

// MaxIDLen is the longest accepted document id, in bytes.
const MaxIDLen = 256

// validator checks documents before anything is written. It carries the
// feature dimension: the index's, or, while the index has none, the length of
// the first vector it accepts.
type validator struct {
	an  analysis.Analyzer
	dim int
}

// check returns why d cannot be indexed, or nil. The error does not repeat the
// id: callers add it.
func (v *validator) check(d *Doc) error {
	if err := checkID(d.ID); err != nil {
		return err
	}
	for i, t := range d.Tags {
		if len(v.an.Analyze([]byte(t))) == 0 {
			return fmt.Errorf("tag %d (%q) has no searchable term", i, t)
		}
	}
	if len(d.Tags) == 0 && strings.TrimSpace(d.Title) == "" {
		return errors.New("no tags and no title")
	}
	if len(d.Features) == 0 {
		return nil
	}
	for i, x := range d.Features {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("features[%d] is %v", i, x)
		}
	}
	switch {
	case v.dim == 0:
		v.dim = len(d.Features)
	case len(d.Features) != v.dim:
		return fmt.Errorf("features have length %d, the index dimension is %d", len(d.Features), v.dim)
	}
	return nil
}

// CheckID returns an error wrapping ErrInvalid if id cannot be a document
// id: empty, over MaxIDLen bytes, not UTF-8, or containing '/' or a control
// character (ids appear in URLs, file names and logs).
func CheckID(id string) error {
	if err := checkID(id); err != nil {
		return fmt.Errorf("%w %q: %v", ErrInvalid, id, err)
	}
	return nil
}

func checkID(id string) error {
	switch {
	case id == "":
		return errors.New("empty id")
	case len(id) > MaxIDLen:
		return fmt.Errorf("id is %d bytes long, the limit is %d", len(id), MaxIDLen)
	case !utf8.ValidString(id):
		return errors.New("id is not valid UTF-8")
	case strings.ContainsRune(id, '/'):
		return errors.New("id contains '/'")
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return errors.New("id contains a control character")
	}
	return nil
}
