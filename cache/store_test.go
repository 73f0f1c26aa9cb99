package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/internal/redistest"
)

// stores are the Store implementations the Store contract runs on.
var stores = []impl[Store]{
	{"dir", func(t testing.TB) Store {
		d, err := NewDirStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}},
	{"redis", func(t testing.TB) Store { return NewRedisStore(openRedis(t, redistest.URL(t))) }},
	{"cluster", func(t testing.TB) Store { return NewRedisStore(openRedis(t, redistest.ClusterURL(t))) }},
}

// partNames are the parts of the test models; each part of version v
// holds "v/name".
var partNames = []string{"weights", "users", "meta"}

func parts(version string) map[string][]byte {
	p := map[string][]byte{}
	for _, n := range partNames {
		p[n] = []byte(version + "/" + n)
	}
	return p
}

func TestStoreContract(t *testing.T) {
	runContract(t, stores, map[string]func(*testing.T, Store){
		"Lifecycle":               testStoreLifecycle,
		"ReadersSeeWholeVersions": testStoreReaders,
		"BadNames":                testStoreBadNames,
		"Parts":                   testStoreParts,
	})
}

func write(t *testing.T, s Store, model, version string, p map[string][]byte) {
	t.Helper()
	if err := s.Write(context.Background(), model, version, p); err != nil {
		t.Fatalf("write %s %s: %v", model, version, err)
	}
}

func publish(t *testing.T, s Store, model, version string) {
	t.Helper()
	if err := s.Publish(context.Background(), model, version); err != nil {
		t.Fatalf("publish %s %s: %v", model, version, err)
	}
}

func current(t *testing.T, s Store, model string) string {
	t.Helper()
	v, err := s.Current(context.Background(), model)
	if errors.Is(err, ErrMiss) {
		return ""
	}
	if err != nil {
		t.Fatalf("current %s: %v", model, err)
	}
	return v
}

func versions(t *testing.T, s Store, model string) []string {
	t.Helper()
	vs, err := s.Versions(context.Background(), model)
	if err != nil {
		t.Fatalf("versions of %s: %v", model, err)
	}
	return vs
}

func read(t *testing.T, s Store, model, version, part string) string {
	t.Helper()
	b, err := s.Read(context.Background(), model, version, part)
	if errors.Is(err, ErrMiss) {
		return "<miss>"
	}
	if err != nil {
		t.Fatalf("read %s %s %s: %v", model, version, part, err)
	}
	return string(b)
}

func testStoreLifecycle(t *testing.T, s Store) {
	ctx := context.Background()
	const m = "friends/alignf"
	if cur, vs := current(t, s, m), versions(t, s, m); cur != "" || len(vs) != 0 {
		t.Fatalf("a new model: current %q, versions %q", cur, vs)
	}
	write(t, s, m, "v1", parts("v1"))
	if cur := current(t, s, m); cur != "" {
		t.Fatalf("current %q before Publish", cur)
	}
	if got := read(t, s, m, "v1", "users"); got != "v1/users" {
		t.Errorf("read v1 users: %q", got)
	}
	for _, miss := range [][2]string{{"v1", "absent"}, {"v0", "users"}} {
		if got := read(t, s, m, miss[0], miss[1]); got != "<miss>" {
			t.Errorf("read %s %s: %q, want a miss", miss[0], miss[1], got)
		}
	}
	if err := s.Publish(ctx, m, "v0"); err == nil {
		t.Error("publish of an unwritten version: no error")
	}
	if cur := current(t, s, m); cur != "" {
		t.Fatalf("current %q after a failed Publish", cur)
	}
	publish(t, s, m, "v1")
	if cur := current(t, s, m); cur != "v1" {
		t.Fatalf("current %q, want v1", cur)
	}

	// Writing a version again is harmless: it stays as first written.
	write(t, s, m, "v1", parts("v1"))
	write(t, s, m, "v1", map[string][]byte{"weights": []byte("other")})
	if got := read(t, s, m, "v1", "weights"); got != "v1/weights" {
		t.Errorf("v1 weights after rewrites: %q", got)
	}
	if vs := versions(t, s, m); !slices.Equal(vs, []string{"v1"}) {
		t.Errorf("versions %q after rewrites, want [v1]", vs)
	}

	write(t, s, m, "v2", parts("v2"))
	if err := s.Remove(ctx, m, "v1"); err == nil {
		t.Error("remove of the current version: no error")
	}
	publish(t, s, m, "v2")
	if vs := versions(t, s, m); !slices.Equal(vs, []string{"v1", "v2"}) {
		t.Errorf("versions %q, want [v1 v2]", vs)
	}
	if err := s.Remove(ctx, m, "v1"); err != nil {
		t.Fatalf("remove v1: %v", err)
	}
	if err := s.Remove(ctx, m, "v9"); err != nil {
		t.Errorf("remove of an absent version: %v", err)
	}
	if got, vs := read(t, s, m, "v1", "users"), versions(t, s, m); got != "<miss>" || !slices.Equal(vs, []string{"v2"}) {
		t.Errorf("after removing v1: read %q, versions %q", got, vs)
	}
	if err := s.Remove(ctx, m, "v2"); err == nil {
		t.Error("remove of the current version: no error")
	}
	// A removed version can be written and published again.
	write(t, s, m, "v1", parts("v1"))
	publish(t, s, m, "v1")
	if cur, got := current(t, s, m), read(t, s, m, "v1", "meta"); cur != "v1" || got != "v1/meta" {
		t.Errorf("v1 again: current %q, meta %q", cur, got)
	}
	// Models are apart.
	if cur := current(t, s, "groups/alignf"); cur != "" {
		t.Errorf("another model: current %q", cur)
	}
}

