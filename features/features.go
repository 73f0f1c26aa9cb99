// Package features computes the visual and textual descriptors of an image:
// the 297-d visual vector of Zhuang's thesis section 6.4.3 and normalised
// tf-idf tag vectors.
//
// The visual vector is the concatenation of four blocks, each also available
// on its own:
//
//	offset  length  block
//	     0      81  ColorMoments: 3x3 grid colour moments
//	    81      59  LBP: uniform LBP(8,1) histogram
//	   140     120  Gabor: 5 scales x 8 orientations, 3 moments each
//	   260      37  EdgeHistogram: Canny edge orientation histogram
//
// Pixels are composited onto white (the corpus is clipart on white) and
// scaled to [0,1]; grey is ITU-R 601 luma. Images above 2^21 pixels (about
// 2 megapixels, 1920x1080 still fits) are first area-averaged down to that
// size, keeping the aspect ratio, so a 50-megapixel upload costs the same
// as a 2-megapixel one.
package features

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"io"
	"os"

	// Register the decoders Decode accepts.
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"
)

// Dim is the length of the visual vector returned by Visual.
const Dim = ColorDim + LBPDim + GaborDim + EdgeDim

// Offsets of the blocks in the visual vector.
const (
	ColorOffset = 0
	LBPOffset   = ColorOffset + ColorDim
	GaborOffset = LBPOffset + LBPDim
	EdgeOffset  = GaborOffset + GaborDim
)

// MaxPixels is the largest image (width x height) Decode accepts.
const MaxPixels = 50_000_000

// Visual returns the 297-d visual vector of img. An image with an empty
// bounds rectangle gives the zero vector.
func Visual(img image.Image) []float64 {
	v := make([]float64, Dim)
	r := newRaster(img)
	if r.w == 0 || r.h == 0 {
		return v
	}
	colorMoments(r, v[ColorOffset:LBPOffset])
	lbp(r, v[LBPOffset:GaborOffset])
	gabor(r, v[GaborOffset:EdgeOffset])
	edgeHistogram(r, v[EdgeOffset:Dim])
	return v
}

// FromFile decodes the PNG, JPEG or GIF image at path and returns its visual
// vector.
func FromFile(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("features: %w", err)
	}
	defer f.Close()
	img, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return Visual(img), nil
}

// ErrTooManyPixels is wrapped by the error of an image above the pixel
// limit, so that callers can answer "too large" rather than "corrupt".
var ErrTooManyPixels = errors.New("features: too many pixels")

// Decode decodes a PNG, JPEG or GIF image (the first frame of a GIF). It
// reads the header first and refuses empty images and images of more than
// MaxPixels pixels before allocating the pixel buffer.
func Decode(r io.Reader) (image.Image, error) {
	img, _, err := DecodeLimit(r, MaxPixels)
	return img, err
}

// DecodeLimit is Decode with another pixel limit; it also returns the
// format ("png", "jpeg" or "gif").
func DecodeLimit(r io.Reader, maxPixels int64) (image.Image, string, error) {
	src := &errReader{r: r}
	// DecodeConfig may read ahead; keep what it consumed to replay it.
	var head bytes.Buffer
	cfg, format, err := image.DecodeConfig(io.TeeReader(src, &head))
	switch {
	case src.err != nil:
		return nil, format, fmt.Errorf("features: read image: %w", src.err)
	case err != nil && head.Len() == 0:
		return nil, format, errors.New("features: empty input, no image data")
	case errors.Is(err, image.ErrFormat):
		return nil, format, errors.New("features: unknown image format (want PNG, JPEG or GIF)")
	case err != nil:
		return nil, format, src.decodeErr(format, err)
	case cfg.Width <= 0 || cfg.Height <= 0:
		return nil, format, fmt.Errorf("features: %s image has zero size (%dx%d)", format, cfg.Width, cfg.Height)
	case int64(cfg.Width)*int64(cfg.Height) > maxPixels:
		return nil, format, fmt.Errorf("%w: %s image is %dx%d, above the limit of %d pixels",
			ErrTooManyPixels, format, cfg.Width, cfg.Height, maxPixels)
	}
	img, _, err := image.Decode(io.MultiReader(&head, src))
	switch {
	case src.err != nil:
		return nil, format, fmt.Errorf("features: read image: %w", src.err)
	case err != nil:
		return nil, format, src.decodeErr(format, err)
	case img.Bounds().Empty():
		return nil, format, fmt.Errorf("features: %s image has zero size", format)
	}
	return img, format, nil
}

// decodeErr says why a decoder failed. Decoders do not all report a short
// input as io.ErrUnexpectedEOF (PNG says "not enough pixel data"), so a
// failure after the whole input was read is reported as possibly truncated.
func (e *errReader) decodeErr(format string, err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("features: truncated %s data (%d bytes): %w", format, e.n, err)
	case e.eof:
		return fmt.Errorf("features: truncated or corrupt %s data (all %d bytes read): %w", format, e.n, err)
	}
	return fmt.Errorf("features: corrupt %s data: %w", format, err)
}

// errReader counts the input and remembers whether it reached EOF and the
// first other read error, so that I/O failures are not reported as corrupt
// images.
type errReader struct {
	r   io.Reader
	n   int64
	eof bool
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.n += int64(n)
	switch {
	case err == io.EOF:
		e.eof = true
	case err != nil && e.err == nil:
		e.err = err
	}
	return n, err
}
