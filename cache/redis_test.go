package cache

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/internal/redistest"
)

// TestOpenRedisUnreachable: the error names the address, without its
// password.
func TestOpenRedisUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, u := range []string{"redis://:secret@127.0.0.1:1/0", "redis+cluster://:secret@127.0.0.1:1,127.0.0.1:2"} {
		r, err := OpenRedis(ctx, u, "")
		if err == nil {
			r.Close()
			t.Fatalf("%s: no error", u)
		}
		if msg := err.Error(); !strings.Contains(msg, "127.0.0.1:1") || strings.Contains(msg, "secret") {
			t.Errorf("%s: error %q should name the address and hide the password", u, msg)
		}
	}
	if _, err := OpenRedis(ctx, "http://127.0.0.1:6379", ""); err == nil || !strings.Contains(err.Error(), "redis://host:port/db") {
		t.Errorf("a bad scheme: %v", err)
	}
}

// TestRedisKeys pins where values, locks and counters live, and their
// TTLs (PTTL: -1 for none, -2 for no key).
func TestRedisKeys(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, u string) {
		r := openRedis(t, u)
		c, ctx := r.Client(), context.Background()
		k := testKey.String()
		mustSet(t, r, k, []byte("v"), time.Hour)
		mustSet(t, r, "forever", []byte("v"), 0)
		// A negative TTL is no TTL too (go-redis would send KEEPTTL).
		mustSet(t, r, "was long", []byte("v"), time.Hour)
		mustSet(t, r, "was long", []byte("v"), -1)
		mustLock(t, r, k, time.Minute)
		if err := r.Incr(ctx, "queries", "cat"); err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]struct {
			typ      string
			min, max time.Duration
		}{
			k:                   {"string", time.Hour - time.Minute, time.Hour},
			"forever":           {"string", -1, -1},
			"was long":          {"string", -1, -1},
			"lock:" + k:         {"string", time.Second, time.Minute},
			"count:queries":     {"zset", -1, -1},
			"lock:kr:1:nothing": {"none", -2, -2},
		} {
			typ, err := c.Type(ctx, r.prefix+key).Result()
			if err != nil || typ != want.typ {
				t.Errorf("%s: type %q, %v; want %s", key, typ, err, want.typ)
			}
			ttl, err := c.PTTL(ctx, r.prefix+key).Result()
			if err != nil || ttl < want.min || ttl > want.max {
				t.Errorf("%s: TTL %v, %v; want %v..%v", key, ttl, err, want.min, want.max)
			}
		}
		if _, _, err := r.Lock(ctx, "l", 0); err == nil {
			t.Error("a lock without TTL: no error")
		}
	})
}
