package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kernelrank/kernelrank/features"
	"golang.org/x/image/draw"
	"golang.org/x/sync/singleflight"
)

// Limits of an uploaded image and the size of thumbnails.
const (
	// MaxImageBytes bounds the bytes of one uploaded image.
	MaxImageBytes = 20 << 20
	// MaxImagePixels bounds the pixels of an uploaded image (16 megapixels,
	// 4096 x 4096), checked from its header before it is decoded: decoded,
	// such an image takes up to 128 MB.
	MaxImagePixels = 16 << 20
	// ThumbnailEdge is the longest side of a thumbnail, in pixels.
	ThumbnailEdge = 256
	// decodeSlots bounds the images decoded at once (uploads, thumbnails
	// built on first use), each holding its pixels in memory.
	decodeSlots = 2
)

var (
	// ErrTooLarge is wrapped by the error of an upload above MaxImageBytes
	// or MaxImagePixels.
	ErrTooLarge = errors.New("image too large")
	// ErrNoImage is wrapped by the error of a doc whose image file is
	// missing or unreadable.
	ErrNoImage = errors.New("no readable image file")
	// ErrBadImage is wrapped by the error of an image (uploaded or a file)
	// that does not decode.
	ErrBadImage = errors.New("image does not decode")
	// ErrNoImageDir is returned by Add for an upload to a store without a
	// directory: it keeps no files.
	ErrNoImageDir = errors.New("index: no image directory to store uploads in")
)

// Images keeps the image files of a server in one directory:
//
//	<id>.<hash>.<ext>   an uploaded image, the bytes as sent; hash is the first
//	                    32 hex digits of their SHA-256, ext png, jpg or gif
//	.thumbs/<id>.<key>  its thumbnail (PNG, JPEG for a JPEG), key its hash; for
//	                    an image elsewhere (an ingested corpus) a hash of its
//	                    path, size and modification time, built on first use
//	.tmp-*              a file being written
//
// An id never starts with '.', so those names are the store's own. Files are
// written under a temporary name and renamed into place, and an upload's
// name is its content's, so a write never changes a file an indexed doc
// refers to: a batch the index refuses, or a crash, leaves only files no doc
// refers to, which Sweep removes. The index records an upload by its bare
// name, relative to the directory.
type Images struct {
	dir string // "" keeps nothing: thumbnails are built on every request
	// mu serialises Add and Delete: which files a batch may remove is
	// decided from the docs it replaces.
	mu     sync.Mutex
	builds singleflight.Group
	slots  chan struct{} // decodeSlots
}

// NewImages returns the store of dir (created when first written).
func NewImages(dir string) *Images {
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	return &Images{dir: dir, slots: make(chan struct{}, decodeSlots)}
}

const (
	thumbDir  = ".thumbs"
	tmpPrefix = ".tmp-"
	hashLen   = 32
)

// ImageInfo describes an image file.
type ImageInfo struct {
	Format string `json:"format"` // png, jpeg or gif
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Bytes  int64  `json:"bytes"`
}

// Upload is an uploaded image, decoded and checked, with its features and
// thumbnail, ready to be written by Add.
type Upload struct {
	Features []float32
	raw      []byte
	thumb    []byte
	name     string
}

// Prepare checks and decodes the image raw of doc id and computes its
// features and thumbnail. It writes nothing. Its errors wrap ErrTooLarge
// (above MaxImageBytes or MaxImagePixels), ErrBadImage or, for the id,
// ErrInvalid. It takes a thumbnail build's slot: uploads and builds
// together hold a bounded number of decoded images.
func (s *Images) Prepare(id string, raw []byte) (*Upload, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	if len(raw) > MaxImageBytes {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(raw), MaxImageBytes)
	}
	s.slots <- struct{}{}
	defer func() { <-s.slots }()
	img, format, err := features.DecodeLimit(bytes.NewReader(raw), MaxImagePixels)
	if errors.Is(err, features.ErrTooManyPixels) {
		return nil, fmt.Errorf("%w: %v", ErrTooLarge, strings.TrimPrefix(err.Error(), "features: "))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadImage, strings.TrimPrefix(err.Error(), "features: "))
	}
	thumb, err := makeThumbnail(img, format)
	if err != nil {
		return nil, err
	}
	v := features.Visual(img)
	up := &Upload{Features: make([]float32, len(v)), raw: raw, thumb: thumb}
	for i, x := range v {
		up.Features[i] = float32(x)
	}
	sum := sha256.Sum256(raw)
	ext := format
	if ext == "jpeg" {
		ext = "jpg"
	}
	up.name = id + "." + hex.EncodeToString(sum[:hashLen/2]) + "." + ext
	return up, nil
}

