package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// corpusHash is the corpus version: the XOR of a 128-bit hash of every doc:
// of what defines it for search, its id, title, tags, feature vector and
// the SHA-256 of its image bytes, and of nothing that depends on where or
// how it was ingested (the image's path, labels kept for evaluation). So
// one corpus has one version on every machine. XOR lets Add and
// Delete maintain it in O(changed docs): replacing or deleting a doc XORs
// its old hash out again, so the version depends only on the set of docs
// stored, not on the order or the batches that stored them. Ids are unique
// in an index, so no two hashes cancel by being equal.
type corpusHash [16]byte

// flip XORs the hash of d into h; features is d's vector as stored
// (encodeFeatures), nil without one.
func (h *corpusHash) flip(d *Doc, features []byte) {
	s := sha256.New()
	var n [8]byte
	write := func(p []byte) {
		// Length prefixes keep ("ab", "c") and ("a", "bc") apart.
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		s.Write(n[:])
		s.Write(p)
	}
	write([]byte(d.ID))
	write([]byte(d.Title))
	binary.LittleEndian.PutUint64(n[:], uint64(len(d.Tags)))
	s.Write(n[:])
	for _, t := range d.Tags {
		write([]byte(t))
	}
	write(features)
	write([]byte(d.ImageSHA256))
	var sum [sha256.Size]byte
	h.xor(corpusHash(s.Sum(sum[:0])[:16]))
}

// flipStored is flip for a doc as stored.
func (h *corpusHash) flipStored(id string, fields, features []byte) error {
	d := Doc{ID: id}
	if err := decodeFields(fields, &d); err != nil {
		return err
	}
	h.flip(&d, features)
	return nil
}

func (h *corpusHash) xor(o corpusHash) {
	for i := range h {
		h[i] ^= o[i]
	}
}

// Version returns the corpus version, 32 hex digits: it changes whenever a
// doc is added, replaced by a different one or deleted, and two indexes
// holding the same docs have the same version however they were built.
// Caches key what they compute from the corpus by it, so that a change
// makes every old entry unreachable.
func (ix *Index) Version() string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return hex.EncodeToString(ix.version[:])
}

// ContentHash is the hex SHA-256 of an image's bytes, as ImageSHA256 holds it.
func ContentHash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
