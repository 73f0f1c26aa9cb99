package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/index/blob"
)

// imageView is the answer of GET /v1/images/{id}: the stored fields, the
// thumbnail's URL and the image's header (both absent without an image), and
// the feature vector ([] without one). Server paths are never shown.
type imageView struct {
	ID         string           `json:"id"`
	Tags       []string         `json:"tags"`
	Title      string           `json:"title"`
	Labels     []string         `json:"labels,omitempty"`
	Thumbnail  string           `json:"thumbnail,omitempty"`
	Image      *index.ImageInfo `json:"image"`
	FeatureDim int              `json:"feature_dim"`
	Features   []float32        `json:"features"`
}

func (s *Server) getImage(c *gin.Context) {
	if !onlyParams(c) {
		return
	}
	d, ok := s.lookup(c)
	if !ok {
		return
	}
	f, err := s.ix.Features([]string{d.ID})
	if err != nil {
		s.internal(c, "image features", err)
		return
	}
	v := imageView{ID: d.ID, Tags: d.Tags, Title: d.Title, Labels: d.Labels, FeatureDim: len(f[0]), Features: f[0]}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	if v.Features == nil {
		v.Features = []float32{}
	}
	if d.HasImage() {
		v.Thumbnail = "/v1/images/" + url.PathEscape(d.ID) + "/thumbnail"
		if info, err := s.files.Info(c.Request.Context(), d); err == nil {
			v.Image = &info
		} else {
			s.log.Warn("image header", "id", d.ID, "err", err)
		}
	}
	c.JSON(http.StatusOK, v)
}

func (s *Server) lookup(c *gin.Context) (index.Doc, bool) {
	id := c.Param("id")
	d, found, err := s.ix.Get(id)
	switch {
	case err != nil:
		s.internal(c, "get image", err)
		return d, false
	case !found:
		fail(c, http.StatusNotFound, "unknown_image", fmt.Sprintf("no image with id %q", id))
		return d, false
	}
	return d, true
}

// internal logs err and answers a 500 that names the request, not the
// error: an I/O error would show server paths.
func (s *Server) internal(c *gin.Context, what string, err error) {
	id := c.GetString("request_id")
	s.log.Error(what, "request_id", id, "err", err)
	fail(c, http.StatusInternalServerError, "internal", "internal error (request "+id+")")
}

// thumbnailCache lets browsers reuse a thumbnail for 5 minutes, then
// revalidate it by its ETag: an id's image may be replaced.
const thumbnailCache = "public, max-age=300"

// thumbnail serves the image's thumbnail (at most index.ThumbnailEdge pixels
// a side, PNG or, for a JPEG, JPEG), made once, with an ETag of its content:
// If-None-Match with it answers 304.
func (s *Server) thumbnail(c *gin.Context) {
	if !onlyParams(c) {
		return
	}
	d, ok := s.lookup(c)
	if !ok {
		return
	}
	b, err := s.files.Thumbnail(c.Request.Context(), d)
	switch {
	case errors.Is(err, index.ErrNoImage):
		fail(c, http.StatusNotFound, "no_image", fmt.Sprintf("image %q has no readable image file", d.ID))
		return
	case errors.Is(err, index.ErrBadImage):
		s.log.Warn("thumbnail", "id", d.ID, "err", err)
		fail(c, http.StatusUnprocessableEntity, "bad_image", fmt.Sprintf("the image file of %q does not decode", d.ID))
		return
	case err != nil:
		s.internal(c, "thumbnail", err)
		return
	}
	sum := sha256.Sum256(b)
	c.Header("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
	c.Header("Cache-Control", thumbnailCache)
	c.Header("Content-Type", http.DetectContentType(b))
	http.ServeContent(c.Writer, c.Request, "", time.Time{}, bytes.NewReader(b))
}

// newImage is the body of POST /v1/images: the index's Doc, plus the image
// itself in base64 (PNG, JPEG or GIF) when it is not on the server's disk.
type newImage struct {
	index.Doc
	ImageBase64 string `json:"image_base64,omitempty"`
}

// addImages adds or replaces images: one object or an array. Everything is
// checked, and every image decoded, before anything is written; the index
// store (index.Images) then writes the files and the docs together.
func (s *Server) addImages(c *gin.Context) {
	if !onlyParams(c) {
		return
	}
	body, err := readBody(c)
	if err != nil {
		return
	}
	items, err := parseImages(body)
	if err != nil {
		badRequest(c, err.Error())
		return
	}
	docs := make([]index.Doc, len(items))
	ups := make([]*index.Upload, len(items))
	for i, it := range items {
		docs[i] = it.Doc
		if it.ImageBase64 == "" {
			continue
		}
		up, err := s.prepareUpload(it)
		if err != nil {
			status, code := http.StatusBadRequest, "bad_request"
			if errors.Is(err, index.ErrTooLarge) {
				status, code = http.StatusRequestEntityTooLarge, "too_large"
			}
			fail(c, status, code, fmt.Sprintf("image %d (%q): %v", i, it.ID, err))
			return
		}
		ups[i], docs[i].Features = up, up.Features
	}
	if err := s.files.Add(c.Request.Context(), s.ix, s.writer, docs, ups); err != nil {
		s.writeFailed(c, "add images", err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"added": len(docs), "images": s.ix.Count()})
}

// parseImages decodes the body of POST /v1/images, one image object or an
// array of them, and checks what needs no index: unknown fields (a misspelt
// one would be dropped), a server path or image hash, features beside the image they
// would be computed from, and an id given twice (which of the two would
// win is no answer to give).
func parseImages(body []byte) ([]newImage, error) {
	var items []newImage
	var err error
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		err = decodeStrict(trimmed, &items)
	} else {
		items = make([]newImage, 1)
		err = decodeStrict(trimmed, &items[0])
	}
	if err != nil {
		return nil, fmt.Errorf("body must be an image object or an array of them: %v", err)
	}
	if len(items) == 0 {
		return nil, errors.New("no images in the body")
	}
	first := make(map[string]int, len(items))
	for i, it := range items {
		switch {
		case it.Image != "" || it.ImageSHA256 != "":
			return nil, fmt.Errorf("image %d (%q): send the image itself in image_base64; server paths and image hashes are set by the server and `kernelrank ingest`", i, it.ID)
		case it.ImageBase64 != "" && it.Features != nil:
			return nil, fmt.Errorf("image %d (%q): features are computed from image_base64: send one or the other", i, it.ID)
		}
		if j, dup := first[it.ID]; dup {
			return nil, fmt.Errorf("image %d: id %q is also image %d's: a batch gives each id once", i, it.ID, j)
		}
		first[it.ID] = i
	}
	return items, nil
}

