package blob

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Redis keeps each blob in one string key, prefix + name, so that on a
// cluster blobs spread over the slots. A hash, prefix + "stats" (fields
// count and bytes), keeps the totals that bound the store: maxBlob per
// blob (ErrTooLarge) and budget over all (ErrFull).
type Redis struct {
	rc      redis.UniversalClient
	prefix  string
	maxBlob int64
	budget  int64
}

// DefaultPrefix is the prefix of a deployment's blob keys.
const DefaultPrefix = "kr-blob:"

// NewRedis returns the store on rc under prefix; maxBlob and budget are in
// bytes, 0 for no bound.
func NewRedis(rc redis.UniversalClient, prefix string, maxBlob, budget int64) *Redis {
	return &Redis{rc: rc, prefix: prefix, maxBlob: maxBlob, budget: budget}
}

func (r *Redis) key(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	return r.prefix + name, nil
}

func (r *Redis) stats() string { return r.prefix + "stats" }

// Put implements Store.
func (r *Redis) Put(ctx context.Context, name string, data []byte) error {
	k, err := r.key(name)
	if err != nil {
		return err
	}
	n := int64(len(data))
	if r.maxBlob > 0 && n > r.maxBlob {
		return fmt.Errorf("%w: %d bytes, the cap is %d", ErrTooLarge, n, r.maxBlob)
	}
	if ok, err := r.rc.Exists(ctx, k).Result(); err != nil || ok == 1 {
		return err
	}
	// Reserve the bytes before writing, so that writers racing for the
	// last of the budget cannot all pass it.
	if err := r.rc.HIncrBy(ctx, r.stats(), "bytes", n).Err(); err != nil {
		return err
	}
	unreserve := func() { r.rc.HIncrBy(context.WithoutCancel(ctx), r.stats(), "bytes", -n) }
	if r.budget > 0 {
		total, err := r.rc.HGet(ctx, r.stats(), "bytes").Int64()
		if err == nil && total > r.budget {
			err = fmt.Errorf("%w: %d bytes more would make %d, the budget is %d", ErrFull, n, total, r.budget)
		}
		if err != nil {
			unreserve()
			return err
		}
	}
	set, err := r.rc.SetNX(ctx, k, data, 0).Result()
	if err != nil || !set {
		unreserve() // failed, or another writer stored the same bytes first
		return err
	}
	return r.rc.HIncrBy(ctx, r.stats(), "count", 1).Err()
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, name string) ([]byte, error) {
	k, err := r.key(name)
	if err != nil {
		return nil, err
	}
	b, err := r.rc.Get(ctx, k).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return b, err
}

// Stat implements Store.
func (r *Redis) Stat(ctx context.Context, name string) (int64, error) {
	k, err := r.key(name)
	if err != nil {
		return 0, err
	}
	n, err := r.rc.StrLen(ctx, k).Result()
	if err == nil && n == 0 {
		return 0, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return n, err
}

// Delete implements Store; the totals drop only when this call removed
// the blob.
func (r *Redis) Delete(ctx context.Context, name string) error {
	k, err := r.key(name)
	if err != nil {
		return err
	}
	n, err := r.rc.StrLen(ctx, k).Result()
	if err != nil || n == 0 {
		return err
	}
	gone, err := r.rc.Del(ctx, k).Result()
	if err != nil || gone == 0 {
		return err
	}
	pipe := r.rc.Pipeline()
	pipe.HIncrBy(ctx, r.stats(), "bytes", -n)
	pipe.HIncrBy(ctx, r.stats(), "count", -1)
	_, err = pipe.Exec(ctx)
	return err
}

// Walk implements Store with SCAN, on every master of a cluster.
func (r *Redis) Walk(ctx context.Context, fn func(name string) error) error {
	var mu sync.Mutex // ForEachMaster scans the masters at once
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, r.prefix+"*", 500).Iterator()
		for it.Next(ctx) {
			name := it.Val()[len(r.prefix):]
			if checkName(name) != nil {
				continue
			}
			mu.Lock()
			err := fn(name)
			mu.Unlock()
			if err != nil {
				return err
			}
		}
		return it.Err()
	}
	switch c := r.rc.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, scan)
	case *redis.Client:
		return scan(ctx, c)
	}
	return fmt.Errorf("blob: cannot scan a %T", r.rc)
}

// Info implements Store from the totals Put and Delete keep.
func (r *Redis) Info(ctx context.Context) (Info, error) {
	info := Info{Backend: "redis"}
	vals, err := r.rc.HMGet(ctx, r.stats(), "count", "bytes").Result()
	if err != nil {
		return info, err
	}
	for i, dst := range []*int64{&info.Count, &info.Bytes} {
		if s, ok := vals[i].(string); ok {
			*dst, _ = strconv.ParseInt(s, 10, 64)
		}
	}
	return info, nil
}