// makeThumbnail scales img to at most ThumbnailEdge pixels a side
// (Catmull-Rom, which averages over the source pixels when shrinking) and
// encodes it: JPEG for a JPEG, whose photos are far smaller so, PNG
// otherwise, which keeps transparency.
func makeThumbnail(img image.Image, format string) ([]byte, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if m := max(w, h); m > ThumbnailEdge {
		w, h = max(1, w*ThumbnailEdge/m), max(1, h*ThumbnailEdge/m)
	}
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	var buf bytes.Buffer
	var err error
	if format == "jpeg" {
		err = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 85})
	} else {
		err = png.Encode(&buf, dst)
	}
	return buf.Bytes(), err
}

// Add writes the uploads and adds docs to ix, ups[i] being the upload of
// docs[i] or nil. An invalid batch writes nothing; when the index refuses
// the batch, the files written for it are removed. Once the batch is in, the
// files of the images it replaced or dropped are removed.
func (s *Images) Add(ix *Index, docs []Doc, ups []*Upload) error {
	if err := ix.Validate(docs); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, len(docs))
	last := make(map[string]int, len(docs))
	for i, d := range docs {
		ids[i], last[d.ID] = d.ID, i
	}
	old, err := ix.GetMany(ids)
	if err != nil {
		return err
	}
	var created []string
	for i, up := range ups {
		if up == nil || last[docs[i].ID] != i {
			continue // Add keeps the last doc of an id: no file for the others
		}
		if s.dir == "" {
			return ErrNoImageDir
		}
		for _, f := range []struct {
			path string
			data []byte
		}{
			{filepath.Join(s.dir, up.name), up.raw},
			{filepath.Join(s.dir, thumbDir, trimExt(up.name)), up.thumb},
		} {
			made, err := writeNew(f.path, f.data)
			if made {
				created = append(created, f.path)
			}
			if err != nil {
				removeAll(created)
				return err
			}
		}
		docs[i].Image = up.name
	}
	if err := ix.Add(docs); err != nil {
		removeAll(created)
		return err
	}
	for i, d := range docs {
		if last[d.ID] == i && old[i].ID != "" && old[i].Image != d.Image {
			s.discard(old[i])
		}
	}
	return nil
}

// Delete removes doc id from ix, then its files; it reports whether the doc
// existed.
func (s *Images) Delete(ix *Index, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, found, err := ix.Get(id)
	if err != nil || !found {
		return found, err
	}
	if err := ix.Delete([]string{id}); err != nil {
		return true, err
	}
	s.discard(d)
	return true, nil
}

// discard removes the thumbnail of d, no longer indexed, and its image when
// the store owns it. A file left behind (an I/O error) is only an orphan,
// which the next Sweep removes.
func (s *Images) discard(d Doc) {
	if s.dir == "" || d.Image == "" {
		return
	}
	if key, err := s.thumbKey(d); err == nil {
		_ = os.Remove(filepath.Join(s.dir, thumbDir, key))
	}
	if s.owns(d) {
		_ = os.Remove(s.path(d))
	}
}

// path is the file of d's image: uploads are recorded relative to the store.
func (s *Images) path(d Doc) string {
	if d.Image == "" || filepath.IsAbs(d.Image) {
		return d.Image
	}
	return filepath.Join(s.dir, d.Image)
}

// owns reports whether d's image is a file of the store (also one written,
// with its absolute path, by an older version).
func (s *Images) owns(d Doc) bool {
	return s.dir != "" && d.Image != "" && filepath.Dir(s.path(d)) == s.dir
}

// thumbKey names the thumbnail of d's image: an upload's name without its
// extension (the name carries the content's hash); for any other file, a
// hash of its path, size and modification time, so a file changed in place
// gets a new thumbnail.
func (s *Images) thumbKey(d Doc) (string, error) {
	if !filepath.IsAbs(d.Image) {
		return trimExt(d.Image), nil
	}
	st, err := os.Stat(d.Image)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoImage, errors.Unwrap(err))
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", d.Image, st.Size(), st.ModTime().UnixNano()))
	return d.ID + "." + hex.EncodeToString(sum[:hashLen/2]), nil
}

