package replica

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
)

func client(t *testing.T, url string) redis.UniversalClient {
	t.Helper()
	o, err := cache.ParseRedisURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewUniversalClient(o)
	t.Cleanup(func() { rc.Close() })
	return rc
}

// newLog returns a log of its own on url, removed when the test ends.
func newLog(t *testing.T, url string) *Log {
	t.Helper()
	l := NewLog(client(t, url), redistest.Prefix(t))
	t.Cleanup(func() { l.Drop(context.Background()) })
	return l
}

// replica is an index on disk with its follower.
type replica struct {
	dir    string
	ix     *index.Index
	f      *Follower
	cancel context.CancelFunc
	stop   chan struct{}
}

// open opens the replica in dir; with run its follower runs until the
// test ends, otherwise it moves only by catchUp.
func open(t *testing.T, l *Log, dir string, run bool) *replica {
	t.Helper()
	ix, err := index.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	f, err := NewFollower(l, ix, Options{Block: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{dir: dir, ix: ix, f: f}
	if run {
		r.stop = make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { f.Run(ctx); close(r.stop) }()
		r.cancel = cancel
		t.Cleanup(r.halt)
	}
	return r
}

// halt stops the follower of a replica opened with run.
func (r *replica) halt() {
	if r.cancel != nil {
		r.cancel()
		<-r.stop
		r.cancel = nil
	}
}

func (r *replica) catchUp(t *testing.T) {
	t.Helper()
	if err := r.f.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func doc(id string, tags ...string) index.Doc {
	return index.Doc{ID: id, Tags: tags, Features: []float32{float32(len(id)), float32(len(tags))}}
}

func ids(t *testing.T, ix *index.Index) []string {
	t.Helper()
	var out []string
	if _, err := ix.Walk(func(d index.Doc) error { out = append(out, d.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// same fails unless the replicas hold the same docs.
func same(t *testing.T, rs ...*replica) {
	t.Helper()
	for _, r := range rs[1:] {
		if a, b := rs[0].ix.Version(), r.ix.Version(); a != b {
			t.Fatalf("versions differ: %s (%v) and %s (%v)", a, ids(t, rs[0].ix), b, ids(t, r.ix))
		}
	}
}

func write(t *testing.T, r *replica, e Entry) Pos {
	t.Helper()
	p, _, err := r.f.Write(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFollowersApplyInOrderAndResume(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, url string) {
		l := newLog(t, url)
		a, b := open(t, l, t.TempDir(), true), open(t, l, t.TempDir(), false)
		write(t, a, Entry{Add: []index.Doc{doc("x", "sky"), doc("y", "sea")}})
		// The writer has read its write: x is there before Write returns.
		if _, ok, _ := a.ix.Get("x"); !ok {
			t.Fatal("Write returned before its entry was applied")
		}
		write(t, a, Entry{Add: []index.Doc{doc("x", "cloud")}})
		write(t, a, Entry{Delete: []string{"y"}})
		b.catchUp(t)
		same(t, a, b)
		if d, _, _ := b.ix.Get("x"); !slices.Equal(d.Tags, []string{"cloud"}) || b.ix.Count() != 1 {
			t.Fatalf("replica b: x = %+v, %d docs; want x tagged cloud alone", d, b.ix.Count())
		}
		// b stops; entries arrive; b restarts from the position its index
		// recorded and applies each new entry once.
		dir := b.dir
		b.ix.Close()
		want := a.f.Applied()
		write(t, a, Entry{Add: []index.Doc{doc("z", "sun")}})
		write(t, a, Entry{Delete: []string{"x"}})
		b = open(t, l, dir, false)
		if got := b.f.Applied(); got != want {
			t.Fatalf("restarted at %+v, want %+v", got, want)
		}
		b.catchUp(t)
		same(t, a, b)
		if n := testutil.ToFloat64(b.f.m.applied); n != 2 {
			t.Fatalf("restarted replica applied %v entries, want the 2 new ones", n)
		}
		st, err := b.f.Status(t.Context())
		if err != nil || st.LagEntries != 0 || st.LagSeconds != 0 || st.Applied != st.Head || st.Head != a.f.Applied().ID {
			t.Fatalf("Status = %+v, %v; want no lag at the head", st, err)
		}
	})
}

func TestBatchIsAllOrNothing(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, url string) {
		l := newLog(t, url)
		a, b := open(t, l, t.TempDir(), true), open(t, l, t.TempDir(), false)
		write(t, a, Entry{Add: []index.Doc{doc("x", "sky")}})
		// The second doc has no tags nor title: the whole entry is refused,
		// on the writer (with its error) and on every replica.
		_, _, err := a.f.Write(t.Context(), Entry{Add: []index.Doc{doc("y", "sea"), {ID: "bad"}}})
		if !errors.Is(err, index.ErrInvalid) {
			t.Fatalf("invalid batch: %v, want ErrInvalid", err)
		}
		write(t, a, Entry{Add: []index.Doc{doc("z", "sun")}})
		b.catchUp(t)
		same(t, a, b)
		if got := ids(t, b.ix); !slices.Equal(got, []string{"x", "z"}) {
			t.Fatalf("replica holds %v, want x z (none of the refused batch)", got)
		}
		// A refused entry still moves the position: no replica reads it again.
		if a.f.Applied() != b.f.Applied() || string(b.ix.Mark()) != b.f.Applied().String() {
			t.Fatalf("positions %+v, %+v, mark %q", a.f.Applied(), b.f.Applied(), b.ix.Mark())
		}
	})
}

func TestConcurrentWritersOfOneIDConverge(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, url string) {
		l := newLog(t, url)
		a, b := open(t, l, t.TempDir(), true), open(t, l, t.TempDir(), true)
		ctx := t.Context()
		var writers sync.WaitGroup
		for w, r := range []*replica{a, b} {
			writers.Go(func() {
				for i := range 20 {
					if _, _, err := r.f.Write(ctx, Entry{Add: []index.Doc{doc("same", fmt.Sprintf("w%d", w), fmt.Sprintf("n%d", i))}}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		writers.Wait()
		head, err := l.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*replica{a, b} {
			if _, err := r.f.WaitFor(ctx, head); err != nil {
				t.Fatal(err)
			}
		}
		same(t, a, b)
		// The winner is the last entry in the log, everywhere.
		last, _, err := l.Last(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		rec := decode(last)
		d, _, _ := a.ix.Get("same")
		if !slices.Equal(d.Tags, rec.Entry.Add[0].Tags) || head.N != 40 {
			t.Fatalf("doc %v, last entry %v (of %d): the log's order must decide", d.Tags, rec.Entry.Add[0].Tags, head.N)
		}
	})
}

func TestSnapshotBootstrapsAndTrims(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, url string) {
		l := newLog(t, url)
		a := open(t, l, t.TempDir(), true)
		behind := open(t, l, t.TempDir(), false)
		for i := range 1200 / 100 {
			var docs []index.Doc
			for j := range 100 {
				docs = append(docs, doc(fmt.Sprintf("d%d", i*100+j), "t", fmt.Sprintf("g%d", j%7)))
			}
			write(t, a, Entry{Add: docs})
			if i == 2 {
				behind.catchUp(t) // stops after 300 docs
			}
		}
		write(t, a, Entry{Delete: []string{"d0", "d1"}})
		s, err := a.f.WriteSnapshot(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s.Items != 1198 || s.Chunks != 3 || s.Version != a.ix.Version() || s.Pos() != a.f.Applied() {
			t.Fatalf("snapshot %+v; want 1198 docs in 3 chunks at %+v", s, a.f.Applied())
		}
		// The log keeps the snapshot's entry and what follows.
		if n, _ := l.Len(t.Context()); n != 1 {
			t.Fatalf("log holds %d entries after the snapshot, want 1", n)
		}
		write(t, a, Entry{Add: []index.Doc{doc("after", "new")}})
		// A new replica: the snapshot, then the log's tail.
		c := open(t, l, t.TempDir(), false)
		c.catchUp(t)
		same(t, a, c)
		// A replica whose position is below what was trimmed loads the
		// snapshot again, dropping the docs the snapshot lacks.
		behind.catchUp(t)
		same(t, a, behind)
		if _, ok, _ := behind.ix.Get("d0"); ok {
			t.Fatal("a doc deleted in the trimmed part of the log survived the re-bootstrap")
		}
		// A second snapshot replaces the first and drops its chunks.
		s2, err := c.f.WriteSnapshot(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := l.ChunkExists(t.Context(), s.ID, 0); n || s2.ID == s.ID {
			t.Fatalf("the old snapshot's chunks remain (%v) or no new snapshot (%s)", n, s2.ID)
		}
	})
}

func TestEmptyEntryAndBadPositionsAreRefused(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, url string) {
		l := newLog(t, url)
		if _, err := l.Append(t.Context(), Entry{}); err == nil {
			t.Fatal("an empty entry was appended")
		}
		ix, err := index.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		if _, err := ix.DeleteAt(nil, []byte("garbage")); err != nil {
			t.Fatal(err)
		}
		if _, err := NewFollower(l, ix, Options{}); err == nil {
			t.Fatal("a follower started from a corrupt position")
		}
	})
}

// Entries applied together, as one index batch, report what each
// replaced as if applied one by one: a writer learns that its doc replaced
// another writer's, in log order.
func TestRunOfEntriesReportsEachReplacement(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, url string) {
		l := newLog(t, url)
		var pos []Pos
		for i, h := range []string{"1", "2", "3"} {
			d := doc("same", "t")
			d.ImageSHA256 = index.ContentHash([]byte(h))
			e := Entry{Add: []index.Doc{d}}
			if i == 1 {
				e.Add = append(e.Add, doc("other", "u"))
			}
			p, err := l.Append(t.Context(), e)
			if err != nil {
				t.Fatal(err)
			}
			pos = append(pos, p)
		}
		r := open(t, l, t.TempDir(), false)
		r.catchUp(t)
		for i, want := range []string{"", "1", "2"} {
			gone, err := r.f.WaitFor(t.Context(), pos[i])
			var got string
			if len(gone) > 0 {
				got = gone[0].ImageSHA256
			}
			if err != nil || len(gone) > 1 || (want == "") != (got == "") || want != "" && got != index.ContentHash([]byte(want)) {
				t.Errorf("entry %d replaced %+v (%v), want the doc of image %q", i+1, gone, err, want)
			}
		}
		if n := testutil.ToFloat64(r.f.m.applied); n != 3 || r.ix.Count() != 2 {
			t.Fatalf("applied %v entries, %d docs; want 3 and 2", n, r.ix.Count())
		}
	})
}
