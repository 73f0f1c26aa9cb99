// Package index is the bleve tag index of the image corpus: it stores each
// image's tags, title, image path, ground-truth labels and visual feature
// vector, retrieves the first-stage candidates of a text query by tag search
// (Search), serves the stored fields and vectors of candidates to the
// re-ranker (GetMany, Features), keeps tag document frequencies for tf-idf
// (DocFreq), loads corpora (IngestJSONL, IngestDir), and keeps a server's
// uploaded images and thumbnails beside the index (Images).
//
// Tags, title and id are indexed; the fields needed to render a result and
// the vector are stored, unindexed, in the same bleve document (layout in
// codec.go), so all of a doc changes in one batch.
package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"
)

// formatVersion marks indexes written by this package. Bump it whenever the
// mapping, the analyser or the internal layout changes, so that an old index
// is refused with ErrIncompatible instead of silently mis-matching.
const formatVersion = "kernelrank-index/2"

var (
	// ErrIncompatible is returned by Open for a directory holding a bleve
	// index that this version of the package did not write.
	ErrIncompatible = errors.New("index: incompatible index format")
	// ErrInvalid is wrapped by every validation error of Add and CheckID.
	ErrInvalid = errors.New("index: invalid document")
)

// Doc is one image of the corpus.
type Doc struct {
	ID    string   `json:"id"`
	Tags  []string `json:"tags"`
	Title string   `json:"title"`
	// Image is the path to the image file; it may be empty (an upload's
	// bytes are in the blob store, under ImageSHA256).
	Image string `json:"image"`
	// ImageSHA256 is the hex SHA-256 of the image's bytes, empty for a doc
	// without an image. It, not the path, is what the corpus version
	// covers; ingest fills it from the file.
	ImageSHA256 string `json:"image_sha256,omitempty"`
	// Features is the visual vector; it may be nil.
	Features []float32 `json:"features"`
	// Labels are ground-truth labels for evaluation; optional.
	Labels []string `json:"labels"`
}

// Index is an on-disk tag index. Its methods are safe for concurrent use;
// writes (Add, Delete) are serialised.
type Index struct {
	bi bleve.Index
	an analysis.Analyzer

	// wmu serialises writers: a batch's document-frequency delta is computed
	// from the documents it replaces, which no other writer may change
	// meanwhile.
	wmu sync.Mutex

	mu      sync.RWMutex
	df      map[string]int // tag key (see tagKey) -> number of docs with the tag
	dim     int            // feature dimension, 0 until a doc has features
	version corpusHash     // see Version
	mark    []byte         // see Mark

	// life guards the direct use of bleve's reader against Close.
	life   sync.RWMutex
	closed bool
}

// runtimeConfig's bolt_timeout makes opening an index that another Index (or
// process) holds fail instead of blocking forever on the file lock.
var runtimeConfig = map[string]interface{}{"bolt_timeout": "1s"}

// Open opens the index in dir, or creates one if dir does not exist or is
// empty.
func Open(dir string) (*Index, error) {
	bi, err := bleve.OpenUsing(dir, runtimeConfig)
	if errors.Is(err, bleve.ErrorIndexPathDoesNotExist) || errors.Is(err, bleve.ErrorIndexMetaMissing) {
		bi, err = create(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", dir, err)
	}
	ix, err := load(bi)
	if err != nil {
		bi.Close()
		return nil, fmt.Errorf("index: open %s: %w", dir, err)
	}
	return ix, nil
}

func create(dir string) (bleve.Index, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if len(entries) > 0 {
		return nil, errors.New("directory is not empty and holds no bleve index")
	}
	m, err := newMapping()
	if err != nil {
		return nil, err
	}
	// NewUsing writes into its config map: give it a copy.
	bi, err := bleve.NewUsing(dir, m, scorch.Name, bleve.Config.DefaultKVStore, maps.Clone(runtimeConfig))
	if err != nil {
		return nil, err
	}
	if err := bi.SetInternal([]byte(keyVersion), []byte(formatVersion)); err != nil {
		bi.Close()
		return nil, err
	}
	return bi, nil
}

// load checks the format marker and builds the in-memory state.
func load(bi bleve.Index) (*Index, error) {
	v, err := bi.GetInternal([]byte(keyVersion))
	if err != nil {
		return nil, err
	}
	if string(v) != formatVersion {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrIncompatible, v, formatVersion)
	}
	ix := &Index{bi: bi, an: bi.Mapping().AnalyzerNamed(tagAnalyzer), df: map[string]int{}}
	if ix.an == nil {
		return nil, fmt.Errorf("%w: no analyser %q", ErrIncompatible, tagAnalyzer)
	}
	r, release, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer release()
	if b, _ := r.GetInternal([]byte(keyDim)); len(b) == 4 {
		ix.dim = int(binary.LittleEndian.Uint32(b))
	}
	if err := ix.countTags(r); err != nil {
		return nil, err
	}
	if m, _ := r.GetInternal([]byte(keyMark)); len(m) > 0 {
		ix.mark = m
	}
	b, _ := r.GetInternal([]byte(keyCorpus))
	if len(b) == len(ix.version) {
		copy(ix.version[:], b)
		return ix, nil
	}
	// An index that has never had a batch: hash every doc once and keep it.
	if ix.version, err = hashAll(r); err != nil {
		return nil, err
	}
	if err := bi.SetInternal([]byte(keyCorpus), ix.version[:]); err != nil {
		return nil, err
	}
	return ix, nil
}

