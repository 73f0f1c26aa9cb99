package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStore is a Store in Redis, shared by every server of a deployment.
// The keys of one model carry the hash tag {model}, so on a Redis Cluster
// they live in one slot and one script may touch them all (after the
// prefix):
//
//	kr:model:{<model>}:v:<version>   a hash: part name -> bytes, no TTL
//	kr:model:{<model>}:versions      a sorted set: version -> write time (µs)
//	kr:model:{<model>}:current       the published version
//
// Write, Publish and Remove are each one script, so each is atomic: a
// version is written whole or not at all, and the pointer names a written
// version. Readers learn of a new version by polling Current.
type RedisStore struct{ r *Redis }

// NewRedisStore returns the store over r's connection and prefix.
func NewRedisStore(r *Redis) *RedisStore { return &RedisStore{r: r} }

// modelKey returns the key of what (v:<version>, versions, current) for
// model, checking the names: a model may hold no brace, as
// it is the hash tag; versions and parts obey the names DirStore takes, so
// a model stored in one store can be stored in the other.
func (s *RedisStore) modelKey(model, what string) (string, error) {
	if model == "" || strings.ContainsAny(model, "{}") {
		return "", fmt.Errorf("cache: bad model name %q", model)
	}
	return s.r.prefix + "kr:model:{" + model + "}:" + what, nil
}

// keys returns the version hash, versions set and pointer keys of model.
func (s *RedisStore) keys(model, version string) (vkey, versions, current string, err error) {
	if err = checkName("version", version); err != nil {
		return
	}
	if vkey, err = s.modelKey(model, "v:"+version); err != nil {
		return
	}
	versions, _ = s.modelKey(model, "versions")
	current, _ = s.modelKey(model, "current")
	return
}

// writeScript writes a version unless it is recorded already:
// KEYS = version hash, versions set; ARGV = version, time, part, bytes, ...
var writeScript = redis.NewScript(`
if redis.call("ZSCORE", KEYS[2], ARGV[1]) then
	return 0
end
for i = 3, #ARGV, 2 do -- not HSET of unpack(ARGV): Lua's stack is small
	redis.call("HSET", KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call("ZADD", KEYS[2], ARGV[2], ARGV[1])
return 1`)

// Write implements Store. A version already written is left as it is.
func (s *RedisStore) Write(ctx context.Context, model, version string, parts map[string][]byte) error {
	vkey, versions, _, err := s.keys(model, version)
	if err != nil {
		return err
	}
	args := make([]any, 0, 2+2*len(parts))
	args = append(args, version, time.Now().UnixMicro())
	for name, b := range parts {
		if err := checkName("part", name); err != nil {
			return err
		}
		args = append(args, name, b)
	}
	return writeScript.Run(ctx, s.r.c, []string{vkey, versions}, args...).Err()
}

// publishScript points current at a written version: KEYS = versions set,
// pointer; ARGV = version. It returns 0 for a version not written.
var publishScript = redis.NewScript(`
if not redis.call("ZSCORE", KEYS[1], ARGV[1]) then
	return 0
end
redis.call("SET", KEYS[2], ARGV[1])
return 1`)

// Publish implements Store.
func (s *RedisStore) Publish(ctx context.Context, model, version string) error {
	_, versions, current, err := s.keys(model, version)
	if err != nil {
		return err
	}
	ok, err := publishScript.Run(ctx, s.r.c, []string{versions, current}, version).Bool()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("cache: publish %s %s: version not written", model, version)
	}
	return nil
}

// Current implements Store.
func (s *RedisStore) Current(ctx context.Context, model string) (string, error) {
	key, err := s.modelKey(model, "current")
	if err != nil {
		return "", err
	}
	v, err := s.r.c.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return "", ErrMiss
	}
	return v, err
}

// Read implements Store.
func (s *RedisStore) Read(ctx context.Context, model, version, part string) ([]byte, error) {
	vkey, _, _, err := s.keys(model, version)
	if err != nil || checkName("part", part) != nil {
		return nil, ErrMiss
	}
	b, err := s.r.c.HGet(ctx, vkey, part).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrMiss
	}
	return b, err
}

// Versions implements Store, oldest first by write time.
func (s *RedisStore) Versions(ctx context.Context, model string) ([]string, error) {
	key, err := s.modelKey(model, "versions")
	if err != nil {
		return nil, err
	}
	return s.r.c.ZRange(ctx, key, 0, -1).Result()
}

// removeScript deletes a version that is not the current one: KEYS =
// version hash, versions set, pointer; ARGV = version. It returns 0 for
// the current version.
var removeScript = redis.NewScript(`
if redis.call("GET", KEYS[3]) == ARGV[1] then
	return 0
end
redis.call("DEL", KEYS[1])
redis.call("ZREM", KEYS[2], ARGV[1])
return 1`)

// Remove implements Store.
func (s *RedisStore) Remove(ctx context.Context, model, version string) error {
	vkey, versions, current, err := s.keys(model, version)
	if err != nil {
		return err
	}
	ok, err := removeScript.Run(ctx, s.r.c, []string{vkey, versions, current}, version).Bool()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("cache: %s %s is the current version", model, version)
	}
	return nil
}
