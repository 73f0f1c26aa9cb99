package blob

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Dir keeps each blob in a file of one directory, named by the blob's name.
// Files are written under a temporary name (".tmp-*"), synced and renamed
// into place, so a reader never sees half a blob; a temporary file older
// than staleTemp is a crashed writer's, which Walk removes.
type Dir struct {
	dir string
}

const (
	tmpPrefix = ".tmp-"
	staleTemp = time.Hour
)

// NewDir returns the store of dir, created when first written.
func NewDir(dir string) *Dir { return &Dir{dir: dir} }

func (d *Dir) path(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	return filepath.Join(d.dir, name), nil
}

// Put implements Store.
func (d *Dir) Put(_ context.Context, name string, data []byte) error {
	p, err := d.path(name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(d.dir, tmpPrefix+"*")
	if err != nil {
		return err
	}
	err = f.Chmod(0o644) // CreateTemp's 0600: other processes serve the files too
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// Get implements Store.
func (d *Dir) Get(_ context.Context, name string) ([]byte, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return b, err
}

// Stat implements Store.
func (d *Dir) Stat(_ context.Context, name string) (int64, error) {
	p, err := d.path(name)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// Delete implements Store.
func (d *Dir) Delete(_ context.Context, name string) error {
	p, err := d.path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Walk implements Store. Files not named as blobs are left alone.
func (d *Dir) Walk(ctx context.Context, fn func(name string) error) error {
	entries, err := os.ReadDir(d.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		if strings.HasPrefix(name, tmpPrefix) {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
				_ = os.Remove(filepath.Join(d.dir, name))
			}
			continue
		}
		if checkName(name) != nil {
			continue
		}
		if err := fn(name); err != nil {
			return err
		}
	}
	return nil
}

// Info implements Store: it counts the files, so its cost grows with them.
func (d *Dir) Info(ctx context.Context) (Info, error) {
	info := Info{Backend: "dir"}
	err := d.Walk(ctx, func(name string) error {
		st, err := os.Stat(filepath.Join(d.dir, name))
		if err == nil {
			info.Count++
			info.Bytes += st.Size()
		}
		return nil
	})
	return info, err
}