// hashAll returns the corpus hash of every doc in r.
func hashAll(r bindex.IndexReader) (corpusHash, error) {
	var h corpusHash
	err := eachStored(r, h.flipStored)
	return h, err
}

// eachStored calls fn with the stored values of every doc in r, stopping at
// its first error, which it returns naming the doc.
func eachStored(r bindex.IndexReader, fn func(id string, fields, features []byte) error) error {
	all, err := r.DocIDReaderAll()
	if err != nil {
		return err
	}
	defer all.Close()
	for {
		iid, err := all.Next()
		if err != nil || iid == nil {
			return err
		}
		id, err := r.ExternalID(iid)
		if err != nil {
			return err
		}
		fields, features, err := stored(r, id)
		if err == nil && fields != nil {
			err = fn(id, fields, features)
		}
		if err != nil {
			return fmt.Errorf("index: doc %q: %w", id, err)
		}
	}
}

// countTags fills the tag frequency table from the tagkeys field: each of its
// terms is a whole normalised tag, and a term reader's count, unlike the
// dictionary's, excludes deleted documents.
func (ix *Index) countTags(r bindex.IndexReader) error {
	dict, err := r.FieldDict(fieldTagKeys)
	if err != nil {
		return err
	}
	defer dict.Close()
	for {
		e, err := dict.Next()
		if err != nil || e == nil {
			return err
		}
		tfr, err := r.TermFieldReader(context.Background(), []byte(e.Term), fieldTagKeys, false, false, false)
		if err != nil {
			return err
		}
		if n := int(tfr.Count()); n > 0 {
			ix.df[e.Term] = n
		}
		if err := tfr.Close(); err != nil {
			return err
		}
	}
}

// Close closes the index. Further calls fail.
func (ix *Index) Close() error {
	ix.life.Lock()
	defer ix.life.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	return ix.bi.Close()
}

// reader returns a snapshot reader of the index and the function releasing it.
func (ix *Index) reader() (bindex.IndexReader, func(), error) {
	ix.life.RLock()
	if ix.closed {
		ix.life.RUnlock()
		return nil, nil, bleve.ErrorIndexClosed
	}
	adv, err := ix.bi.Advanced()
	var r bindex.IndexReader
	if err == nil {
		r, err = adv.Reader()
	}
	if err != nil {
		ix.life.RUnlock()
		return nil, nil, err
	}
	return r, func() {
		r.Close()
		ix.life.RUnlock()
	}, nil
}

// Count returns the number of documents, 0 if the index is closed.
func (ix *Index) Count() uint64 {
	n, err := ix.bi.DocCount()
	if err != nil {
		return 0
	}
	return n
}

// Dim returns the feature dimension fixed by the first document with
// features, or 0.
func (ix *Index) Dim() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.dim
}

// DocFreq returns the number of documents having tag, compared in normalised
// form: the tag's index terms joined by a space, so "Car" counts docs tagged
// "car" and "close-up" counts docs tagged "Close up". Use it as r in
// idf = log(n/r).
func (ix *Index) DocFreq(tag string) int {
	k := tagKey(ix.an, tag)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.df[k]
}

// addTags adds sign to the count of each distinct tag key of tags and
// returns those keys.
func (ix *Index) addTags(df map[string]int, tags []string, sign int) []string {
	keys := make([]string, 0, len(tags))
	for _, t := range tags {
		if k := tagKey(ix.an, t); k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
			df[k] += sign
		}
	}
	return keys
}

// Get returns the stored fields of doc id (everything but Features: use
// Features for vectors) and whether it exists.
func (ix *Index) Get(id string) (Doc, bool, error) {
	docs, err := ix.GetMany([]string{id})
	if err != nil {
		return Doc{}, false, err
	}
	return docs[0], docs[0].ID != "", nil
}

