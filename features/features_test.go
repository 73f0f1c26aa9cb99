package features

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLayout(t *testing.T) {
	if Dim != 297 || ColorOffset != 0 || LBPOffset != 81 || GaborOffset != 140 || EdgeOffset != 260 ||
		EdgeOffset+EdgeDim != Dim {
		t.Fatalf("layout: Dim %d, offsets %d %d %d %d", Dim, ColorOffset, LBPOffset, GaborOffset, EdgeOffset)
	}
	img := noise(50, 40, 3)
	v := Visual(img)
	checkVec(t, "color", v[ColorOffset:LBPOffset], ColorMoments(img), 0)
	checkVec(t, "lbp", v[LBPOffset:GaborOffset], LBP(img), 0)
	checkVec(t, "gabor", v[GaborOffset:EdgeOffset], Gabor(img), 0)
	checkVec(t, "edge", v[EdgeOffset:], EdgeHistogram(img), 0)
}

// checkVisual checks the invariants of a visual vector.
func checkVisual(t *testing.T, name string, v []float64, w, h int) {
	t.Helper()
	if len(v) != Dim {
		t.Fatalf("%s: length %d, want %d", name, len(v), Dim)
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("%s: v[%d] = %v", name, i, x)
		}
	}
	for i := ColorOffset; i < LBPOffset; i += 3 {
		if v[i] < 0 || v[i] > 1+1e-6 || v[i+1] < 0 || v[i+1] > 0.5+1e-6 {
			t.Errorf("%s: colour moments %v out of range", name, v[i:i+3])
		}
	}
	lbpSum := 1.0
	if w < 3 || h < 3 {
		lbpSum = 0
	}
	if s := sum(v[LBPOffset:GaborOffset]); !near(s, lbpSum, 1e-9) {
		t.Errorf("%s: LBP sums to %v, want %v", name, s, lbpSum)
	}
	if s := sum(v[EdgeOffset:]); !near(s, 1, 1e-9) {
		t.Errorf("%s: edge histogram sums to %v", name, s)
	}
	for i := GaborOffset; i < EdgeOffset; i += 3 {
		if v[i] < 0 || v[i+1] < 0 {
			t.Errorf("%s: Gabor mean/std %v negative", name, v[i:i+2])
		}
	}
}

func TestVisualInvariants(t *testing.T) {
	sizes := [][2]int{{1, 1}, {2, 2}, {3, 3}, {3, 200}, {200, 3}, {1000, 2}, {2, 1000}, {37, 53}, {64, 64}, {130, 70}}
	for i, s := range sizes {
		w, h := s[0], s[1]
		rgba := noise(w, h, uint64(i))
		gray := image.NewGray(image.Rect(0, 0, w, h))
		copy(gray.Pix, rgba.Pix)
		ycc := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
		copy(ycc.Y, rgba.Pix)
		copy(ycc.Cb, rgba.Pix[len(rgba.Pix)/2:])
		pal := image.NewPaletted(image.Rect(0, 0, w, h), palette.Plan9)
		copy(pal.Pix, rgba.Pix)
		// A sub-image whose bounds do not start at the origin.
		big := noise(w+5, h+7, uint64(i))
		sub := big.SubImage(image.Rect(5, 7, w+5, h+7))
		for name, img := range map[string]image.Image{"nrgba": rgba, "gray": gray, "ycbcr": ycc, "paletted": pal, "sub": sub} {
			checkVisual(t, fmt.Sprintf("%s %dx%d", name, w, h), Visual(img), w, h)
		}
	}
	// A sub-image equals the same pixels copied to the origin.
	big := noise(40, 30, 9)
	sub := big.SubImage(image.Rect(5, 7, 30, 27))
	cp := image.NewNRGBA(image.Rect(0, 0, 25, 20))
	for y := range 20 {
		for x := range 25 {
			cp.Set(x, y, big.At(x+5, y+7))
		}
	}
	checkVec(t, "sub-image", Visual(sub), Visual(cp), 0)
	if v := Visual(image.NewRGBA(image.Rect(0, 0, 0, 5))); len(v) != Dim || sum(v) != 0 {
		t.Errorf("empty image: %v", v)
	}
}

