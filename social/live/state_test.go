package live

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/kernelrank/kernelrank/social"
)

// TestIncrementalDatasetEqualsBuild applies random entries of every kind
// of operation (refused ones and undone ones included) and checks that the
// data set derived from the previous one equals social.Build of the
// state's records, version and lookups included, after each.
func TestIncrementalDatasetEqualsBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	// Ids whose natural order differs from byte order, so that new users
	// land between old ones.
	id := func() string { return fmt.Sprintf("u%d", rng.IntN(40)) }
	group := func() string { return fmt.Sprintf("g%d", rng.IntN(8)) }
	randOp := func() Op {
		switch k := rng.IntN(20); {
		case k < 4:
			p := &Profile{Tags: []string{fmt.Sprint("t", rng.IntN(5))}}
			if rng.IntN(2) == 0 {
				p.Photos = []social.Photo{{Visual: []float64{rng.Float64(), rng.Float64()}}}
			}
			return Op{Op: PutUser, User: id(), Profile: p}
		case k < 5:
			return Op{Op: DeleteUser, User: id()}
		case k < 9:
			return Op{Op: PutFriend, User: id(), Friend: id()}
		case k < 11:
			return Op{Op: DeleteFriend, User: id(), Friend: id()}
		case k < 14:
			return Op{Op: PutMember, User: id(), Group: group()}
		case k < 15:
			return Op{Op: DeleteMember, User: id(), Group: group()}
		case k < 16:
			return Op{Op: declareGroup, Group: group()}
		case k < 17:
			return Op{Op: dropGroup, Group: group()}
		case k < 19:
			return Op{Op: setComments, User: id(), Friend: id(), Count: rng.IntN(3)}
		}
		return Op{Op: setSource, Format: fmt.Sprint("f", rng.IntN(2)), Source: "s"}
	}
	st := newState()
	var prev *social.Dataset
	applied, incremental := 0, 0
	for step := range 3000 {
		ops := make([]Op, 1+rng.IntN(4))
		for k := range ops {
			ops[k] = randOp()
		}
		_, undo, err := st.apply(ops)
		if err == nil {
			applied++
			if rng.IntN(10) == 0 {
				undo() // as a failed log append does
			}
		}
		if rng.IntN(3) == 0 {
			continue // several entries make one data set, as a batch does
		}
		if prev != nil && !st.pending.whole && 4*len(st.pending.users) <= len(st.users) {
			incremental++
		}
		got, err := st.next(prev)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		want, err := st.dataset()
		if err != nil {
			t.Fatalf("step %d: build: %v", step, err)
		}
		sameDataset(t, fmt.Sprint("step ", step), got, want)
		prev = got
	}
	if applied < 1000 || incremental < 1000 {
		t.Fatalf("%d entries applied, %d data sets derived: the test exercises too little", applied, incremental)
	}
}

// sameDataset fails unless got and want have the same content, empty and
// nil slices alike, the same version and the same index lookups.
func sameDataset(t *testing.T, what string, got, want *social.Dataset) {
	t.Helper()
	norm := func(ds *social.Dataset) social.Dataset {
		c := *ds
		if len(c.Comments) == 0 {
			c.Comments = nil
		}
		for _, p := range []*[][2]int{&c.Friends, &c.Memberships} {
			if len(*p) == 0 {
				*p = nil
			}
		}
		return c
	}
	if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: the derived data set\n%+v\ndiffers from the built one\n%+v", what, g, w)
	}
	if got.Version() != want.Version() {
		t.Fatalf("%s: version %s, built %s", what, got.Version(), want.Version())
	}
}
