package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
)

// Key names a cached value. Its string form, the key schema, is
//
//	kr:<FormatVersion>:<kind>:<learner>:<params hash>:<input hash>
//
// kind is what is cached (kernel, ranking, ...), learner the strategy or
// learner that computed it, params the hash of its canonical parameters
// and input the hash of what it was computed from (the candidate ids and
// the corpus version, or the social data version). A value is only ever
// found for the same learner, parameters and input, so a stale entry
// cannot be served for new input; FormatVersion keeps servers with two
// value layouts apart.
type Key struct {
	Kind, Learner, Params, Input string
}

func (k Key) String() string {
	return "kr:" + strconv.Itoa(FormatVersion) + ":" + k.Kind + ":" + k.Learner + ":" + k.Params + ":" + k.Input
}

// Hash returns a 128-bit hex digest of the parts; each part is length
// prefixed, so ("ab", "c") and ("a", "bc") differ.
func Hash(parts ...[]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// HashStrings is Hash over strings.
func HashStrings(parts ...string) string {
	b := make([][]byte, len(parts))
	for i, p := range parts {
		b[i] = []byte(p)
	}
	return Hash(b...)
}
