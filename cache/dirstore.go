package cache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DirStore is a Store in a directory, for a server without Redis: a
// restart loads the last published model instead of training again.
// Layout: <root>/<model>/<version>/<part>, and <root>/<model>/CURRENT
// naming the published version. A version is written into a temporary
// directory and renamed into place, CURRENT is replaced by a rename: both
// atomic on POSIX file systems, so a crash leaves the old state.
type DirStore struct{ root string }

// NewDirStore returns a store in root, created when missing.
func NewDirStore(root string) (*DirStore, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	return &DirStore{root: root}, nil
}

const currentFile = "CURRENT"

func (d *DirStore) modelDir(model string) string { return filepath.Join(d.root, url.PathEscape(model)) }

func checkName(what, s string) error {
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00") || s == currentFile || strings.HasPrefix(s, ".tmp") {
		return fmt.Errorf("cache: bad %s name %q", what, s)
	}
	return nil
}

// Write implements Store. A version already written is left as it is.
func (d *DirStore) Write(_ context.Context, model, version string, parts map[string][]byte) error {
	if err := checkName("version", version); err != nil {
		return err
	}
	dir := d.modelDir(model)
	final := filepath.Join(dir, version)
	if _, err := os.Stat(final); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, ".tmp-"+version+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for name, b := range parts {
		if err := checkName("part", name); err != nil {
			return err
		}
		if err := writeSync(filepath.Join(tmp, name), b); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(final); statErr == nil {
			return nil // written by another writer meanwhile
		}
		return err
	}
	return nil
}

func writeSync(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Publish implements Store.
func (d *DirStore) Publish(_ context.Context, model, version string) error {
	if err := checkName("version", version); err != nil {
		return err
	}
	dir := d.modelDir(model)
	if _, err := os.Stat(filepath.Join(dir, version)); err != nil {
		return fmt.Errorf("cache: publish %s %s: version not written", model, version)
	}
	tmp := filepath.Join(dir, ".tmp-"+currentFile)
	if err := writeSync(tmp, []byte(version)); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, currentFile))
}

// Current implements Store.
func (d *DirStore) Current(_ context.Context, model string) (string, error) {
	b, err := os.ReadFile(filepath.Join(d.modelDir(model), currentFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrMiss
	}
	return strings.TrimSpace(string(b)), err
}

// Read implements Store.
func (d *DirStore) Read(_ context.Context, model, version, part string) ([]byte, error) {
	if checkName("version", version) != nil || checkName("part", part) != nil {
		return nil, ErrMiss
	}
	b, err := os.ReadFile(filepath.Join(d.modelDir(model), version, part))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrMiss
	}
	return b, err
}

// Versions implements Store, oldest first by modification time.
func (d *DirStore) Versions(_ context.Context, model string) ([]string, error) {
	ents, err := os.ReadDir(d.modelDir(model))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type v struct {
		name string
		mod  int64
	}
	var vs []v
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".tmp") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		vs = append(vs, v{e.Name(), info.ModTime().UnixNano()})
	}
	slices.SortFunc(vs, func(a, b v) int {
		if a.mod != b.mod {
			return int(min(max(a.mod-b.mod, -1), 1))
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, len(vs))
	for i, x := range vs {
		out[i] = x.name
	}
	return out, nil
}

// Remove implements Store.
func (d *DirStore) Remove(ctx context.Context, model, version string) error {
	if err := checkName("version", version); err != nil {
		return err
	}
	if cur, err := d.Current(ctx, model); err == nil && cur == version {
		return fmt.Errorf("cache: %s %s is the current version", model, version)
	}
	return os.RemoveAll(filepath.Join(d.modelDir(model), version))
}