// Info reads the header of d's image.
func (s *Images) Info(d Doc) (ImageInfo, error) {
	f, err := os.Open(s.path(d))
	if err != nil {
		return ImageInfo{}, fmt.Errorf("%w: %v", ErrNoImage, errors.Unwrap(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ImageInfo{}, fmt.Errorf("%w: %v", ErrNoImage, errors.Unwrap(err))
	}
	cfg, format, err := image.DecodeConfig(f)
	if err != nil {
		return ImageInfo{}, fmt.Errorf("%w: %v", ErrBadImage, err)
	}
	return ImageInfo{Format: format, Width: cfg.Width, Height: cfg.Height, Bytes: st.Size()}, nil
}

// Thumbnail returns the thumbnail of d's image, PNG or JPEG. One missing
// (an ingested corpus, or an upload of an older version) is built once and
// kept; concurrent requests for it share the build.
func (s *Images) Thumbnail(d Doc) ([]byte, error) {
	if d.Image == "" {
		return nil, ErrNoImage
	}
	key, err := s.thumbKey(d)
	if err != nil {
		return nil, err
	}
	p := filepath.Join(s.dir, thumbDir, key)
	if s.dir != "" {
		if b, err := os.ReadFile(p); err == nil {
			return b, nil
		}
	}
	v, err, _ := s.builds.Do(key, func() (any, error) {
		s.slots <- struct{}{}
		defer func() { <-s.slots }()
		b, err := buildThumbnail(s.path(d))
		if err == nil && s.dir != "" {
			// Failing to keep it only costs the next request a build.
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = writeAtomic(p, b)
		}
		return b, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

func buildThumbnail(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoImage, errors.Unwrap(err))
	}
	defer f.Close()
	img, format, err := features.DecodeLimit(f, features.MaxPixels)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadImage, strings.TrimPrefix(err.Error(), "features: "))
	}
	return makeThumbnail(img, format)
}

// Sweep removes, from the store's directory, what a crash or an older
// version left: temporary files, images no doc refers to, thumbnails of no
// indexed image. It removes only files named as the store names them, and
// nothing when it cannot read a doc. Run it before the store is used.
func (s *Images) Sweep(ix *Index) (removed int, err error) {
	if s.dir == "" {
		return 0, nil
	}
	// keep says whether the file name in dir belongs to an indexed doc,
	// given the id its name gives; ok is false for names not the store's.
	sweep := func(dir string, parse func(name string) (id string, ok bool), keep func(d Doc, name string) bool) error {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if !e.Type().IsRegular() {
				continue
			}
			drop := strings.HasPrefix(name, tmpPrefix)
			if id, ok := parse(name); ok && !drop {
				d, found, err := ix.Get(id)
				if err != nil {
					return err
				}
				drop = !found || !keep(d, name)
			}
			if drop {
				if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				removed++
			}
		}
		return nil
	}
	err = sweep(s.dir, parseImageName, func(d Doc, name string) bool {
		return s.owns(d) && filepath.Base(s.path(d)) == name
	})
	if err == nil {
		err = sweep(filepath.Join(s.dir, thumbDir), parseThumbName, func(d Doc, name string) bool {
			key, err := s.thumbKey(d)
			return d.Image != "" && err == nil && key == name
		})
	}
	return removed, err
}

// parseImageName gives the id of an image file: <id>.<hash>.<ext>, or
// <id>.png as older versions wrote them.
func parseImageName(name string) (string, bool) {
	ext := filepath.Ext(name)
	switch ext {
	case ".png", ".jpg", ".gif":
	default:
		return "", false
	}
	stem := strings.TrimSuffix(name, ext)
	if id, ok := parseThumbName(stem); ok {
		return id, true
	}
	return stem, stem != "" && !strings.HasPrefix(stem, ".")
}

// parseThumbName gives the id of a thumbnail: <id>.<hash>.
func parseThumbName(name string) (string, bool) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || len(name)-i-1 != hashLen || strings.HasPrefix(name, ".") {
		return "", false
	}
	if _, err := hex.DecodeString(name[i+1:]); err != nil {
		return "", false
	}
	return name[:i], true
}

func trimExt(name string) string { return strings.TrimSuffix(name, filepath.Ext(name)) }

// writeNew writes data to path unless a file is there (an upload's name is
// its content's, so that file holds the same bytes); made says whether it
// wrote one.
func writeNew(path string, data []byte) (made bool, err error) {
	if _, err := os.Stat(path); err == nil {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, writeAtomic(path, data)
}

// writeAtomic writes data to a temporary file beside path, syncs it and
// renames it to path, so path is never seen half written.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), tmpPrefix+"*")
	if err != nil {
		return err
	}
	err = f.Chmod(0o644) // CreateTemp's 0600, as other files of the index are readable
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
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

func removeAll(paths []string) {
	for _, p := range paths {
		_ = os.Remove(p)
	}
}
