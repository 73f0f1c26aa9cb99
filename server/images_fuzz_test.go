package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/index"
)

// FuzzAddImages posts any body to POST /v1/images: the answer is 200, 400
// or 413, never a panic or a 500. A rejected body changes nothing in the
// index nor in the uploads directory (index.Images writes atomically); an
// accepted one stores every item as sent.
// Seeds: testdata/fuzz/FuzzAddImages.
func FuzzAddImages(f *testing.F) {
	gin.SetMode(gin.ReleaseMode)
	dir := f.TempDir()
	ix, err := index.Open(filepath.Join(dir, "index"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ix.Close() })
	uploads := filepath.Join(dir, "uploads")
	s := New(ix, Config{AdminToken: token, ImageDir: uploads, MaxBodyBytes: 1 << 20},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	f.Fuzz(func(t *testing.T, body []byte) {
		count, version, files := ix.Count(), ix.Version(), fileNames(t, uploads)
		req := httptest.NewRequest("POST", "/v1/images", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			if rec.Code != http.StatusBadRequest && rec.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("answer %d: %s", rec.Code, rec.Body)
			}
			checkErrorBody(t, rec, rec.Code)
			if ix.Count() != count || ix.Version() != version {
				t.Fatalf("a rejected body changed the index: %d images, version %s, were %d, %s", ix.Count(), ix.Version(), count, version)
			}
			if after := fileNames(t, uploads); !maps.Equal(after, files) {
				t.Fatalf("a rejected body changed the uploads directory: files %v, were %v", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(files)))
			}
			return
		}
		var items []newImage
		if trimmed := bytes.TrimSpace(body); trimmed[0] == '[' {
			err = json.Unmarshal(trimmed, &items)
		} else {
			items = make([]newImage, 1)
			err = json.Unmarshal(trimmed, &items[0])
		}
		if err != nil {
			t.Fatalf("accepted a body that is not an image or an array of them: %v", err)
		}
		byID := map[string]newImage{}
		for _, it := range items {
			if _, dup := byID[it.ID]; dup {
				t.Fatalf("accepted id %q twice in one batch", it.ID)
			}
			byID[it.ID] = it
		}
		for id, it := range byID {
			d, found, err := ix.Get(id)
			if err != nil || !found || !slices.Equal(d.Tags, it.Tags) || d.Title != it.Title {
				t.Fatalf("image %q stored as %+v (found %v, %v), sent %+v", id, d, found, err, it.Doc)
			}
			if it.ImageBase64 != "" {
				continue
			}
			if v, err := ix.Features([]string{id}); err != nil || !slices.Equal(v[0], it.Features) {
				t.Fatalf("image %q: features %v stored as %v (%v)", id, it.Features, v, err)
			}
		}
	})
}

// fileNames is the set of the files under dir (paths relative to it,
// temporary files and thumbnails included); empty when dir does not exist.
func fileNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		names[rel] = true
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return names
}