// testStoreReaders: readers that read Current and then every part of it
// while v2 is written and published see all of v1 or all of v2.
func testStoreReaders(t *testing.T, s Store) {
	ctx := context.Background()
	const m = "model"
	write(t, s, m, "v1", parts("v1"))
	publish(t, s, m, "v1")
	var (
		stop   atomic.Bool
		seenV2 atomic.Int32
		wg     sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				cur, err := s.Current(ctx, m)
				if err != nil {
					t.Errorf("current: %v", err)
					return
				}
				for _, n := range partNames {
					b, err := s.Read(ctx, m, cur, n)
					if err != nil || string(b) != cur+"/"+n {
						t.Errorf("version %s, part %s: %q, %v", cur, n, b, err)
						return
					}
				}
				if cur == "v2" {
					seenV2.Add(1)
				}
			}
		})
	}
	write(t, s, m, "v2", parts("v2"))
	publish(t, s, m, "v2")
	eventually(t, "the readers see v2", func() bool { return seenV2.Load() >= 8 || t.Failed() })
	stop.Store(true)
	wg.Wait()
}

func testStoreBadNames(t *testing.T, s Store) {
	ctx := context.Background()
	for _, v := range []string{"", ".", "..", "a/b", `a\b`, "a\x00b", "CURRENT", ".tmp-v1"} {
		if err := s.Write(ctx, "m", v, parts("v")); err == nil {
			t.Errorf("write of version %q: no error", v)
		}
		if err := s.Publish(ctx, "m", v); err == nil {
			t.Errorf("publish of version %q: no error", v)
		}
		if _, err := s.Read(ctx, "m", v, "weights"); !errors.Is(err, ErrMiss) {
			t.Errorf("read of version %q: %v, want ErrMiss", v, err)
		}
	}
	for _, p := range []string{"", "..", "a/b", "CURRENT"} {
		if err := s.Write(ctx, "m", "v1", map[string][]byte{"ok": nil, p: []byte("x")}); err == nil {
			t.Errorf("write of part %q: no error", p)
		}
	}
	// Nothing of the rejected writes was kept.
	if vs := versions(t, s, "m"); len(vs) != 0 {
		t.Errorf("versions %q after rejected writes", vs)
	}
}

// testStoreParts: parts of any bytes and size, and a version of no part.
func testStoreParts(t *testing.T, s Store) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	big := make([]byte, 4<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	write(t, s, "m", "v1", map[string][]byte{"all": all, "big": big, "empty": {}})
	for name, want := range map[string][]byte{"all": all, "big": big, "empty": {}} {
		b, err := s.Read(context.Background(), "m", "v1", name)
		if err != nil || !slices.Equal(b, want) {
			t.Errorf("part %s: %d bytes, %v; want %d", name, len(b), err, len(want))
		}
	}
	write(t, s, "m", "none", nil)
	publish(t, s, "m", "none")
	if cur := current(t, s, "m"); cur != "none" {
		t.Errorf("current %q, want none", cur)
	}
}

// TestRedisStoreVersionsByTime: versions are listed in the order written,
// not by name.
func TestRedisStoreVersionsByTime(t *testing.T) {
	s := NewRedisStore(openRedis(t, redistest.URL(t)))
	var want []string
	for i := range 5 {
		v := fmt.Sprint("v", 9-i)
		write(t, s, "m", v, nil)
		want = append(want, v)
	}
	if vs := versions(t, s, "m"); !slices.Equal(vs, want) {
		t.Errorf("versions %q, want %q", vs, want)
	}
}

// TestRedisStoreManyParts: a version of more parts than a Lua stack holds
// (a DirStore writes them, slowly: a file each).
func TestRedisStoreManyParts(t *testing.T) {
	s := NewRedisStore(openRedis(t, redistest.URL(t)))
	many := map[string][]byte{}
	for i := range 10000 {
		many[fmt.Sprint("p", i)] = []byte(fmt.Sprint(i))
	}
	write(t, s, "m", "many", many)
	if got := read(t, s, "m", "many", "p9999"); got != "9999" {
		t.Errorf("part 9999 of 10000: %q", got)
	}
}

// TestRedisStoreKeys pins the keys of the store, one hash tag per model,
// and rejects model names that would break it.
func TestRedisStoreKeys(t *testing.T) {
	r := openRedis(t, redistest.ClusterURL(t))
	s := NewRedisStore(r)
	ctx := context.Background()
	write(t, s, "m", "v1", parts("v1"))
	publish(t, s, "m", "v1")
	for key, typ := range map[string]string{
		"kr:model:{m}:v:v1":     "hash",
		"kr:model:{m}:versions": "zset",
		"kr:model:{m}:current":  "string",
	} {
		if got, err := r.Client().Type(ctx, r.prefix+key).Result(); err != nil || got != typ {
			t.Errorf("key %s: type %q, %v; want %s", key, got, err, typ)
		}
		if ttl, err := r.Client().PTTL(ctx, r.prefix+key).Result(); err != nil || ttl != -1*time.Nanosecond {
			t.Errorf("key %s: TTL %v, %v; want none", key, ttl, err)
		}
	}
	for _, m := range []string{"", "a{b", "a}b"} {
		if err := s.Write(ctx, m, "v1", nil); err == nil {
			t.Errorf("write of model %q: no error", m)
		}
		if _, err := s.Current(ctx, m); err == nil || errors.Is(err, ErrMiss) {
			t.Errorf("current of model %q: %v, want an error", m, err)
		}
	}
}
