package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io/fs"
	"os"
	"strings"

	"github.com/kernelrank/kernelrank/features"
	"github.com/kernelrank/kernelrank/index/blob"
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
	// ErrNoImageDir is returned by Add for an upload to an Images without
	// a blob store: it keeps no bytes.
	ErrNoImageDir = errors.New("index: no blob store to keep uploads in")
)

// Images serves and keeps the image bytes of a corpus in a blob store
// (index/blob): an upload's bytes under their SHA-256 (the doc's
// ImageSHA256, its Image empty), and every image's thumbnail under that
// hash's thumbnail name, built on first use for an ingested image (whose
// bytes stay in their file, Image). A blob is written before the doc that
// refers to it and removed once no doc refers to it, so a refused batch, a
// crash or a lost race leaves only unreferenced blobs, which Sweep
// removes.
type Images struct {
	blobs  blob.Store // nil keeps nothing: uploads are refused, thumbnails built on every request
	builds singleflight.Group
	slots  chan struct{} // decodeSlots
}

// NewImages returns the image store over blobs (nil: none).
func NewImages(blobs blob.Store) *Images {
	return &Images{blobs: blobs, slots: make(chan struct{}, decodeSlots)}
}

// Blobs returns the blob store, nil if none.
func (s *Images) Blobs() blob.Store { return s.blobs }

// Writer applies changes to the corpus: the index itself (Local), or a
// change log that every replica applies (index/replica).
type Writer interface {
	// Add adds docs as Index.Add does and returns the stored docs they
	// replaced, in the order the corpus applied the changes.
	Add(ctx context.Context, docs []Doc) (replaced []Doc, err error)
	// Delete deletes ids and returns the stored docs deleted.
	Delete(ctx context.Context, ids []string) (deleted []Doc, err error)
	// Settled runs fn once the local index has applied every change made
	// so far, while it applies no other: what fn reads of the index is the
	// corpus's latest state.
	Settled(ctx context.Context, fn func()) error
}

// Local is the Writer of a corpus that is one index.
type Local struct{ Index *Index }

// Add implements Writer.
func (l Local) Add(_ context.Context, docs []Doc) ([]Doc, error) { return l.Index.AddAt(docs, nil) }

// Delete implements Writer.
func (l Local) Delete(_ context.Context, ids []string) ([]Doc, error) {
	return l.Index.DeleteAt(ids, nil)
}

// Settled implements Writer.
func (l Local) Settled(_ context.Context, fn func()) error {
	l.Index.wmu.Lock()
	defer l.Index.wmu.Unlock()
	fn()
	return nil
}

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
	hash     string
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
	up := &Upload{Features: make([]float32, len(v)), raw: raw, thumb: thumb, hash: blob.Ref(raw)}
	for i, x := range v {
		up.Features[i] = float32(x)
	}
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

// Add writes the uploads' blobs and adds docs through w, ups[i] being the
// upload of docs[i] or nil; ix is the local index w applies to. An invalid
// batch writes nothing. Once the batch is in, the blobs of the images it
// replaced, and of its own when w refused it, are removed unless a doc
// still refers to them.
func (s *Images) Add(ctx context.Context, ix *Index, w Writer, docs []Doc, ups []*Upload) error {
	if err := ix.Validate(docs); err != nil {
		return err
	}
	last := make(map[string]int, len(docs))
	for i, d := range docs {
		last[d.ID] = i
	}
	var written []*Upload
	for i, up := range ups {
		if up == nil || last[docs[i].ID] != i {
			continue // Add keeps the last doc of an id: no blob for the others
		}
		if s.blobs == nil {
			return ErrNoImageDir
		}
		written = append(written, up)
		if err := s.put(ctx, up); err != nil {
			s.discard(ctx, ix, w, uploadHashes(written))
			return err
		}
		docs[i].Image, docs[i].ImageSHA256 = "", up.hash
	}
	replaced, err := w.Add(ctx, docs)
	if err != nil {
		s.discard(ctx, ix, w, uploadHashes(written))
		return err
	}
	var putErr error
	err = w.Settled(ctx, func() {
		// A writer that replaced or deleted the last doc of the same bytes
		// meanwhile may have removed our blobs: write those a doc still
		// refers to again. (A later change may have replaced ours: then
		// they stay removed.)
		for _, up := range written {
			if n, err := ix.ImageRefs(up.hash); err == nil && n > 0 && putErr == nil {
				putErr = s.put(ctx, up)
			}
		}
		s.dropUnreferenced(ctx, ix, docHashes(replaced))
	})
	return errors.Join(err, putErr)
}

func (s *Images) put(ctx context.Context, up *Upload) error {
	if err := s.blobs.Put(ctx, up.hash, up.raw); err != nil {
		return err
	}
	return s.blobs.Put(ctx, blob.ThumbName(up.hash), up.thumb)
}

