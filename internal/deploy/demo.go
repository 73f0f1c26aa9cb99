package deploy

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/kernelrank/kernelrank/index/blob"
	"github.com/kernelrank/kernelrank/index/replica"
	"github.com/kernelrank/kernelrank/internal/demo"
)

// DemoSocial returns the directory of the generated demo network, writing
// it on first use (under root/demo).
func DemoSocial(root string, log *slog.Logger) (string, error) {
	dir := filepath.Join(root, "demo", fmt.Sprintf("social-%d", demo.DefaultSocialSeed))
	if _, err := os.Stat(filepath.Join(dir, "users.jsonl")); err == nil {
		return dir, nil
	}
	log.Info("generating the demo social network (first start only)", "dir", dir)
	d, err := demo.GenerateSocial(demo.DefaultSocialSeed, demo.SocialOptions{})
	if err != nil {
		return "", err
	}
	tmp := dir + ".building"
	_ = os.RemoveAll(tmp)
	if err := d.WriteDir(tmp); err != nil {
		return "", err
	}
	return dir, os.Rename(tmp, dir)
}

// DemoIndex returns the demo index directory, building it from the bundled
// corpus on first use (under cacheRoot/demo) and reporting its progress
// (images done, of total) to progress when not nil.
func DemoIndex(ctx context.Context, cacheRoot string, log *slog.Logger, progress func(done, total int)) (string, error) {
	root := filepath.Join(cacheRoot, "demo")
	dir := filepath.Join(root, "index")
	if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err == nil {
		log.Info("serving the demo corpus", "index", dir)
		return dir, nil
	}
	log.Info("building the demo index (first start only)", "dir", root)
	jsonl, err := demo.Extract(filepath.Join(root, "corpus"))
	if err != nil {
		return "", err
	}
	tmp := dir + ".building"
	_ = os.RemoveAll(tmp)
	// The corpus's directory, not its corpus.jsonl: a directory's records
	// are counted first, so the progress has a total.
	rep, err := IngestFiles(ctx, tmp, []string{filepath.Dir(jsonl)}, false, func(done, total int) {
		if done == total || done%500 == 0 {
			log.Info("ingesting demo images", "done", done, "total", total)
		}
		if progress != nil {
			progress(done, total)
		}
	})
	if err != nil {
		return "", err
	}
	log.Info("demo index built", "added", rep.Added, "skipped", rep.Skipped)
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// seedDemo loads the demo corpus into an empty log: images into blobs,
// docs as entries. Of processes starting together, one does (a lock in
// Redis); the others follow its entries.
func seedDemo(ctx context.Context, l *replica.Log, blobs blob.Store, cacheRoot string, log *slog.Logger, progress func(string, int, int)) error {
	if head, err := l.Head(ctx); err != nil || head.ID != "" {
		return err
	}
	if _, ok, err := l.Snapshot(ctx); err != nil || ok {
		return err
	}
	unlock, ok := l.Lock(ctx, "seeding", 10*time.Minute)
	if !ok {
		return nil
	}
	defer unlock()
	log.Info("the corpus log is empty: loading the demo corpus into it")
	jsonl, err := demo.Extract(filepath.Join(cacheRoot, "demo", "corpus"))
	if err != nil {
		return err
	}
	rep, err := IngestToLog(ctx, l, blobs, []string{filepath.Dir(jsonl)}, false, func(done, total int) {
		progress("loading the demo corpus into the corpus log", done, total)
	})
	if err != nil {
		return err
	}
	log.Info("demo corpus in the corpus log", "added", rep.Added, "skipped", rep.Skipped)
	return nil
}
