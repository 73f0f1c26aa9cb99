package social

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"

	"github.com/kernelrank/kernelrank/cache"
)

// Version returns a content hash of everything training reads: the users
// in order (ids) with their photos (visual features, tags, positions),
// tags, places and faves, the groups, friendships, memberships and
// comments. Two loads of the same files give the same version; any change
// to these gives another. Attrs, Format and the photos' ids and times are
// left out: no kernel reads them, so a change there needs no new model.
//
// It hashes the hashes of the users, each of a user's data with its
// relations by id (its friends, its groups, the comments it wrote), so that
// a data set derived by Update rehashes only the users it changed. O(size
// of the data) otherwise.
func (ds *Dataset) Version() string {
	hashes := ds.userHashes
	if len(hashes) != len(ds.Users) {
		hashes = ds.hashUsers()
	}
	e := versionEncoder{b: make([]byte, 0, userHashSize*len(hashes)+64)}
	e.int(len(hashes))
	for _, h := range hashes {
		e.b = append(e.b, h[:]...)
	}
	e.strs(ds.Groups)
	return cache.Hash(e.b)
}

const userHashSize = 16

type userHash [userHashSize]byte

// hashUsers returns the hash of every user.
func (ds *Dataset) hashUsers() []userHash {
	friends, groups := Adjacency(ds.N(), ds.Friends, true), Adjacency(ds.N(), ds.Memberships, false)
	out := make([]userHash, ds.N())
	e := versionEncoder{}
	for i := range out {
		out[i] = ds.hashUser(&e, i, friends[i], groups[i])
	}
	return out
}

// hashUser returns the hash of user i with its friends and groups (sorted
// indices) and the comments it wrote; e is a buffer to reuse.
func (ds *Dataset) hashUser(e *versionEncoder, i int, friends, groups []int) userHash {
	e.b = e.b[:0]
	u := &ds.Users[i]
	e.str(u.ID)
	e.strs(u.Tags)
	e.strs(u.Places)
	e.strs(u.Faves)
	e.int(len(u.Photos))
	for _, p := range u.Photos {
		e.int(len(p.Visual))
		for _, x := range p.Visual {
			e.uint(math.Float64bits(x))
		}
		e.strs(p.Tags)
		if p.Geo == nil {
			e.int(0)
		} else {
			e.int(1)
			e.uint(math.Float64bits(p.Geo.Lat))
			e.uint(math.Float64bits(p.Geo.Lon))
		}
	}
	e.int(len(friends))
	for _, j := range friends {
		e.str(ds.Users[j].ID)
	}
	e.int(len(groups))
	for _, g := range groups {
		e.str(ds.Groups[g])
	}
	// Comments are sorted by author: i's are one run.
	lo, _ := slices.BinarySearchFunc(ds.Comments, i, func(c Comment, a int) int { return c.Author - a })
	hi := lo
	for hi < len(ds.Comments) && ds.Comments[hi].Author == i {
		hi++
	}
	e.int(hi - lo)
	for _, c := range ds.Comments[lo:hi] {
		e.str(ds.Users[c.Owner].ID)
		e.int(c.Count)
	}
	sum := sha256.Sum256(e.b)
	return userHash(sum[:userHashSize])
}

// Adjacency returns the other ends of pairs (sorted, unique, as a data
// set's relations are) by their first end in [0, n), and by either end
// when both: each list sorted, all slices of one array.
func Adjacency(n int, pairs [][2]int, both bool) [][]int {
	count := make([]int, n+1)
	for _, p := range pairs {
		count[p[0]+1]++
		if both {
			count[p[1]+1]++
		}
	}
	for i := range n {
		count[i+1] += count[i]
	}
	flat, next := make([]int, count[n]), slices.Clone(count[:n])
	put := func(u, v int) { flat[next[u]] = v; next[u]++ }
	if both { // the lower ends before the higher: sorted, as pairs are (i < j) in order
		for _, p := range pairs {
			put(p[1], p[0])
		}
	}
	for _, p := range pairs {
		put(p[0], p[1])
	}
	out := make([][]int, n)
	for u := range out {
		out[u] = flat[count[u]:count[u+1]:count[u+1]]
	}
	return out
}

// versionEncoder writes values unambiguously: strings and lists length
// prefixed, numbers as 8 bytes.
type versionEncoder struct{ b []byte }

func (e *versionEncoder) uint(x uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, x) }
func (e *versionEncoder) int(x int)     { e.uint(uint64(x)) }

func (e *versionEncoder) str(s string) {
	e.int(len(s))
	e.b = append(e.b, s...)
}

func (e *versionEncoder) strs(s []string) {
	e.int(len(s))
	for _, x := range s {
		e.str(x)
	}
}
