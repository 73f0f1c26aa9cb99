package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Storage layout. Each bleve document carries, besides its indexed fields,
// two stored-only fields that are never analysed:
//
//	fields    the stored fields of the doc (encodeFields)
//	features  its feature vector: uint32 LE length n, then n float32 LE;
//	          absent when the doc has none
//
// so a doc's text, fields and vector live in one segment and change together.
// bleve's internal key/value store holds only index-wide metadata:
//
//	m/version  formatVersion
//	m/dim      uint32 LE: the feature dimension, absent until a doc has features
//	m/corpus   the corpus version (version.go): 16 bytes, written with every
//	           batch; an index without it gets it on Open
//	m/mark     the Mark: a replica's position in the change log it applies
//
// Per-doc values must not go there: scorch keeps the internal store in
// memory, copies it on every batch and rewrites all of it on every persist,
// which made a 100k-doc build with 297-d vectors quadratic (gigabytes of
// root.bolt after 30k docs).
const (
	keyVersion = "m/version"
	keyDim     = "m/dim"
	keyCorpus  = "m/corpus"
	keyMark    = "m/mark"
)

var errCorrupt = errors.New("index: corrupt stored value")

// encodeFields packs the stored fields of d (not its id, which bleve keeps,
// nor its features, stored apart) as uvarint-length-prefixed strings: title,
// image, the tag count and tags, the label count and labels, the image's
// SHA-256 (hex): it is on the path of every rendered result, and decodes in
// a fraction of the time JSON takes.
func encodeFields(d *Doc) []byte {
	n := 4*binary.MaxVarintLen64 + len(d.Title) + len(d.Image) + len(d.ImageSHA256)
	for _, s := range d.Tags {
		n += binary.MaxVarintLen64 + len(s)
	}
	for _, s := range d.Labels {
		n += binary.MaxVarintLen64 + len(s)
	}
	b := make([]byte, 0, n)
	b = appendString(b, d.Title)
	b = appendString(b, d.Image)
	b = appendStrings(b, d.Tags)
	b = appendStrings(b, d.Labels)
	return appendString(b, d.ImageSHA256)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

// decodeFields is the inverse of encodeFields; it fills every field of d but
// ID and Features.
func decodeFields(b []byte, d *Doc) error {
	r := fieldReader{b: b}
	d.Title = r.string()
	d.Image = r.string()
	d.Tags = r.strings()
	d.Labels = r.strings()
	d.ImageSHA256 = r.string()
	if r.bad || len(r.b) != 0 {
		return errCorrupt
	}
	return nil
}

// fieldReader reads encodeFields' output, remembering the first error so that
// decodeFields checks once.
type fieldReader struct {
	b   []byte
	bad bool
}

func (r *fieldReader) uvarint() int {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(len(r.b)-n) {
		// A count or length can never exceed the remaining bytes.
		r.bad = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *fieldReader) string() string {
	n := r.uvarint()
	if r.bad {
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *fieldReader) strings() []string {
	n := r.uvarint()
	if n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.string()
	}
	return ss
}

func encodeFeatures(v []float32) []byte {
	b := make([]byte, 4+4*len(v))
	binary.LittleEndian.PutUint32(b, uint32(len(v)))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4+4*i:], math.Float32bits(x))
	}
	return b
}

func decodeFeatures(b []byte) ([]float32, error) {
	if len(b) < 4 || uint64(len(b)-4) != 4*uint64(binary.LittleEndian.Uint32(b)) {
		return nil, fmt.Errorf("%w: feature vector of %d bytes", errCorrupt, len(b))
	}
	v := make([]float32, (len(b)-4)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4+4*i:]))
	}
	return v, nil
}
