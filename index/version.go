package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// corpusHash is the corpus version: the XOR of a 128-bit hash of every doc
// (its id and its stored bytes: fields and features). XOR lets Add and
// Delete maintain it in O(changed docs): replacing or deleting a doc XORs
// its old hash out again, so the version depends only on the set of docs
// stored, not on the order or the batches that stored them. Ids are unique
// in an index, so no two hashes cancel by being equal.
type corpusHash [16]byte

// flip XORs the hash of one doc, as stored, into h.
func (h *corpusHash) flip(id string, fields, features []byte) {
	s := sha256.New()
	var n [8]byte
	for _, p := range [][]byte{[]byte(id), fields, features} {
		// Length prefixes keep ("ab", "c") and ("a", "bc") apart.
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		s.Write(n[:])
		s.Write(p)
	}
	var sum [sha256.Size]byte
	h.xor(corpusHash(s.Sum(sum[:0])[:16]))
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
