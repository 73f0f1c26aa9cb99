package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kernelrank/kernelrank/social"
)

// writeDir writes a data set in the kernelrank format.
func writeDir(t *testing.T, users, friends, memberships string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"users.jsonl": users, "friends.csv": friends, "memberships.csv": memberships} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const threeUsers = `{"id":"a","tags":["jazz"],"photos":[{"id":"p1","visual":[1,2,3]}]}
{"id":"b","places":["paris"]}
{"id":"c"}
`

func load(t *testing.T, dir string) *social.Dataset {
	t.Helper()
	ds, _, err := social.LoadDir(dir, social.ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func write(t *testing.T, s *Store, ops ...Op) Result {
	t.Helper()
	r, err := s.Write(t.Context(), ops)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// friendsOf returns the stored friends and groups of id, failing when
// there is no such user.
func relationsOf(t *testing.T, s *Store, id string) (friends, groups []string) {
	t.Helper()
	_, f, g, ok := s.User(id)
	if !ok {
		t.Fatalf("no user %q", id)
	}
	return f, g
}

// sameData fails unless the data sets have one version and the store's
// dataset has the users and friendships given.
func sameData(t *testing.T, a, b *social.Dataset) {
	t.Helper()
	if a.Version() != b.Version() {
		t.Fatalf("versions differ: %d users %v / %d users %v", a.N(), a.Friends, b.N(), b.Friends)
	}
}

func TestImportIsTheDirectoryAndIdempotent(t *testing.T) {
	dir := writeDir(t, threeUsers, "a,b\nb,c\n", "a,g1\nc,g2\n")
	want := load(t, dir)
	s, err := OpenDir(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := s.Import(t.Context(), want)
	if err != nil {
		t.Fatal(err)
	}
	// 1 source + 2 groups + 3 users + 2 friendships + 2 memberships
	if n != 10 {
		t.Fatalf("import wrote %d operations, want 10", n)
	}
	sameData(t, s.Dataset(), want)
	if n, err := s.Import(t.Context(), load(t, dir)); n != 0 || err != nil {
		t.Fatalf("the same directory again wrote %d operations (%v)", n, err)
	}
	// Another directory: only the difference is written.
	dir2 := writeDir(t, threeUsers+`{"id":"d"}`+"\n", "a,b\na,d\n", "a,g1\n")
	want2 := load(t, dir2)
	n, err = s.Import(t.Context(), want2)
	if err != nil {
		t.Fatal(err)
	}
	// + user d, + a-d, - b-c, - c in g2, - group g2, new source
	if n != 6 {
		t.Fatalf("the second import wrote %d operations, want 6", n)
	}
	sameData(t, s.Dataset(), want2)
}

func TestWritesSurviveARestartWithoutRedis(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenDir(dir, Options{SnapshotEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	p := &Profile{Tags: []string{"x"}}
	write(t, s, Op{Op: PutUser, User: "a", Profile: p}, Op{Op: PutUser, User: "b", Profile: &Profile{}})
	write(t, s, Op{Op: PutUser, User: "c", Profile: &Profile{}}, Op{Op: PutFriend, User: "a", Friend: "b"})
	write(t, s, Op{Op: PutFriend, User: "c", Friend: "b"}, Op{Op: PutMember, User: "a", Group: "g"})
	// The third entry compacted the log into the snapshot; these stay in the log.
	write(t, s, Op{Op: DeleteFriend, User: "b", Friend: "a"})
	r := write(t, s, Op{Op: PutMember, User: "c", Group: "g"})
	if !slices.Equal(r.Changed, []string{"c"}) || r.Version != s.Dataset().Version() {
		t.Fatalf("result %+v", r)
	}
	before := s.Dataset()
	s.Close()
	// A write cut short by a crash: half a line at the end of the log.
	f, err := os.OpenFile(filepath.Join(dir, logFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"n":99,"ops":[{"op":"delete_us`)
	f.Close()
	s, err = OpenDir(dir, Options{SnapshotEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sameData(t, s.Dataset(), before)
	if f, g := relationsOf(t, s, "b"); !slices.Equal(f, []string{"c"}) || len(g) != 0 {
		t.Fatalf("b: friends %v, groups %v", f, g)
	}
	// The torn line is gone: the next write follows the last whole one.
	write(t, s, Op{Op: DeleteUser, User: "c"})
	s.Close()
	s, err = OpenDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if f, _ := relationsOf(t, s, "b"); len(f) != 0 {
		t.Fatalf("b keeps friends %v after c was deleted", f)
	}
	if _, _, g, _ := s.User("a"); !slices.Equal(g, []string{"g"}) {
		t.Fatalf("a's groups %v", g)
	}
	if ds := s.Dataset(); ds.N() != 2 || len(ds.Memberships) != 1 {
		t.Fatalf("%d users, memberships %v", ds.N(), ds.Memberships)
	}
}

// A crash between writing the snapshot and emptying the log leaves
// entries the snapshot holds: they are not applied twice.
func TestEntriesInTheSnapshotAreSkipped(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, s, Op{Op: PutUser, User: "a", Profile: &Profile{}})
	write(t, s, Op{Op: DeleteUser, User: "a"})
	write(t, s, Op{Op: PutUser, User: "b", Profile: &Profile{}})
	log, _ := os.ReadFile(filepath.Join(dir, logFile))
	s.mu.Lock()
	err = s.file.compact(s.st)
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.WriteFile(filepath.Join(dir, logFile), log, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = OpenDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ds := s.Dataset(); ds.N() != 1 || ds.Users[0].ID != "b" {
		t.Fatalf("users %v", ds.Users)
	}
}

func TestARefusedEntryChangesNothing(t *testing.T) {
	s, err := OpenDir(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write(t, s, Op{Op: PutUser, User: "a", Profile: &Profile{Photos: []social.Photo{{Visual: []float64{1, 2}}}}},
		Op{Op: PutUser, User: "b", Profile: &Profile{}}, Op{Op: PutFriend, User: "a", Friend: "b"})
	before := s.Dataset().Version()
	for _, c := range []struct {
		ops  []Op
		kind error
		msg  string
	}{
		{[]Op{{Op: PutUser, User: "c", Profile: &Profile{}}, {Op: PutFriend, User: "c", Friend: "zz"}}, ErrNotFound, `ops[1] (put_friend): not found: no user "zz"`},
		{[]Op{{Op: DeleteUser, User: "b"}, {Op: DeleteFriend, User: "a", Friend: "c"}}, ErrNotFound, `ops[1] (delete_friend): not found: no user "c"`},
		{[]Op{{Op: DeleteUser, User: "b"}, {Op: DeleteMember, User: "a", Group: "g"}}, ErrNotFound, `not in group "g"`},
		{[]Op{{Op: PutUser, User: "c", Profile: &Profile{Photos: []social.Photo{{Visual: []float64{1, 2, 3}}}}}}, ErrInvalid, "photos have 3 visual values, the stored photos 2"},
	} {
		_, err := s.Write(t.Context(), c.ops)
		var oe *OpError
		if !errors.As(err, &oe) || !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: error %v, want %v with %q", c.ops, err, c.kind, c.msg)
		}
		if v := s.Dataset().Version(); v != before {
			t.Fatalf("%v changed the data", c.ops)
		}
	}
	// The only photo with a visual vector replaced: any dimension again.
	write(t, s, Op{Op: PutUser, User: "a", Profile: &Profile{Photos: []social.Photo{{Visual: []float64{1, 2, 3}}}}})
	if s.st.dim != 3 || s.st.visual != 1 {
		t.Fatalf("dim %d, visual photos %d", s.st.dim, s.st.visual)
	}
}

func TestOnChangeGetsEachDatasetInOrder(t *testing.T) {
	s, err := OpenDir(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got [][]string
	s.SetOnChange(func(_ context.Context, ds *social.Dataset, changed []string) error {
		got = append(got, changed)
		if ds != s.cur.Load() {
			t.Error("OnChange got another data set than the store serves")
		}
		return nil
	})
	write(t, s, Op{Op: PutUser, User: "a", Profile: &Profile{}}, Op{Op: PutUser, User: "b", Profile: &Profile{}}, Op{Op: PutUser, User: "c", Profile: &Profile{}})
	write(t, s, Op{Op: PutFriend, User: "a", Friend: "b"}, Op{Op: PutFriend, User: "c", Friend: "b"})
	write(t, s, Op{Op: PutFriend, User: "a", Friend: "b"}) // already friends: nothing changes
	write(t, s, Op{Op: DeleteUser, User: "b"})
	want := [][]string{{"a", "b", "c"}, {"a", "b", "c"}, {"a", "b", "c"}}
	if len(got) != 3 || !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) || !slices.Equal(got[2], want[2]) {
		t.Fatalf("changed %v, want %v", got, want)
	}
}

// Concurrent writes are committed together: each is applied or refused
// alone, and the log holds exactly those applied, in order.
func TestConcurrentWritesWithoutRedis(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, s, Op{Op: PutUser, User: "hub", Profile: &Profile{}})
	var wg sync.WaitGroup
	refused := make([]bool, 40)
	for i := range 40 {
		wg.Go(func() {
			id := fmt.Sprintf("u%d", i)
			ops := []Op{{Op: PutUser, User: id, Profile: &Profile{}}, {Op: PutFriend, User: id, Friend: "hub"}}
			if i%4 == 3 { // refused: its second op names no user
				ops[1].Friend = "ghost"
			}
			r, err := s.Write(context.Background(), ops)
			refused[i] = err != nil
			if err == nil && (!slices.Contains(r.Changed, id) || r.Version == "") {
				t.Errorf("%s: result %+v", id, r)
			}
		})
	}
	wg.Wait()
	for i, r := range refused {
		if r != (i%4 == 3) {
			t.Fatalf("write %d refused: %v", i, r)
		}
	}
	before := s.Dataset()
	if before.N() != 31 || len(before.Friends) != 30 {
		t.Fatalf("%d users, %d friendships; want 31 and 30", before.N(), len(before.Friends))
	}
	s.Close()
	s, err = OpenDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sameData(t, s.Dataset(), before)
}
