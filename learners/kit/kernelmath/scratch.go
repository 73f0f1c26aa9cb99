package kernelmath

import (
	"math/bits"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Per-call workspaces. A re-ranking allocates about a dozen n x n matrices
// that die with the call (4 MB for a 200-image window); on a small heap the
// collector then runs at nearly every call, and the memory it frees is
// returned to the system and faulted back in by the next call. Scratch and
// Release recycle such buffers instead, through one sync.Pool per
// power-of-two capacity (so a buffer serves every length up to its
// capacity); the pools empty themselves at garbage collections, so an idle
// server keeps nothing.
var scratchPools [bits.UintSize]sync.Pool

// Scratch returns a []float64 of length n from the pools, or a new one. Its
// contents are arbitrary: the caller overwrites (or clears) what it reads.
func Scratch(n int) []float64 {
	if n <= 0 {
		return nil
	}
	c := bits.Len(uint(n - 1))
	if b, ok := scratchPools[c].Get().(*[]float64); ok {
		return (*b)[:n]
	}
	return make([]float64, n, 1<<c)
}

// Release hands b, which Scratch returned, back to the pools: nothing may
// use it afterwards. A slice whose capacity is not a power of two (not from
// Scratch) is left to the collector.
func Release(b []float64) {
	c := cap(b)
	if c == 0 || c&(c-1) != 0 {
		return
	}
	b = b[:c]
	scratchPools[bits.Len(uint(c-1))].Put(&b)
}

// ScratchSym returns an n x n (n > 0) symmetric matrix over Scratch
// storage, contents arbitrary; ReleaseSym hands it back.
func ScratchSym(n int) *mat.SymDense { return mat.NewSymDense(n, Scratch(n*n)) }

// ReleaseSym releases the storage of a ScratchSym matrix (see Release).
func ReleaseSym(s *mat.SymDense) { Release(s.RawSymmetric().Data) }