// GetMany returns the stored fields of the docs ids, in order, from one
// snapshot; a missing doc is the zero Doc (ID ""). Features are left nil.
func (ix *Index) GetMany(ids []string) ([]Doc, error) {
	docs := make([]Doc, len(ids))
	err := ix.visitStored(ids, func(i int, fields, _ []byte) error {
		docs[i].ID = ids[i]
		return decodeFields(fields, &docs[i])
	})
	if err != nil {
		return nil, err
	}
	return docs, nil
}

// Features returns the feature vectors of ids, in order, from one snapshot;
// the vector of a missing doc or of a doc without features is nil.
func (ix *Index) Features(ids []string) ([][]float32, error) {
	out := make([][]float32, len(ids))
	err := ix.visitStored(ids, func(i int, _, features []byte) (err error) {
		if features != nil {
			out[i], err = decodeFeatures(features)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// visitStored calls fn with the stored values of each of the docs ids that
// exists; features is nil for a doc without a vector.
func (ix *Index) visitStored(ids []string, fn func(i int, fields, features []byte) error) error {
	r, release, err := ix.reader()
	if err != nil {
		return err
	}
	defer release()
	for i, id := range ids {
		fields, features, err := stored(r, id)
		if err == nil && fields != nil {
			err = fn(i, fields, features)
		}
		if err != nil {
			return fmt.Errorf("index: doc %q: %w", id, err)
		}
	}
	return nil
}

// stored returns the stored values of doc id; fields is nil if there is no
// such doc.
func stored(r bindex.IndexReader, id string) (fields, features []byte, err error) {
	d, err := r.Document(id)
	if err != nil || d == nil {
		return nil, nil, err
	}
	d.VisitFields(func(f bindex.Field) {
		switch f.Name() {
		case fieldStored:
			fields = f.Value()
		case fieldFeatures:
			features = f.Value()
		}
	})
	if fields == nil {
		return nil, nil, errCorrupt
	}
	return fields, features, nil
}

// Add inserts docs, replacing any doc with the same id (the last of
// duplicates within docs wins). Every doc is validated first: if one is
// invalid nothing is written and the error, wrapping ErrInvalid, names it.
// Otherwise the whole batch, index terms, stored fields and vectors, becomes
// visible at once.
func (ix *Index) Add(docs []Doc) error {
	_, err := ix.AddAt(docs, nil)
	return err
}

// AddAt is Add that, unless mark is nil, also records mark as the index's
// Mark in the same batch. It returns the stored docs the batch replaced
// (without features).
func (ix *Index) AddAt(docs []Doc, mark []byte) (replaced []Doc, err error) {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()

	dim, err := ix.validate(docs)
	if err != nil {
		return nil, err
	}
	last := make(map[string]int, len(docs))
	for i := range docs {
		last[docs[i].ID] = i
	}

	b := ix.bi.NewBatch()
	m := ix.bi.Mapping()
	delta := map[string]int{}
	var ver corpusHash
	replaced, err = ix.forOld(docs, last, delta, &ver, func(i int) error {
		d := &docs[i]
		keys := ix.addTags(delta, d.Tags, 1)
		bd := document.NewDocument(d.ID)
		if err := m.MapDocument(bd, indexedDoc{ID: d.ID, Tags: d.Tags, TagKeys: keys, Title: d.Title, ImageHash: d.ImageSHA256}); err != nil {
			return fmt.Errorf("index: doc %q: %w", d.ID, err)
		}
		bd.AddField(document.NewTextFieldCustom(fieldStored, nil, encodeFields(d), bindex.StoreField, nil))
		var features []byte
		if len(d.Features) > 0 {
			features = encodeFeatures(d.Features)
			bd.AddField(document.NewTextFieldCustom(fieldFeatures, nil, features, bindex.StoreField, nil))
		}
		ver.flip(d, features)
		return b.IndexAdvanced(bd)
	})
	if err != nil {
		return nil, err
	}
	if dim != ix.Dim() {
		b.SetInternal([]byte(keyDim), binary.LittleEndian.AppendUint32(nil, uint32(dim)))
	}
	return replaced, ix.commit(b, delta, dim, ver, mark)
}

// Validate returns the error Add would give docs for an invalid doc, or nil;
// it writes nothing. A caller that must do work before Add (writing the
// image files of an upload) checks first, so an invalid batch costs nothing.
func (ix *Index) Validate(docs []Doc) error {
	_, err := ix.validate(docs)
	return err
}

// validate checks every doc and returns the feature dimension the batch
// leaves the index with.
func (ix *Index) validate(docs []Doc) (int, error) {
	v := validator{an: ix.an, dim: ix.Dim()}
	for i := range docs {
		if err := v.check(&docs[i]); err != nil {
			return 0, fmt.Errorf("%w %q (docs[%d]): %v", ErrInvalid, docs[i].ID, i, err)
		}
	}
	return v.dim, nil
}

// Delete removes the docs ids; unknown ids are ignored.
func (ix *Index) Delete(ids []string) error {
	_, err := ix.DeleteAt(ids, nil)
	return err
}

// DeleteAt is Delete that, unless mark is nil, also records mark as the
// index's Mark in the same batch; with no ids it records only the mark.
// It returns the stored docs it deleted (without features).
func (ix *Index) DeleteAt(ids []string, mark []byte) (deleted []Doc, err error) {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()

	docs := make([]Doc, len(ids))
	last := make(map[string]int, len(ids))
	for i, id := range ids {
		docs[i].ID = id
		last[id] = i
	}
	b := ix.bi.NewBatch()
	delta := map[string]int{}
	var ver corpusHash
	deleted, err = ix.forOld(docs, last, delta, &ver, func(i int) error {
		b.Delete(ids[i])
		return nil
	})
	if err != nil {
		return nil, err
	}
	return deleted, ix.commit(b, delta, ix.Dim(), ver, mark)
}

// forOld calls write for the last occurrence of each id in docs, after
// subtracting the tags of the stored doc it replaces (if any) from delta and
// its hash from ver; it returns those stored docs.
func (ix *Index) forOld(docs []Doc, last map[string]int, delta map[string]int, ver *corpusHash, write func(i int) error) (olds []Doc, err error) {
	r, release, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer release()
	for i := range docs {
		if last[docs[i].ID] != i {
			continue
		}
		fields, features, err := stored(r, docs[i].ID)
		if fields != nil {
			old := Doc{ID: docs[i].ID}
			if err = decodeFields(fields, &old); err == nil {
				ix.addTags(delta, old.Tags, -1)
				ver.flip(&old, features)
				olds = append(olds, old)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("index: doc %q: %w", docs[i].ID, err)
		}
		if err := write(i); err != nil {
			return nil, err
		}
	}
	return olds, nil
}

// commit writes b with the corpus version changed by ver and the mark
// (unless nil) and, once it is in, applies the frequency delta, the
// feature dimension, the version and the mark.
func (ix *Index) commit(b *bleve.Batch, delta map[string]int, dim int, ver corpusHash, mark []byte) error {
	if b.Size() == 0 && mark == nil {
		return nil
	}
	if mark != nil {
		b.SetInternal([]byte(keyMark), mark)
	}
	ix.mu.RLock()
	ver.xor(ix.version)
	ix.mu.RUnlock()
	b.SetInternal([]byte(keyCorpus), ver[:])
	if err := ix.bi.Batch(b); err != nil {
		return fmt.Errorf("index: write batch: %w", err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for k, n := range delta {
		if ix.df[k] += n; ix.df[k] <= 0 {
			delete(ix.df, k)
		}
	}
	ix.dim = dim
	ix.version = ver
	if mark != nil {
		ix.mark = slices.Clone(mark)
	}
	return nil
}

// Mark returns the mark the last AddAt or DeleteAt recorded, kept across
// restarts, or nil: a replica's position in the change log it applies,
// written in the batch that applies the change, so that the index never
// holds a change without its position or the reverse.
func (ix *Index) Mark() []byte {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.mark
}

// ImageRefs returns the number of docs whose ImageSHA256 is hash.
func (ix *Index) ImageRefs(hash string) (int, error) {
	r, release, err := ix.reader()
	if err != nil {
		return 0, err
	}
	defer release()
	tfr, err := r.TermFieldReader(context.Background(), []byte(hash), fieldImageHash, false, false, false)
	if err != nil {
		return 0, err
	}
	defer tfr.Close()
	return int(tfr.Count()), nil
}

// Walk calls fn with every doc, features included, from one snapshot of the
// index, and returns the Mark of that snapshot; it stops at fn's first
// error.
func (ix *Index) Walk(fn func(Doc) error) (mark []byte, err error) {
	r, release, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer release()
	mark, err = r.GetInternal([]byte(keyMark))
	if err != nil {
		return nil, err
	}
	err = eachStored(r, func(id string, fields, features []byte) error {
		d := Doc{ID: id}
		err := decodeFields(fields, &d)
		if err == nil && features != nil {
			d.Features, err = decodeFeatures(features)
		}
		if err == nil {
			err = fn(d)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return mark, nil
}