// Images above maxWorkPixels are area-averaged. 4096x2048 is 4 times the
// limit, so it is halved exactly (2x2 box average): the step edge at
// x = 2048 lands at x = 1024 of a 2048x1024 image, one edge pixel per row.
func TestVisualLargeImage(t *testing.T) {
	if testing.Short() {
		t.Skip("large image")
	}
	const w, h = 4096, 2048
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := w / 2; x < w; x++ {
			img.Pix[y*w+x] = 255
		}
	}
	r := newRaster(img)
	if r.w != w/2 || r.h != h/2 {
		t.Fatalf("working size %dx%d, want %dx%d", r.w, r.h, w/2, h/2)
	}
	v := Visual(img)
	checkVisual(t, "large", v, w, h)
	want := make([]float64, EdgeDim)
	want[0] = 1.0 / (w / 2)
	want[36] = 1 - want[0]
	checkVec(t, "large step", v[EdgeOffset:], want, 1e-12)
	// Extreme aspect ratio: 1 x 3M keeps full width, height cut to the limit.
	thin := image.NewGray(image.Rect(0, 0, 1, 3_000_000))
	if r := newRaster(thin); r.w != 1 || r.h != maxWorkPixels {
		t.Errorf("1x3000000 works at %dx%d, want 1x%d", r.w, r.h, maxWorkPixels)
	}
	// A non-integer factor keeps a flat image flat.
	flatBig := image.NewRGBA(image.Rect(0, 0, 2500, 1300))
	for i := 0; i < len(flatBig.Pix); i += 4 {
		copy(flatBig.Pix[i:], []uint8{40, 80, 120, 255})
	}
	v = Visual(flatBig)
	for c, mean := range []float64{40.0 / 255, 80.0 / 255, 120.0 / 255} {
		if !near(v[c*3], mean, 1e-5) || v[c*3+1] > 1e-5 {
			t.Errorf("flat large image channel %d: %v, want mean %v std 0", c, v[c*3:c*3+3], mean)
		}
	}
	if v[Dim-1] != 1 {
		t.Errorf("flat large image has edges: non-edge bin %v", v[Dim-1])
	}
}

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// setPNGSize rewrites the size in a PNG's IHDR chunk and fixes its CRC.
func setPNGSize(data []byte, w, h uint32) []byte {
	d := append([]byte(nil), data...)
	binary.BigEndian.PutUint32(d[16:], w)
	binary.BigEndian.PutUint32(d[20:], h)
	binary.BigEndian.PutUint32(d[29:], crc32.ChecksumIEEE(d[12:29]))
	return d
}

