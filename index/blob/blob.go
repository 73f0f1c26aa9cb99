// Package blob is the content-addressed store of image bytes that every
// server of a deployment reads: originals under the hex SHA-256 of their
// bytes (Ref), thumbnails under their original's ref plus ".thumb". Equal
// bytes have one name wherever they are written, so a Put never changes
// what a name holds and writers need no coordination. Two backends: a
// directory (one machine, or a filesystem the servers share) and Redis.
package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrNotFound is returned by Get and Stat for a name the store lacks.
	ErrNotFound = errors.New("blob: not found")
	// ErrTooLarge is wrapped by the error of a Put above the store's size
	// cap per blob (a server answers 413).
	ErrTooLarge = errors.New("blob: larger than the store's cap per blob")
	// ErrFull is wrapped by the error of a Put past the store's total byte
	// budget (a server answers 507).
	ErrFull = errors.New("blob: the store's byte budget is spent")
	// ErrName is wrapped by the error of a name that is not a blob's.
	ErrName = errors.New("blob: not a blob name")
)

// Store holds blobs by name. Names are Ref(bytes), or ThumbName of one;
// every method refuses any other name with ErrName. All methods are safe
// for concurrent use, also from several processes.
type Store interface {
	// Put stores data under name; a blob already there is kept (its bytes
	// are the same).
	Put(ctx context.Context, name string, data []byte) error
	// Get returns the bytes of name, or ErrNotFound.
	Get(ctx context.Context, name string) ([]byte, error)
	// Stat returns the size of name, or ErrNotFound.
	Stat(ctx context.Context, name string) (int64, error)
	// Delete removes name; a missing blob is not an error.
	Delete(ctx context.Context, name string) error
	// Walk calls fn with every blob's name, in no order, until fn fails.
	Walk(ctx context.Context, fn func(name string) error) error
	// Info describes the store: its backend and, when cheap, its contents.
	Info(ctx context.Context) (Info, error)
}

// Info describes a store; Count and Bytes are -1 when unknown.
type Info struct {
	Backend string `json:"backend"`
	Count   int64  `json:"count"`
	Bytes   int64  `json:"bytes"`
}

// Ref is the name of an original: the hex SHA-256 of its bytes.
func Ref(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// thumbSuffix ends the name of a thumbnail.
const thumbSuffix = ".thumb"

// ThumbName is the name of the thumbnail of the original ref.
func ThumbName(ref string) string { return ref + thumbSuffix }

// Original returns the ref a name belongs to: the name itself for an
// original, the original's for a thumbnail.
func Original(name string) string { return strings.TrimSuffix(name, thumbSuffix) }

// ValidRef reports whether ref is a hex SHA-256, as Ref writes it.
func ValidRef(ref string) bool {
	if len(ref) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if c := ref[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// checkName returns an error wrapping ErrName unless name is a blob's.
func checkName(name string) error {
	if !ValidRef(Original(name)) {
		return fmt.Errorf("%w: %.80q is neither a hex SHA-256 nor one followed by %s", ErrName, name, thumbSuffix)
	}
	return nil
}