// decodeStrict decodes one JSON value into v, refusing fields v has not
// and anything after the value.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("one JSON value expected, with nothing after it")
	}
	return nil
}

// prepareUpload decodes the base64 of it, refusing more than
// index.MaxImageBytes before decoding.
func (s *Server) prepareUpload(it newImage) (*index.Upload, error) {
	if n := base64.StdEncoding.DecodedLen(len(it.ImageBase64)); n > index.MaxImageBytes+2 {
		return nil, fmt.Errorf("%w: about %d bytes, the limit is %d", index.ErrTooLarge, n, index.MaxImageBytes)
	}
	raw, err := base64.StdEncoding.DecodeString(it.ImageBase64)
	if err != nil {
		return nil, fmt.Errorf("image_base64 is not base64: %v", err)
	}
	return s.files.Prepare(it.ID, raw)
}

func readBody(c *gin.Context) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(c.Request.Body); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			fail(c, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body over %d bytes", tooBig.Limit))
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The server's read timeout passed with the body unfinished.
			fail(c, http.StatusRequestTimeout, "request_timeout", "the request body did not arrive within the server's read timeout")
		default:
			badRequest(c, "reading the body: "+err.Error())
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// deleteImage removes the image from the index, then its files.
func (s *Server) deleteImage(c *gin.Context) {
	if !onlyParams(c) {
		return
	}
	id := c.Param("id")
	found, err := s.files.Delete(c.Request.Context(), s.ix, s.writer, id)
	switch {
	case err != nil:
		s.writeFailed(c, "delete image", err)
	case !found:
		fail(c, http.StatusNotFound, "unknown_image", fmt.Sprintf("no image with id %q", id))
	default:
		c.JSON(http.StatusOK, gin.H{"deleted": id, "images": s.ix.Count()})
	}
}

// writeFailed answers a write of the corpus that failed: the client's
// fault (400), a blob over the store's cap (413) or its budget (507), or a
// corpus log that did not take the change (503).
func (s *Server) writeFailed(c *gin.Context, what string, err error) {
	switch {
	case errors.Is(err, index.ErrInvalid):
		badRequest(c, err.Error())
	case errors.Is(err, index.ErrNoImageDir):
		fail(c, http.StatusNotImplemented, "uploads_disabled", "this server stores no uploaded images (it was started without an image directory); docs without image_base64 are accepted")
	case errors.Is(err, blob.ErrTooLarge):
		fail(c, http.StatusRequestEntityTooLarge, "too_large", err.Error())
	case errors.Is(err, blob.ErrFull):
		fail(c, http.StatusInsufficientStorage, "storage_full", "the image store's byte budget is spent: delete images or raise --blob-budget")
	case s.cfg.Replica != nil:
		s.log.Error(what, "request_id", c.GetString("request_id"), "err", err)
		fail(c, http.StatusServiceUnavailable, "corpus_unavailable", "the corpus log (Redis) did not take the change: retry shortly")
	default:
		s.internal(c, what, err)
	}
}

// sweepImages removes the blobs no doc refers to, what a crash or a
// refused batch left, before the server takes requests.
func sweepImages(files *index.Images, ix *index.Index, log *slog.Logger) *index.Images {
	n, err := files.Sweep(context.Background(), ix)
	if err != nil {
		log.Error("sweeping the image store", "err", err)
	} else if n > 0 {
		log.Info("removed unreferenced images", "blobs", n)
	}
	return files
}
