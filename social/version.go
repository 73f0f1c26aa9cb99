package social

import (
	"encoding/binary"
	"math"

	"github.com/kernelrank/kernelrank/cache"
)

// Version returns a content hash of everything training reads: the users
// in order (ids) with their photos (visual features, tags, positions),
// tags, places and faves, the groups, friendships, memberships and
// comments. Two loads of the same files give the same version; any change
// to these gives another. Attrs, Format and the photos' ids and times are
// left out: no kernel reads them, so a change there needs no new model.
// O(size of the data).
func (ds *Dataset) Version() string {
	// Sized for the relations, most of it: growing it was a tenth of the
	// time.
	e := versionEncoder{b: make([]byte, 0, 64*len(ds.Users)+16*(len(ds.Friends)+len(ds.Memberships))+24*len(ds.Comments)+64)}
	e.int(len(ds.Users))
	for i := range ds.Users {
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
	}
	e.strs(ds.Groups)
	for _, pairs := range [][][2]int{ds.Friends, ds.Memberships} {
		e.int(len(pairs))
		for _, p := range pairs {
			e.int(p[0])
			e.int(p[1])
		}
	}
	e.int(len(ds.Comments))
	for _, c := range ds.Comments {
		e.int(c.Author)
		e.int(c.Owner)
		e.int(c.Count)
	}
	return cache.Hash(e.b)
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
