package deploy

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
	"github.com/kernelrank/kernelrank/social/live"
)

// Social is the social data a process serves, a store every write goes
// to, and the recommender over it.
type Social struct {
	Service *recommend.Service
	Store   *live.Store
}

// Close stops following the store's log.
func (s *Social) Close() { s.Store.Close() }

// storeSource is the recommender's data: the store's, or a directory a
// job names.
type storeSource struct {
	store *live.Store
	dir   recommend.DirSource
}

func (s storeSource) Load(ctx context.Context, path string) (*social.Dataset, error) {
	if path == "" {
		return s.store.Dataset(), nil
	}
	return s.dir.Load(ctx, path)
}

// fixedSource is a data set read once; a job naming a directory reads it.
type fixedSource struct{ ds *social.Dataset }

func (f fixedSource) Load(ctx context.Context, path string) (*social.Dataset, error) {
	if path == "" {
		return f.ds, nil
	}
	return recommend.DirSource{}.Load(ctx, path)
}

// OpenSocial opens the social store (with Redis the deployment's log,
// otherwise the directory social/ under cacheRoot), imports dir into it
// unless it was the directory imported last (without dir, the generated
// demo network into an empty store), and serves it with the models of b's
// store. Every change
// to the store reaches the recommender (Service.Apply), none retrains it.
func OpenSocial(ctx context.Context, dir, learner, cacheRoot string, b *Backends, log *slog.Logger) (*Social, error) {
	var store *live.Store
	var err error
	if b.Redis != nil {
		store, err = live.OpenRedis(ctx, b.Redis.Client(), live.DefaultPrefix, live.Options{Log: log})
	} else {
		store, err = live.OpenDir(filepath.Join(cacheRoot, "social"), live.Options{Log: log})
	}
	if err != nil {
		return nil, err
	}
	// Without --social the demo network fills an empty store only: a store
	// with users keeps them.
	if dir == "" && store.Dataset().N() == 0 {
		dir, err = DemoSocial(cacheRoot, log)
	}
	src := recommend.DirSource{Dir: dir, Log: log}
	if dir != "" && err == nil {
		var ds *social.Dataset
		if ds, err = src.Load(ctx, ""); err == nil {
			err = importData(ctx, store, ds, dir, log)
		}
	}
	if err != nil {
		store.Close()
		return nil, err
	}
	opts := recommend.ServiceOptions{Options: recommend.Options{Learner: learner, Log: log}}
	if b.Redis != nil {
		opts.Locks = b.Redis
	}
	svc, err := recommend.NewService(ctx, storeSource{store: store, dir: src}, b.Store, opts)
	if err != nil {
		store.Close()
		return nil, err
	}
	store.SetOnChange(svc.Apply)
	return &Social{Service: svc, Store: store}, nil
}

// importData writes the difference between ds, read from dir, and the
// store, unless dir's data is what was imported last.
func importData(ctx context.Context, store *live.Store, ds *social.Dataset, dir string, log *slog.Logger) error {
	start := time.Now()
	n, err := store.Import(ctx, ds)
	if err != nil {
		return fmt.Errorf("importing the social data of %s: %w", dir, err)
	}
	if n > 0 {
		log.Info("social data imported into the store", "dir", dir, "operations", n, "took", time.Since(start).Round(time.Millisecond))
	}
	got := store.Dataset()
	log.Info("social store", "users", got.N(), "friendships", len(got.Friends), "groups", len(got.Groups), "data_version", got.Version())
	return nil
}
