package blob

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestRef(t *testing.T) {
	// The FIPS 180-2 example digest of "abc".
	if r := Ref([]byte("abc")); r != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("Ref(abc) = %s", r)
	}
	r := Ref([]byte("abc"))
	if th := ThumbName(r); Original(th) != r || Original(r) != r || th == r {
		t.Fatalf("ThumbName/Original: %s %s", th, Original(th))
	}
	for _, bad := range []string{"", "abc", r[:63], r + "0", "BA" + r[2:], r + ".png", "../" + r[3:], r + ".thumb.thumb"} {
		if err := checkName(bad); !errors.Is(err, ErrName) {
			t.Errorf("checkName(%q) = %v, want ErrName", bad, err)
		}
	}
}

// contract checks a store that starts empty.
func contract(t *testing.T, s Store, backend string) {
	ctx := t.Context()
	a, b := []byte("first blob"), bytes.Repeat([]byte{7}, 1000)
	ra, rb := Ref(a), Ref(b)
	if _, err := s.Get(ctx, ra); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing blob: %v, want ErrNotFound", err)
	}
	if _, err := s.Stat(ctx, ra); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stat of a missing blob: %v, want ErrNotFound", err)
	}
	for _, p := range []struct {
		name string
		data []byte
	}{{ra, a}, {rb, b}, {ThumbName(ra), []byte("thumb")}, {ra, a}} {
		if err := s.Put(ctx, p.name, p.data); err != nil {
			t.Fatalf("Put %s: %v", p.name, err)
		}
	}
	if got, err := s.Get(ctx, rb); err != nil || !bytes.Equal(got, b) {
		t.Fatalf("Get = %d bytes, %v; want the 1000 put", len(got), err)
	}
	if n, err := s.Stat(ctx, ThumbName(ra)); err != nil || n != 5 {
		t.Fatalf("Stat(thumb) = %d, %v; want 5", n, err)
	}
	var names []string
	if err := s.Walk(ctx, func(name string) error { names = append(names, name); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	want := []string{ra, rb, ThumbName(ra)}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("Walk: %v, want %v", names, want)
	}
	info, err := s.Info(ctx)
	if err != nil || info != (Info{Backend: backend, Count: 3, Bytes: int64(len(a) + len(b) + 5)}) {
		t.Fatalf("Info = %+v, %v; want 3 blobs of %d bytes", info, err, len(a)+len(b)+5)
	}
	for range 2 { // a second Delete of the same blob is a no-op
		if err := s.Delete(ctx, ra); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Get(ctx, ra); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if info, _ := s.Info(ctx); info.Count != 2 || info.Bytes != int64(len(b)+5) {
		t.Fatalf("Info after Delete = %+v", info)
	}
	for _, err := range []error{
		s.Put(ctx, "x", a), s.Delete(ctx, "../x"),
	} {
		if !errors.Is(err, ErrName) {
			t.Errorf("bad name: %v, want ErrName", err)
		}
	}
	if _, err := s.Get(ctx, "/etc/passwd"); !errors.Is(err, ErrName) {
		t.Errorf("Get of a path: %v, want ErrName", err)
	}
	// Writers of the same bytes at once: one blob, counted once.
	c := []byte("written by eight at once")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := s.Put(ctx, Ref(c), c); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if info, _ := s.Info(ctx); info.Count != 3 || info.Bytes != int64(len(b)+5+len(c)) {
		t.Fatalf("Info after eight equal Puts = %+v", info)
	}
}

func TestDir(t *testing.T) {
	contract(t, NewDir(t.TempDir()), "dir")
}

func redisClient(t *testing.T, url string) redis.UniversalClient {
	t.Helper()
	o, err := cache.ParseRedisURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewUniversalClient(o)
	t.Cleanup(func() { rc.Close() })
	return rc
}

// cleanup removes the keys of prefix when the test ends.
func cleanup(t *testing.T, s *Redis) {
	t.Cleanup(func() {
		ctx := context.Background()
		_ = s.Walk(ctx, func(name string) error { return s.rc.Del(ctx, s.prefix+name).Err() })
		s.rc.Del(ctx, s.stats())
	})
}

func TestRedis(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, url string) {
		s := NewRedis(redisClient(t, url), redistest.Prefix(t), 0, 0)
		cleanup(t, s)
		contract(t, s, "redis")
	})
}

func TestRedisLimits(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := NewRedis(redisClient(t, url), redistest.Prefix(t), 100, 250)
		cleanup(t, s)
		big := bytes.Repeat([]byte{1}, 101)
		if err := s.Put(ctx, Ref(big), big); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("101 bytes under a cap of 100: %v, want ErrTooLarge", err)
		}
		var put [][]byte
		for i := range 3 {
			b := bytes.Repeat([]byte{byte(i)}, 100)
			err := s.Put(ctx, Ref(b), b)
			if i < 2 && err != nil {
				t.Fatalf("blob %d within the budget: %v", i, err)
			}
			if i == 2 && !errors.Is(err, ErrFull) {
				t.Fatalf("300 bytes under a budget of 250: %v, want ErrFull", err)
			}
			put = append(put, b)
		}
		if info, _ := s.Info(ctx); info.Count != 2 || info.Bytes != 200 {
			t.Fatalf("Info = %+v: the refused blob must not count", info)
		}
		if _, err := s.Get(ctx, Ref(put[2])); !errors.Is(err, ErrNotFound) {
			t.Fatalf("refused blob stored: %v", err)
		}
		// Deleting frees its bytes.
		if err := s.Delete(ctx, Ref(put[0])); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, Ref(put[2]), put[2]); err != nil {
			t.Fatalf("after freeing 100 bytes: %v", err)
		}
	})
}
