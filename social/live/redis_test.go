package live

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// openRedis opens a store on the log of prefix at url, closed when the
// test ends; the first one opened drops the log then.
func openRedis(t *testing.T, url, prefix string, o Options) *Store {
	t.Helper()
	opts, err := cache.ParseRedisURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewUniversalClient(opts)
	o.Block = 50 * time.Millisecond
	s, err := OpenRedis(t.Context(), rc, prefix, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Drop(context.Background())
		s.Close()
		rc.Close()
	})
	return s
}

func TestAWriteReachesEveryProcess(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, url string) {
		prefix := redistest.Prefix(t)
		a, b := openRedis(t, url, prefix, Options{}), openRedis(t, url, prefix, Options{})
		write(t, a, Op{Op: PutUser, User: "u1", Profile: &Profile{Tags: []string{"x"}}}, Op{Op: PutUser, User: "u2", Profile: &Profile{}})
		r := write(t, b, Op{Op: PutFriend, User: "u1", Friend: "u2"}, Op{Op: PutMember, User: "u2", Group: "g"})
		// b's write was applied on b when it returned; a follows.
		if _, err := a.rl.waitFor(t.Context(), a, b.rl.applied); err != nil {
			t.Fatal(err)
		}
		sameData(t, a.Dataset(), b.Dataset())
		if r.Version != a.Dataset().Version() {
			t.Fatalf("the write's version %s is not the data's", r.Version)
		}
		// A refused entry is refused everywhere, before it is appended.
		if _, err := a.Write(t.Context(), []Op{{Op: DeleteUser, User: "u2"}, {Op: PutFriend, User: "u1", Friend: "u2"}}); err == nil {
			t.Fatal("a friendship with a deleted user was taken")
		}
		write(t, a, Op{Op: DeleteUser, User: "u1"})
		if _, err := b.rl.waitFor(t.Context(), b, a.rl.applied); err != nil {
			t.Fatal(err)
		}
		if f, g := relationsOf(t, b, "u2"); len(f) != 0 || !slices.Equal(g, []string{"g"}) {
			t.Fatalf("u2 on b: friends %v, groups %v", f, g)
		}
		sameData(t, a.Dataset(), b.Dataset())
	})
}

func TestSnapshotBootstrapsANewProcess(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, url string) {
		prefix := redistest.Prefix(t)
		a := openRedis(t, url, prefix, Options{SnapshotEvery: 1 << 40})
		dir := writeDir(t, threeUsers, "a,b\nb,c\n", "a,g1\nc,g2\n")
		if _, err := a.Import(t.Context(), load(t, dir)); err != nil {
			t.Fatal(err)
		}
		write(t, a, Op{Op: DeleteFriend, User: "a", Friend: "b"})
		snap, err := a.WriteSnapshot(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := a.rl.log.Len(t.Context()); n != 1 || snap.Version != a.Dataset().Version() {
			t.Fatalf("%d entries left after the snapshot (want 1), snapshot %+v", n, snap)
		}
		write(t, a, Op{Op: PutFriend, User: "a", Friend: "c"})
		b := openRedis(t, url, prefix, Options{})
		sameData(t, a.Dataset(), b.Dataset())
		// The same directory imported by another process: nothing written.
		if n, err := b.Import(t.Context(), load(t, dir)); n != 0 || err != nil {
			t.Fatalf("the same directory again wrote %d operations (%v)", n, err)
		}
	})
}