func uploadHashes(ups []*Upload) []string {
	out := make([]string, len(ups))
	for i, up := range ups {
		out[i] = up.hash
	}
	return out
}

func docHashes(docs []Doc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ImageSHA256
	}
	return out
}

// Delete removes doc id through w, then its blobs unless another doc
// refers to them; it reports whether the doc existed.
func (s *Images) Delete(ctx context.Context, ix *Index, w Writer, id string) (bool, error) {
	deleted, err := w.Delete(ctx, []string{id})
	if err != nil || len(deleted) == 0 {
		return false, err
	}
	s.discard(ctx, ix, w, docHashes(deleted))
	return true, nil
}

// discard removes the blobs of the image hashes no doc refers to once the
// index has caught up with the corpus. A blob left behind (Redis or I/O
// failing) is only an orphan, which Sweep removes.
func (s *Images) discard(ctx context.Context, ix *Index, w Writer, hashes []string) {
	_ = w.Settled(ctx, func() { s.dropUnreferenced(ctx, ix, hashes) })
}

// dropUnreferenced removes the blobs (original and thumbnail) of the
// hashes no doc of ix refers to.
func (s *Images) dropUnreferenced(ctx context.Context, ix *Index, hashes []string) {
	if s.blobs == nil {
		return
	}
	for _, h := range hashes {
		if h == "" {
			continue
		}
		if n, err := ix.ImageRefs(h); err == nil && n == 0 {
			_ = s.blobs.Delete(ctx, h)
			_ = s.blobs.Delete(ctx, blob.ThumbName(h))
		}
	}
}

// original returns the bytes of d's image: its file, or its blob.
func (s *Images) original(ctx context.Context, d Doc) ([]byte, error) {
	var b []byte
	var err error
	switch {
	case d.Image != "":
		b, err = os.ReadFile(d.Image)
	case d.ImageSHA256 != "" && s.blobs != nil:
		b, err = s.blobs.Get(ctx, d.ImageSHA256)
	default:
		return nil, ErrNoImage
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, blob.ErrNotFound) {
		return nil, fmt.Errorf("%w: %v", ErrNoImage, err)
	}
	return b, err
}

// HasImage reports whether d has an image, in a file or in the store.
func (d Doc) HasImage() bool { return d.Image != "" || d.ImageSHA256 != "" }

// Info reads the header of d's image.
func (s *Images) Info(ctx context.Context, d Doc) (ImageInfo, error) {
	b, err := s.original(ctx, d)
	if err != nil {
		return ImageInfo{}, err
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return ImageInfo{}, fmt.Errorf("%w: %v", ErrBadImage, err)
	}
	return ImageInfo{Format: format, Width: cfg.Width, Height: cfg.Height, Bytes: int64(len(b))}, nil
}

// Thumbnail returns the thumbnail of d's image, PNG or JPEG. One missing
// (an ingested image) is built once and kept; concurrent requests for it
// share the build.
func (s *Images) Thumbnail(ctx context.Context, d Doc) ([]byte, error) {
	if !d.HasImage() {
		return nil, ErrNoImage
	}
	name := ""
	if d.ImageSHA256 != "" && s.blobs != nil {
		name = blob.ThumbName(d.ImageSHA256)
		if b, err := s.blobs.Get(ctx, name); err == nil {
			return b, nil
		}
	}
	v, err, _ := s.builds.Do(name+"\x00"+d.Image, func() (any, error) {
		s.slots <- struct{}{}
		defer func() { <-s.slots }()
		raw, err := s.original(ctx, d)
		if err != nil {
			return nil, err
		}
		img, format, err := features.DecodeLimit(bytes.NewReader(raw), features.MaxPixels)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadImage, strings.TrimPrefix(err.Error(), "features: "))
		}
		b, err := makeThumbnail(img, format)
		if err == nil && name != "" {
			// Failing to keep it only costs the next request a build.
			_ = s.blobs.Put(ctx, name, b)
		}
		return b, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// Sweep removes the blobs no doc of ix refers to: what a crash, a refused
// batch or a lost race left. Run it once the index has caught up with the
// corpus, before the store is used.
func (s *Images) Sweep(ctx context.Context, ix *Index) (removed int, err error) {
	if s.blobs == nil {
		return 0, nil
	}
	refs := map[string]bool{}
	if _, err := ix.Walk(func(d Doc) error {
		refs[d.ImageSHA256] = true
		return nil
	}); err != nil {
		return 0, err
	}
	var drop []string
	err = s.blobs.Walk(ctx, func(name string) error {
		if !refs[blob.Original(name)] {
			drop = append(drop, name)
		}
		return nil
	})
	for _, name := range drop {
		if err := s.blobs.Delete(ctx, name); err != nil {
			return removed, err
		}
		removed++
	}
	return removed, err
}
