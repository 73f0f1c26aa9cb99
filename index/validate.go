package index

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
)

// MaxIDLen is the longest accepted document id, in bytes.
const MaxIDLen = 128

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
	if d.ImageSHA256 != "" && !isHash(d.ImageSHA256) {
		return fmt.Errorf("image_sha256 %q is not 64 lower-case hex digits", d.ImageSHA256)
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
// id. An id is 1 to MaxIDLen bytes of ASCII letters, digits, '.', '_' and
// '-', not starting with '.': ids are URL path segments and file names (of
// uploaded images and thumbnails), so "." and ".." and hidden or over-long
// names are out, and the files the image store keeps for itself start with
// '.'.
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
	case id[0] == '.':
		return errors.New("id starts with '.'")
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !idByte(c) {
			return fmt.Errorf("id has %q at byte %d: an id is ASCII letters, digits, '.', '_' and '-'", rune(c), i)
		}
	}
	return nil
}

func idByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// isHash reports whether s is a hex SHA-256 as ImageSHA256 holds it.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
