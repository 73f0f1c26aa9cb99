package index

import (
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/unicodenorm"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
)

// Field and analyser names as stored in the index mapping. Changing any of
// them, or the analyser chain, changes the indexed terms: bump formatVersion.
const (
	fieldTags      = "tags"
	fieldTitle     = "title"
	fieldID        = "id"
	fieldTagKeys   = "tagkeys"   // tagKey of each tag, for exact tag frequencies
	fieldImageHash = "imagehash" // ImageSHA256, to count the docs of an image (ImageRefs)
	fieldStored    = "fields"    // stored only, see codec.go
	fieldFeatures  = "features"  // stored only, see codec.go
	tagAnalyzer    = "kr_tag"
	nfkcFilter     = "kr_nfkc"
)

// indexedDoc is what the mapping sees of a Doc: the text to index. The
// stored-only fields are added to the bleve document afterwards.
type indexedDoc struct {
	ID        string   `json:"id"`
	Tags      []string `json:"tags"`
	TagKeys   []string `json:"tagkeys"`
	Title     string   `json:"title,omitempty"`
	ImageHash string   `json:"imagehash,omitempty"`
}

// newMapping builds the index mapping. Tags and title share one analyser:
// Unicode (UAX #29) word segmentation, NFKC normalisation (so full-width or
// decomposed forms of a word match its usual form) and lower-casing. There is
// no stemming: tags are a curated vocabulary whose words are labels (Porter
// would merge Corel5k's distinct keywords "vegetation" and "vegetables"),
// evaluation compares exact labels, and an English stemmer would mangle
// other languages. The price is that "horse" does not match "horses".
func newMapping() (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	if err := im.AddCustomTokenFilter(nfkcFilter, map[string]interface{}{
		"type": unicodenorm.Name,
		"form": unicodenorm.NFKC,
	}); err != nil {
		return nil, err
	}
	if err := im.AddCustomAnalyzer(tagAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     unicode.Name,
		"token_filters": []string{nfkcFilter, lowercase.Name},
	}); err != nil {
		return nil, err
	}

	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldTags, indexOnly(bleve.NewTextFieldMapping(), tagAnalyzer))
	// The title is indexed so that it can be queried (e.g. "title:beach" from
	// bleve's tools) without re-indexing, but Search does not use it: the
	// product's text stage is tag search.
	dm.AddFieldMappingsAt(fieldTitle, indexOnly(bleve.NewTextFieldMapping(), tagAnalyzer))
	dm.AddFieldMappingsAt(fieldID, indexOnly(bleve.NewKeywordFieldMapping(), keyword.Name))
	dm.AddFieldMappingsAt(fieldTagKeys, indexOnly(bleve.NewKeywordFieldMapping(), keyword.Name))
	dm.AddFieldMappingsAt(fieldImageHash, indexOnly(bleve.NewKeywordFieldMapping(), keyword.Name))

	im.DefaultMapping = dm
	im.DefaultAnalyzer = tagAnalyzer
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	return im, nil
}

// indexOnly turns off everything a field does not need: no stored value (the
// "fields" blob has it), no term vectors (no phrase queries or highlighting),
// no doc values (no sorting or faceting on fields), no _all.
func indexOnly(f *mapping.FieldMapping, analyzer string) *mapping.FieldMapping {
	f.Analyzer = analyzer
	f.Store = false
	f.IncludeTermVectors = false
	f.IncludeInAll = false
	f.DocValues = false
	return f
}

// terms returns the index terms of text, in order, as the tags field sees them.
func terms(a analysis.Analyzer, text string) []string {
	ts := a.Analyze([]byte(text))
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t.Term)
	}
	return out
}

// tagKey is the normalised form of a whole tag, the key of the document
// frequency table: its terms joined by one space. "Close-Up" and "close up"
// share the key "close up"; a one-word tag's key is its index term.
func tagKey(a analysis.Analyzer, tag string) string {
	return strings.Join(terms(a, tag), " ")
}
