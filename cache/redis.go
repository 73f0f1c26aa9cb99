package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the shared backend: a Redis server or a Redis Cluster, through
// go-redis' UniversalClient. Every command names one key, so the keys of
// different values may live on different cluster nodes. Key layout (after
// the prefix, see README.md):
//
//	<key>           a value (Key.String: kr:<FormatVersion>:...)
//	lock:<name>     a lock, holding its holder's random token
//	count:<set>     a counter set (a sorted set)
type Redis struct {
	c      redis.UniversalClient
	prefix string
	// keep is how many members a counter set keeps; it is trimmed back to
	// keep once it holds keep+keep/10, so Top never reads an unbounded set.
	keep int64
}

// TopKeep is how many members a counter set keeps: the members with the
// lowest counts beyond it are dropped (and start again from one when they
// come back), so the counters hold the heavy hitters in bounded space.
const TopKeep = 10000

// OpenRedis connects to the Redis named by url (see ParseRedisURL) and
// checks that it answers. prefix is put before every key: "" in
// production, a unique namespace for tests sharing a server.
func OpenRedis(ctx context.Context, rawURL, prefix string) (*Redis, error) {
	o, err := ParseRedisURL(rawURL)
	if err != nil {
		return nil, err
	}
	c := newClient(o)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("cache: redis %s does not answer: %w", redactURL(rawURL), err)
	}
	return &Redis{c: c, prefix: prefix, keep: TopKeep}, nil
}

// newClient builds the client of o as redis.NewUniversalClient does, but
// quick to fail when Redis is gone: go-redis' defaults dial a refused
// connection 5 times 100 ms apart and wait 8 ms or more before a retry, so
// that every command, and every request, would wait half a second before
// computing without Redis. A retry stays (MaxRetries), for a pooled
// connection that a restarted Redis has closed.
func newClient(o *redis.UniversalOptions) redis.UniversalClient {
	const dials, dialBackoff = 1, time.Microsecond // 0 means the defaults
	u := *o
	u.MinRetryBackoff, u.MaxRetryBackoff = time.Millisecond, 4*time.Millisecond
	if u.IsClusterMode || len(u.Addrs) > 1 {
		co := u.Cluster()
		co.DialerRetries, co.DialerRetryTimeout = dials, dialBackoff
		return redis.NewClusterClient(co)
	}
	so := u.Simple()
	so.DialerRetries, so.DialerRetryTimeout = dials, dialBackoff
	return redis.NewClient(so)
}

// redactURL hides a password in a --redis address shown in an error.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return raw
}

// Client returns the connection, for other users of the same Redis (the
// job queue). Close closes it.
func (r *Redis) Client() redis.UniversalClient { return r.c }

// Get implements Cache.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := r.c.Get(ctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrMiss
	}
	return b, err
}

// Set implements Cache (SET with PX; ttl <= 0: no expiry).
func (r *Redis) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	// go-redis sends a negative expiration as KEEPTTL: no expiry is 0.
	return r.c.Set(ctx, r.prefix+key, val, max(ttl, 0)).Err()
}

// Delete implements Cache.
func (r *Redis) Delete(ctx context.Context, key string) error {
	return r.c.Del(ctx, r.prefix+key).Err()
}

// unlockScript deletes a lock only while it holds the caller's token: a
// holder whose lock expired and was taken by another must not release the
// new holder's lock.
var unlockScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// unlockTimeout bounds the release of a lock; a release that fails leaves
// the lock to its TTL.
const unlockTimeout = time.Second

// Lock implements Cache: SET NX PX with a random token.
func (r *Redis) Lock(ctx context.Context, name string, ttl time.Duration) (func(), bool, error) {
	if ttl <= 0 {
		return nil, false, fmt.Errorf("cache: lock %q: ttl %v is not positive", name, ttl)
	}
	var b [16]byte
	rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	key := r.prefix + "lock:" + name
	ok, err := r.c.SetNX(ctx, key, token, ttl).Result()
	if err != nil || !ok {
		return nil, false, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
		defer cancel()
		unlockScript.Run(ctx, r.c, []string{key}, token)
	}, true, nil
}

// Incr implements Cache: ZINCRBY, and a trim back to keep members when the
// set has grown a tenth beyond it.
func (r *Redis) Incr(ctx context.Context, set, member string) error {
	key := r.prefix + "count:" + set
	p := r.c.Pipeline()
	p.ZIncrBy(ctx, key, 1, member)
	card := p.ZCard(ctx, key)
	if _, err := p.Exec(ctx); err != nil {
		return err
	}
	if card.Val() > r.keep+r.keep/10 {
		// Ranks ascend by count: drop all but the keep highest.
		return r.c.ZRemRangeByRank(ctx, key, 0, -r.keep-1).Err()
	}
	return nil
}

// topScript returns the n highest members with their scores, the ties at
// the n-th score being the first by name (ZREVRANGE orders ties by name
// descending, so it cannot be used alone): the members above the n-th
// score, then those at it in name order, each list at most n long.
var topScript = redis.NewScript(`
local n = tonumber(ARGV[1])
local top = redis.call("ZREVRANGE", KEYS[1], 0, n - 1, "WITHSCORES")
if #top < 2 * n then
	return top
end
local last = top[#top]
local out = redis.call("ZREVRANGEBYSCORE", KEYS[1], "+inf", "(" .. last, "WITHSCORES")
local ties = redis.call("ZRANGEBYSCORE", KEYS[1], last, last, "WITHSCORES", "LIMIT", 0, n - #out / 2)
for _, x in ipairs(ties) do
	out[#out + 1] = x
end
return out`)

// Top implements Cache.
func (r *Redis) Top(ctx context.Context, set string, n int) ([]Count, error) {
	if n <= 0 {
		return []Count{}, nil
	}
	res, err := topScript.Run(ctx, r.c, []string{r.prefix + "count:" + set}, n).StringSlice()
	if err != nil {
		return nil, err
	}
	out := make([]Count, 0, len(res)/2)
	for i := 0; i+1 < len(res); i += 2 {
		c, err := strconv.ParseFloat(res[i+1], 64)
		if err != nil {
			return nil, fmt.Errorf("cache: count of %q: %v", res[i], err)
		}
		out = append(out, Count{res[i], int64(c)})
	}
	SortCounts(out)
	return out, nil
}

// Ping implements Cache.
func (r *Redis) Ping(ctx context.Context) error { return r.c.Ping(ctx).Err() }

// Backend implements Cache.
func (r *Redis) Backend() string { return "redis" }

// Close implements Cache; it closes the client shared through Client.
func (r *Redis) Close() error { return r.c.Close() }
