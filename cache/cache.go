// Package cache holds what kernelrank learns, so that no server learns it
// twice: learned kernels and rankings of candidate windows, and trained
// recommenders as immutable, versioned models. Two backends implement one
// Cache interface: in-process (the default, with a byte budget) and Redis
// (standalone or cluster, through go-redis' UniversalClient), which every
// server and worker of a deployment shares.
//
// Values are checksummed binary (codec.go); a value that fails its check
// is a miss, is deleted and counted, and is never served. Loader adds to a
// Cache what a caller needs: one computation per key at a time in a
// process (singleflight) and across processes (a short lock), metrics, and
// degradation (a backend that fails is a miss: the caller computes).
//
// Models are stored through a Store: write every part of a version, then
// switch one pointer (Publish), so a reader never sees half a model.
package cache

import (
	"context"
	"errors"
	"time"
)

// ErrMiss is returned for a key or model that is not stored.
var ErrMiss = errors.New("cache miss")

// ErrCorrupt is returned by Decode for a value that fails its checks
// (length, header, checksum).
var ErrCorrupt = errors.New("corrupt cache value")

// Cache is a key-value store with TTLs. Implementations are safe for
// concurrent use. Errors other than ErrMiss mean the backend failed (e.g.
// Redis is unreachable); callers treat them as misses and carry on.
type Cache interface {
	// Get returns the value of key, or ErrMiss.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores val under key for ttl (0: no expiry).
	Set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// Delete removes key; an absent key is not an error.
	Delete(ctx context.Context, key string) error
	// Lock takes a lock on name for at most ttl, shared by every process
	// of the backend (the in-process backend's lock is the process's). ok
	// is false when another holder has it; unlock releases a lock still
	// held by this caller.
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(), ok bool, err error)
	// Incr adds one to member's count in the counter set; Top returns the n
	// members with the highest counts, highest first (ties by name).
	Incr(ctx context.Context, set, member string) error
	Top(ctx context.Context, set string, n int) ([]Count, error)
	// Ping checks that the backend answers.
	Ping(ctx context.Context) error
	// Backend names the backend: "memory" or "redis".
	Backend() string
	Close() error
}

// Count is one member of a counter set.
type Count struct {
	Member string `json:"member"`
	Count  int64  `json:"count"`
}

// Store keeps versioned models. A version is immutable once published:
// Write all of its parts, then Publish switches the model's pointer to it.
// Writing a version again with the same parts is harmless, so a job that
// is retried after a crash republishes the same version, not a second one.
type Store interface {
	// Write stores the parts of model's version. It does not publish.
	Write(ctx context.Context, model, version string, parts map[string][]byte) error
	// Publish makes version the current one of model; every part named in
	// parts of the Write must be readable before it is called.
	Publish(ctx context.Context, model, version string) error
	// Current returns the published version of model, or ErrMiss.
	Current(ctx context.Context, model string) (string, error)
	// Read returns one part of a version, or ErrMiss.
	Read(ctx context.Context, model, version, part string) ([]byte, error)
	// Versions lists model's written versions, oldest first.
	Versions(ctx context.Context, model string) ([]string, error)
	// Remove deletes a version that is not the current one.
	Remove(ctx context.Context, model, version string) error
}
