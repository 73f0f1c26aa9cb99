package features

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"strings"
	"testing"
)

// FuzzDecode: Decode never panics; it returns a non-empty image within
// MaxPixels or an error of this package; a decoded image survives a PNG
// round trip (to 8-bit rounding) and, when small, has a finite visual
// vector. Seeds: testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := Decode(bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "features: ") {
				t.Fatalf("error %q is not the package's", err)
			}
			return
		}
		b := img.Bounds()
		if b.Empty() || int64(b.Dx())*int64(b.Dy()) > MaxPixels {
			t.Fatalf("decoded bounds %v", b)
		}
		// Larger images cost the fuzzer time and add no code paths.
		if b.Dx()*b.Dy() > 1<<16 {
			return
		}
		for i, x := range Visual(img) {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("visual[%d] = %v", i, x)
			}
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatalf("png.Encode: %v", err)
		}
		again, err := Decode(&buf)
		if err != nil {
			t.Fatalf("the PNG of a decoded image does not decode: %v", err)
		}
		comparePixels(t, img, again)
	})
}

// comparePixels fails unless a and b have the same bounds and colours, to
// within the rounding of a premultiplied 16-bit colour to 8-bit NRGBA.
func comparePixels(t *testing.T, a, b image.Image) {
	if a.Bounds() != b.Bounds() {
		t.Fatalf("bounds %v became %v", a.Bounds(), b.Bounds())
	}
	const tol = 2 * 0x101
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			for _, d := range [][2]uint32{{r1, r2}, {g1, g2}, {b1, b2}, {a1, a2}} {
				if max(d[0], d[1])-min(d[0], d[1]) > tol {
					t.Fatalf("pixel (%d, %d): %v became %v", x, y, a.At(x, y), b.At(x, y))
				}
			}
		}
	}
}
