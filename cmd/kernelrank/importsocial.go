package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/social"
	"github.com/kernelrank/kernelrank/social/live"
)

// importSocial loads a directory of social data into the social store:
// the deployment's with --redis, otherwise the one under --cache-dir (which
// a server holds while it runs: stop it, or give it --social DIR).
func importSocial(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kernelrank import [--redis URL | --cache-dir DIR] [--stop-on-error] SOCIAL-DIR\n\n"+
			"SOCIAL-DIR is social data in the kernelrank import format, ego-Facebook or BlogCatalog.\n"+
			"The store then holds it: the difference is written, nothing when it was the directory imported last.")
		fs.PrintDefaults()
	}
	redisURL := fs.String("redis", "", "the Redis of a deployment: import into its social change log")
	root := fs.String("cache-dir", filepath.Join(cacheDir(), "kernelrank"), "without --redis: the store is social/ under it")
	stop := fs.Bool("stop-on-error", false, "refuse the directory at its first bad line instead of skipping the line")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("import needs one directory")
	}
	ds, rep, err := social.LoadDir(fs.Arg(0), social.ImportOptions{StopOnError: *stop})
	if err != nil {
		return err
	}
	if n := rep.Skipped(); n > 0 {
		fmt.Fprintf(stderr, "%d problem lines skipped:\n%s", n, rep)
	}
	var store *live.Store
	if *redisURL != "" {
		r, err := cache.OpenRedis(ctx, *redisURL, "")
		if err != nil {
			return err
		}
		defer r.Close()
		store, err = live.OpenRedis(ctx, r.Client(), live.DefaultPrefix, live.Options{})
		if err != nil {
			return err
		}
	} else if store, err = live.OpenDir(filepath.Join(*root, "social"), live.Options{}); err != nil {
		return err
	}
	defer store.Close()
	n, err := store.Import(ctx, ds)
	if err != nil {
		return err
	}
	got := store.Dataset()
	fmt.Fprintf(stdout, "%d operations written; %d users, %d friendships, %d groups; data version %s\n",
		n, got.N(), len(got.Friends), len(got.Groups), got.Version())
	return nil
}
