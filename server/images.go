package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/features"
	"github.com/kernelrank/kernelrank/index"
)

func (s *Server) getImage(c *gin.Context) {
	d, ok := s.lookup(c)
	if !ok {
		return
	}
	c.JSON(http.StatusOK, d)
}

func (s *Server) lookup(c *gin.Context) (index.Doc, bool) {
	id := c.Param("id")
	d, found, err := s.ix.Get(id)
	switch {
	case err != nil:
		s.log.Error("get image", "id", id, "err", err)
		fail(c, http.StatusInternalServerError, "internal", err.Error())
		return d, false
	case !found:
		fail(c, http.StatusNotFound, "unknown_image", fmt.Sprintf("no image with id %q", id))
		return d, false
	}
	return d, true
}

// thumbnailSize is the longest side of a thumbnail, in pixels.
const thumbnailSize = 128

// thumbnail serves the image scaled down to at most 128 pixels a side, as PNG,
// at a stable URL (/v1/images/{id}/thumbnail) that browsers may cache.
func (s *Server) thumbnail(c *gin.Context) {
	d, ok := s.lookup(c)
	if !ok {
		return
	}
	if d.Image == "" {
		fail(c, http.StatusNotFound, "no_image", fmt.Sprintf("image %q has no image file", d.ID))
		return
	}
	f, err := os.Open(d.Image)
	if err != nil {
		fail(c, http.StatusNotFound, "no_image", fmt.Sprintf("the image file of %q is not readable", d.ID))
		return
	}
	defer f.Close()
	img, err := features.Decode(f)
	if err != nil {
		fail(c, http.StatusUnprocessableEntity, "bad_image", fmt.Sprintf("the image file of %q does not decode: %v", d.ID, err))
		return
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, shrink(img, thumbnailSize)); err != nil {
		fail(c, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	c.Header("Cache-Control", "public, max-age=3600")
	c.Data(http.StatusOK, "image/png", buf.Bytes())
}

// shrink scales img down (box filter) so its longest side is at most size.
func shrink(img image.Image, size int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= size && h <= size {
		return img
	}
	scale := float64(max(w, h)) / float64(size)
	tw, th := max(1, int(float64(w)/scale)), max(1, int(float64(h)/scale))
	out := image.NewNRGBA(image.Rect(0, 0, tw, th))
	for y := 0; y < th; y++ {
		y0, y1 := b.Min.Y+y*h/th, b.Min.Y+max((y+1)*h/th, y*h/th+1)
		for x := 0; x < tw; x++ {
			x0, x1 := b.Min.X+x*w/tw, b.Min.X+max((x+1)*w/tw, x*w/tw+1)
			var r, g, bl, a, n uint64
			for yy := y0; yy < y1; yy++ {
				for xx := x0; xx < x1; xx++ {
					cr, cg, cb, ca := img.At(xx, yy).RGBA()
					r, g, bl, a, n = r+uint64(cr), g+uint64(cg), bl+uint64(cb), a+uint64(ca), n+1
				}
			}
			i := out.PixOffset(x, y)
			if a == 0 {
				continue
			}
			// Un-premultiply the average.
			out.Pix[i+0] = uint8(r * 255 / a)
			out.Pix[i+1] = uint8(g * 255 / a)
			out.Pix[i+2] = uint8(bl * 255 / a)
			out.Pix[i+3] = uint8(a / n >> 8)
		}
	}
	return out
}

// newImage is the body of POST /v1/images: the index's Doc, plus the image
// itself in base64 (PNG, JPEG or GIF) when it is not on the server's disk.
type newImage struct {
	index.Doc
	ImageBase64 string `json:"image_base64,omitempty"`
}

// addImages adds or replaces images: one object or an array. Images sent in
// base64 are decoded (a corrupt one rejects the whole request), stored under
// the image directory, and their visual features computed.
func (s *Server) addImages(c *gin.Context) {
	body, err := readBody(c)
	if err != nil {
		return
	}
	var items []newImage
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		err = json.Unmarshal(trimmed, &items)
	} else {
		var one newImage
		err = json.Unmarshal(trimmed, &one)
		items = []newImage{one}
	}
	if err != nil {
		badRequest(c, "body must be an image object or an array of them: "+err.Error())
		return
	}
	if len(items) == 0 {
		badRequest(c, "no images in the body")
		return
	}
	docs := make([]index.Doc, len(items))
	for i, it := range items {
		d := it.Doc
		if it.ImageBase64 != "" {
			if d.Image, d.Features, err = s.storeImage(d.ID, it.ImageBase64); err != nil {
				badRequest(c, fmt.Sprintf("image %d (%q): %v", i, d.ID, err))
				return
			}
		} else if d.Image != "" {
			badRequest(c, fmt.Sprintf("image %d (%q): send the image itself in image_base64; server paths are set by `kernelrank ingest`", i, d.ID))
			return
		}
		docs[i] = d
	}
	if err := s.ix.Add(docs); err != nil {
		if errors.Is(err, index.ErrInvalid) {
			badRequest(c, err.Error())
			return
		}
		fail(c, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	c.JSON(http.StatusOK, gin.H{"added": len(docs), "images": s.ix.Count()})
}

func readBody(c *gin.Context) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(c.Request.Body); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(c, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body over %d bytes", tooBig.Limit))
		} else {
			badRequest(c, "reading the body: "+err.Error())
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// storeImage decodes a base64 image, computes its features and writes it,
// re-encoded as PNG, to the image directory.
func (s *Server) storeImage(id, b64 string) (string, []float32, error) {
	if err := index.CheckID(id); err != nil {
		return "", nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", nil, fmt.Errorf("image_base64 is not base64: %v", err)
	}
	img, err := features.Decode(bytes.NewReader(raw))
	if err != nil {
		return "", nil, err
	}
	v := features.Visual(img)
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	if err := os.MkdirAll(s.cfg.ImageDir, 0o755); err != nil {
		return "", nil, err
	}
	path := filepath.Join(s.cfg.ImageDir, id+".png")
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", nil, err
	}
	return path, f, nil
}

func (s *Server) deleteImage(c *gin.Context) {
	d, ok := s.lookup(c)
	if !ok {
		return
	}
	if err := s.ix.Delete([]string{d.ID}); err != nil {
		fail(c, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	c.JSON(http.StatusOK, gin.H{"deleted": d.ID, "images": s.ix.Count()})
}