func TestDecodeErrors(t *testing.T) {
	good := encodePNG(t, noise(32, 32, 1))
	corrupt := append([]byte(nil), good...)
	for i := 60; i < 80; i++ {
		corrupt[i] ^= 0xff
	}
	var gifData bytes.Buffer
	if err := gif.Encode(&gifData, flat(2, 2, color.White), nil); err != nil {
		t.Fatal(err)
	}
	zeroGIF := append([]byte(nil), gifData.Bytes()...)
	zeroGIF[6], zeroGIF[7] = 0, 0 // logical screen width 0
	random := make([]byte, 500)
	for i := range random {
		random[i] = byte(i*37 + 11)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty input"},
		{"random bytes", random, "unknown image format"},
		{"truncated png", good[:len(good)/2], "truncated or corrupt png"},
		{"truncated header", good[:20], "truncated png data (20 bytes)"},
		{"corrupt png", corrupt, "corrupt png"},
		{"too large", setPNGSize(good, 10000, 6000), "above the limit"},
		{"zero width png", setPNGSize(good, 0, 32), "corrupt png"},
		{"zero width gif", zeroGIF, "zero size"},
	} {
		img, err := Decode(bytes.NewReader(c.data))
		if err == nil || img != nil {
			t.Errorf("%s: Decode gave %v, %v; want an error", c.name, img, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not say %q", c.name, err, c.want)
		}
	}
	// I/O errors are reported as such, not as a corrupt image.
	boom := errors.New("connection reset")
	_, err := Decode(&failingReader{data: good[:100], err: boom})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "read image") {
		t.Errorf("failing reader: %v", err)
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestDecodeFormats(t *testing.T) {
	// Paletted PNG with a transparent entry: transparent pixels are white.
	pal := image.NewPaletted(image.Rect(0, 0, 30, 20), color.Palette{color.Transparent, color.RGBA{255, 0, 0, 255}})
	var jpg, gf bytes.Buffer
	src := flat(40, 30, color.RGBA{200, 100, 50, 255})
	if err := jpeg.Encode(&jpg, src, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&gf, src, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		data  []byte
		isPal bool
		mean  [3]float64 // colour of every cell
		tol   float64
	}{
		{"paletted png", encodePNG(t, pal), true, [3]float64{1, 1, 1}, 1e-6},
		{"jpeg", jpg.Bytes(), false, [3]float64{200.0 / 255, 100.0 / 255, 50.0 / 255}, 3.0 / 255},
		{"gif", gf.Bytes(), true, [3]float64{200.0 / 255, 100.0 / 255, 50.0 / 255}, 0.1},
	} {
		img, err := Decode(bytes.NewReader(c.data))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, ok := img.(*image.Paletted); ok != c.isPal {
			t.Errorf("%s decoded to %T", c.name, img)
		}
		b := img.Bounds()
		v := Visual(img)
		checkVisual(t, c.name, v, b.Dx(), b.Dy())
		for ch, m := range c.mean {
			if !near(v[ch*3], m, c.tol) {
				t.Errorf("%s: channel %d mean %v, want %v", c.name, ch, v[ch*3], m)
			}
		}
	}
}

func TestFromFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.png")
	img := step(40, 30)
	if err := os.WriteFile(good, encodePNG(t, img), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := FromFile(good)
	if err != nil {
		t.Fatal(err)
	}
	checkVec(t, "FromFile", v, Visual(img), 0)

	bad := filepath.Join(dir, "bad.jpg")
	if err := os.WriteFile(bad, []byte("not an image"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(dir, "missing.png")} {
		if _, err := FromFile(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("FromFile(%s): error %v does not name the path", path, err)
		}
	}
}

func benchmarkVisual(b *testing.B, img image.Image) {
	Visual(img) // build the Gabor bank outside the timing
	b.ReportAllocs()
	for b.Loop() {
		Visual(img)
	}
}

// Noise is the worst case: edges and LBP branches everywhere.
func BenchmarkVisual64(b *testing.B)        { benchmarkVisual(b, noise(64, 64, 1)) }
func BenchmarkVisual640x480(b *testing.B)   { benchmarkVisual(b, noise(640, 480, 1)) }
func BenchmarkVisualClipart(b *testing.B)   { benchmarkVisual(b, clipart(640, 480)) }
func BenchmarkVisualClipart64(b *testing.B) { benchmarkVisual(b, clipart(64, 64)) }

// clipart draws a few flat shapes on white.
func clipart(w, h int) *image.RGBA {
	return paint(w, h, func(x, y int) color.Color {
		fx, fy := float64(x)/float64(w), float64(y)/float64(h)
		switch {
		case (fx-0.3)*(fx-0.3)+(fy-0.4)*(fy-0.4) < 0.04:
			return color.RGBA{220, 30, 30, 255}
		case fx > 0.55 && fx < 0.9 && fy > 0.2 && fy < 0.7:
			return color.RGBA{30, 60, 200, 255}
		case fy > 0.8 && fx+fy < 1.6:
			return color.RGBA{40, 160, 40, 255}
		}
		return color.White
	})
}

// Visual is safe for concurrent use (the Gabor bank and buffers are shared).
func TestVisualConcurrent(t *testing.T) {
	imgs := []image.Image{noise(64, 64, 1), noise(100, 30, 2), clipart(80, 60), step(33, 47)}
	want := make([][]float64, len(imgs))
	for i, img := range imgs {
		want[i] = Visual(img)
	}
	var wg sync.WaitGroup
	got := make([][]float64, 4*len(imgs))
	for i := range got {
		wg.Go(func() { got[i] = Visual(imgs[i%len(imgs)]) })
	}
	wg.Wait()
	for i, v := range got {
		checkVec(t, "concurrent", v, want[i%len(imgs)], 0)
	}
}
