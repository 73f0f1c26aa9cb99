package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/index/blob"
	"github.com/kernelrank/kernelrank/index/replica"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// encodeImage returns a w x h image of colour c, encoded as format (png or
// jpeg).
func encodeImage(t *testing.T, format string, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	var err error
	if format == "jpeg" {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	} else {
		err = png.Encode(&buf, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// upload is the JSON of one image of a POST /v1/images.
func upload(id string, raw []byte) string {
	return `{"id":"` + id + `","tags":["cat","sofa"],"image_base64":"` + base64.StdEncoding.EncodeToString(raw) + `"}`
}

// dirFiles maps every file under dir (relative path) to its content.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func mustPost(t *testing.T, s *Server, body string) {
	t.Helper()
	if rec, _ := do(t, s, "POST", "/v1/images", []byte(body), token); rec.Code != 200 {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
}

// thumbColour is the colour at the centre of id's thumbnail.
func thumbColour(t *testing.T, s *Server, id string) color.RGBA {
	t.Helper()
	rec, _ := do(t, s, "GET", "/v1/images/"+id+"/thumbnail", nil, "")
	if rec.Code != 200 {
		t.Fatalf("thumbnail of %s: %d %s", id, rec.Code, rec.Body)
	}
	img, _, err := image.Decode(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	return color.RGBAModel.Convert(img.At(b.Dx()/2, b.Dy()/2)).(color.RGBA)
}

// A rejected request writes no file and changes none.
func TestRejectedUploadWritesNothing(t *testing.T) {
	s, ix := newTestServer(t)
	red := color.RGBA{200, 0, 0, 255}
	mustPost(t, s, upload("kr-red", encodeImage(t, "png", 40, 30, red)))
	_, before := do(t, s, "GET", "/v1/images/kr-red", nil, "")
	files := dirFiles(t, s.cfg.ImageDir)
	blue := encodeImage(t, "png", 40, 30, color.RGBA{0, 0, 200, 255})
	bad := map[string]string{
		"an item not an image": "[" + upload("kr-red", blue) + `,{"id":"kr-bad","tags":["x"],"image_base64":"` +
			base64.StdEncoding.EncodeToString([]byte("not an image")) + `"}]`,
		"an item the index refuses": "[" + upload("kr-red", blue) + `,{"id":"kr-dim","tags":["x"],"features":[1,2]}]`,
		"a bad id after an image":   "[" + upload("kr-new", blue) + "," + upload("..", blue) + "]",
	}
	for name, body := range bad {
		if rec, _ := do(t, s, "POST", "/v1/images", []byte(body), token); rec.Code != 400 {
			t.Errorf("%s: status %d, want 400 (%s)", name, rec.Code, rec.Body)
		}
		if got := dirFiles(t, s.cfg.ImageDir); !maps.Equal(got, files) {
			t.Errorf("%s: the image directory changed: %d files (was %d) or their content", name, len(got), len(files))
		}
	}
	if _, after := do(t, s, "GET", "/v1/images/kr-red", nil, ""); !jsonEqual(before, after) {
		t.Errorf("kr-red changed: %v, was %v", after, before)
	}
	if c := thumbColour(t, s, "kr-red"); c != red {
		t.Errorf("kr-red's thumbnail is %v, want %v", c, red)
	}
	if ix.Count() != 31 {
		t.Errorf("%d images, want 31", ix.Count())
	}
}

// A server started without an image directory refuses an upload with 501
// and adds nothing of the batch; docs without image_base64 still go in.
func TestUploadWithoutImageDir(t *testing.T) {
	_, ix := newTestServer(t)
	s := New(ix, Config{AdminToken: token, MaxBodyBytes: 1 << 20}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	png := encodeImage(t, "png", 40, 30, color.RGBA{200, 0, 0, 255})
	body := `[{"id":"kr-plain","tags":["x"]},` + upload("kr-up", png) + `]`
	rec, out := do(t, s, "POST", "/v1/images", []byte(body), token)
	if e, _ := out["error"].(map[string]any); rec.Code != 501 || e["code"] != "uploads_disabled" {
		t.Fatalf("upload without an image directory: status %d, %v; want 501 uploads_disabled", rec.Code, out)
	}
	if ix.Count() != 30 {
		t.Fatalf("%d images after the refused batch, want 30", ix.Count())
	}
	if rec, _ := do(t, s, "POST", "/v1/images", []byte(`{"id":"kr-plain","tags":["x"]}`), token); rec.Code != 200 || ix.Count() != 31 {
		t.Fatalf("a doc without an image: status %d, %d images; want 200, 31", rec.Code, ix.Count())
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// Replacing or deleting an image removes its blobs; a server started over a
// directory with what a crash leaves (old temporary files, blobs of no
// indexed doc) removes those, and keeps what is not its own.
func TestImageFilesFollowTheIndex(t *testing.T) {
	s, _ := newTestServer(t)
	dir := s.cfg.ImageDir
	mustPost(t, s, upload("a", encodeImage(t, "png", 40, 30, color.White)))
	mustPost(t, s, upload("b", encodeImage(t, "jpeg", 40, 30, color.White)))
	mustPost(t, s, upload("a", encodeImage(t, "jpeg", 40, 30, color.Black))) // replaces a's png
	kept := dirFiles(t, dir)
	if len(kept) != 4 {
		t.Fatalf("files %v, want a's and b's image and thumbnail", slices.Sorted(maps.Keys(kept)))
	}
	gone := blob.Ref([]byte("an image a crash wrote before the index took it"))
	for _, name := range []string{gone, blob.ThumbName(gone), ".tmp-123", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A crashed writer's temporary file, old enough not to be a live one's.
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, ".tmp-123"), old, old); err != nil {
		t.Fatal(err)
	}
	s2 := New(s.ix, s.cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	after := dirFiles(t, dir)
	delete(after, "notes.txt")
	if !maps.Equal(after, kept) {
		t.Errorf("after the start-up sweep: %v, want %v and notes.txt", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(kept)))
	}
	for _, id := range []string{"a", "b"} {
		if rec, _ := do(t, s2, "DELETE", "/v1/images/"+id, nil, token); rec.Code != 200 {
			t.Fatalf("DELETE %s: %d", id, rec.Code)
		}
	}
	if left := dirFiles(t, dir); len(left) != 1 {
		t.Errorf("after DELETE: %v, want only notes.txt", slices.Sorted(maps.Keys(left)))
	}
}

// Ids follow one grammar whatever the form, and no answer shows a server
// path.
func TestIDGrammar(t *testing.T) {
	s, ix := newTestServer(t)
	img := encodeImage(t, "png", 20, 20, color.White)
	features := `,"tags":["cat"],"features":[` + strings.TrimSuffix(strings.Repeat("0,", 297), ",") + `]}`
	for _, id := range []string{".", "..", ".hidden", "a b", "é", "a%2Fb", strings.Repeat("x", 129), strings.Repeat("x", 256)} {
		for form, body := range map[string]string{"image": upload(id, img), "features": `{"id":"` + id + `"` + features} {
			rec, _ := do(t, s, "POST", "/v1/images", []byte(body), token)
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), "id") {
				t.Errorf("id %.12q with %s: %d %s, want 400 about the id", id, form, rec.Code, rec.Body)
			}
			if strings.Contains(rec.Body.String(), s.cfg.ImageDir) {
				t.Errorf("id %.12q with %s: the answer shows a server path: %s", id, form, rec.Body)
			}
		}
	}
	if ix.Count() != 30 {
		t.Fatalf("bad ids changed the index: %d images", ix.Count())
	}
	long := strings.Repeat("x", index.MaxIDLen-4) + ".-_9"
	mustPost(t, s, upload(long, img))
	if c := thumbColour(t, s, long); c != (color.RGBA{255, 255, 255, 255}) {
		t.Errorf("thumbnail of the longest id: %v", c)
	}
}

// GET /v1/images/{id} shows the image's metadata, its thumbnail URL and its
// features, never a path.
func TestGetImage(t *testing.T) {
	s, _ := newTestServer(t)
	raw := encodeImage(t, "jpeg", 300, 200, color.RGBA{10, 120, 10, 255})
	mustPost(t, s, upload("leaf", raw))
	rec, body := do(t, s, "GET", "/v1/images/leaf", nil, "")
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), s.cfg.ImageDir) || strings.Contains(rec.Body.String(), `"/tmp`) {
		t.Errorf("the answer shows a server path: %s", rec.Body)
	}
	want := map[string]any{"format": "jpeg", "width": 300.0, "height": 200.0, "bytes": float64(len(raw))}
	if !jsonEqual(body["image"], want) {
		t.Errorf("image %v, want %v", body["image"], want)
	}
	if body["thumbnail"] != "/v1/images/leaf/thumbnail" || !jsonEqual(body["tags"], []string{"cat", "sofa"}) {
		t.Errorf("thumbnail %v, tags %v", body["thumbnail"], body["tags"])
	}
	if f, _ := body["features"].([]any); len(f) != 297 || body["feature_dim"] != 297.0 {
		t.Errorf("%d features, feature_dim %v; want 297", len(f), body["feature_dim"])
	}
	// A doc with features and no image.
	_, body = do(t, s, "GET", "/v1/images/img00", nil, "")
	if f, _ := body["features"].([]any); len(f) != 297 || body["image"] != nil || body["thumbnail"] != nil {
		t.Errorf("img00: %v", body)
	}
}

// Uploads are kept as sent; the thumbnail is made once (it is served with
// the original gone), carries an ETag that answers 304, and images over the
// pixel limit are refused from their header.
func TestThumbnailsMadeOnce(t *testing.T) {
	s, _ := newTestServer(t)
	raw := encodeImage(t, "jpeg", 600, 300, color.RGBA{0, 0, 250, 255})
	mustPost(t, s, upload("sky", raw))
	original := blob.Ref(raw)
	if dirFiles(t, s.cfg.ImageDir)[original] != string(raw) {
		t.Fatalf("no file named by their SHA-256 holds the bytes sent (files %v)", slices.Sorted(maps.Keys(dirFiles(t, s.cfg.ImageDir))))
	}
	if err := os.Remove(filepath.Join(s.cfg.ImageDir, original)); err != nil {
		t.Fatal(err)
	}
	rec, _ := do(t, s, "GET", "/v1/images/sky/thumbnail", nil, "")
	etag := rec.Header().Get("ETag")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "image/jpeg" || etag == "" ||
		!strings.Contains(rec.Header().Get("Cache-Control"), "max-age") {
		t.Fatalf("thumbnail: %d %v", rec.Code, rec.Header())
	}
	if cfg, err := jpeg.DecodeConfig(rec.Body); err != nil || cfg.Width != index.ThumbnailEdge || cfg.Height != index.ThumbnailEdge/2 {
		t.Errorf("thumbnail %+v %v, want %dx%d", cfg, err, index.ThumbnailEdge, index.ThumbnailEdge/2)
	}
	r := httptest.NewRequest("GET", "/v1/images/sky/thumbnail", nil)
	r.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	if s.Handler().ServeHTTP(rec, r); rec.Code != 304 || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match: %d with %d bytes, want 304", rec.Code, rec.Body.Len())
	}

	big := image.NewGray(image.Rect(0, 0, 4100, 4100)) // 16.8 megapixels
	var buf bytes.Buffer
	if err := png.Encode(&buf, big); err != nil {
		t.Fatal(err)
	}
	rec, body := do(t, s, "POST", "/v1/images", []byte(upload("big", buf.Bytes())), token)
	if rec.Code != 413 || !strings.Contains(rec.Body.String(), "4100x4100") {
		t.Errorf("a 16.8-megapixel image: %d %v, want 413", rec.Code, body)
	}
}

// An image ingested from elsewhere gets its thumbnail on first use, kept in
// the image store under the image's hash; re-ingested with other bytes, it
// gets a new one, and the next start drops the old.
func TestThumbnailOfIngestedImage(t *testing.T) {
	s, ix := newTestServer(t)
	path := filepath.Join(t.TempDir(), "corpus.png")
	ingest := func(c color.Color) {
		raw := encodeImage(t, "png", 500, 100, c)
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		d := index.Doc{ID: "ingested", Tags: []string{"cat"}, Image: path, ImageSHA256: blob.Ref(raw), Features: make([]float32, 297)}
		if err := ix.Add([]index.Doc{d}); err != nil {
			t.Fatal(err)
		}
	}
	ingest(color.White)
	get := func() (string, color.RGBA) {
		rec, _ := do(t, s, "GET", "/v1/images/ingested/thumbnail", nil, "")
		return rec.Header().Get("ETag"), thumbColour(t, s, "ingested")
	}
	etag1, c := get()
	if c != (color.RGBA{255, 255, 255, 255}) || len(dirFiles(t, s.cfg.ImageDir)) != 1 {
		t.Fatalf("first thumbnail: %v, files %v", c, dirFiles(t, s.cfg.ImageDir))
	}
	if etag, _ := get(); etag != etag1 {
		t.Errorf("second request: ETag %s, want %s", etag, etag1)
	}
	ingest(color.Black)
	if etag, c := get(); etag == etag1 || c != (color.RGBA{0, 0, 0, 255}) {
		t.Errorf("after re-ingesting other bytes: ETag %s (was %s), colour %v", etag, etag1, c)
	}
	New(ix, s.cfg, slog.New(slog.NewTextHandler(io.Discard, nil))) // sweeps the stale thumbnail
	if n := len(dirFiles(t, s.cfg.ImageDir)); n != 1 {
		t.Errorf("%d thumbnails kept, want the current one", n)
	}
}

// Concurrent first requests for a thumbnail share one build and leave one
// file.
func TestConcurrentThumbnailBuilds(t *testing.T) {
	s, ix := newTestServer(t)
	path := filepath.Join(t.TempDir(), "corpus.jpg")
	raw := encodeImage(t, "jpeg", 1200, 900, color.RGBA{90, 30, 30, 255})
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ix.Add([]index.Doc{{ID: "photo", Tags: []string{"cat"}, Image: path, ImageSHA256: blob.Ref(raw)}}); err != nil {
		t.Fatal(err)
	}
	bodies := make([][]byte, 8)
	done := make(chan int)
	for i := range bodies {
		go func() {
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/images/photo/thumbnail", nil))
			if rec.Code == 200 {
				bodies[i] = rec.Body.Bytes()
			}
			done <- i
		}()
	}
	for range bodies {
		<-done
	}
	for i, b := range bodies {
		if len(b) == 0 || !bytes.Equal(b, bodies[0]) {
			t.Fatalf("request %d: %d bytes, not the first's %d", i, len(b), len(bodies[0]))
		}
	}
	if files := dirFiles(t, s.cfg.ImageDir); len(files) != 1 {
		t.Errorf("files %v, want one thumbnail", slices.Sorted(maps.Keys(files)))
	}
}

// GET /v1/status shows the corpus, without a token: its version, its size
// and the image store; a server without a change log shows no replica.
func TestStatus(t *testing.T) {
	s, ix := newTestServer(t)
	raw := encodeImage(t, "png", 40, 30, color.White)
	mustPost(t, s, upload("a", raw))
	rec, body := do(t, s, "GET", "/v1/status", nil, "")
	corpus, _ := body["corpus"].(map[string]any)
	blobs, _ := corpus["blobs"].(map[string]any)
	if rec.Code != 200 || body["status"] != "ok" || corpus["version"] != ix.Version() || corpus["images"] != 31.0 || corpus["replica"] != nil {
		t.Fatalf("status %d %v", rec.Code, body)
	}
	// The upload's original and thumbnail.
	if blobs["backend"] != "dir" || blobs["count"] != 2.0 || blobs["bytes"].(float64) <= float64(len(raw)) {
		t.Errorf("blobs %v", blobs)
	}
	if _, ready := do(t, s, "GET", "/readyz", nil, ""); !jsonEqual(ready["corpus"], corpus) {
		t.Errorf("/readyz shows corpus %v, /v1/status %v", ready["corpus"], corpus)
	}
}

// A Redis blob store's limits: an image over its cap per blob is 413, one
// past its budget 507, and neither leaves a doc or a blob behind.
func TestBlobStoreLimits(t *testing.T) {
	o, err := cache.ParseRedisURL(redistest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewUniversalClient(o)
	defer rc.Close()
	s, ix := newTestServer(t)
	small := encodeImage(t, "png", 40, 30, color.RGBA{1, 2, 3, 255})
	big := encodeImage(t, "png", 400, 300, color.RGBA{1, 2, 3, 255})
	store := blob.NewRedis(rc, redistest.Prefix(t), int64(len(small))+10, 3*int64(len(small)))
	defer store.Walk(context.Background(), func(name string) error { return store.Delete(context.Background(), name) })
	cfg := s.cfg
	cfg.Images = index.NewImages(store)
	s = New(ix, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if rec, _ := do(t, s, "POST", "/v1/images", []byte(upload("big", big)), token); rec.Code != 413 {
		t.Fatalf("over the cap per blob: %d %s, want 413", rec.Code, rec.Body)
	}
	// The original fits, its thumbnail is about as large: the second
	// upload's blobs pass the budget.
	mustPost(t, s, upload("one", small))
	other := encodeImage(t, "png", 40, 30, color.RGBA{9, 9, 9, 255})
	rec, body := do(t, s, "POST", "/v1/images", []byte(upload("two", other)), token)
	if e, _ := body["error"].(map[string]any); rec.Code != 507 || e["code"] != "storage_full" {
		t.Fatalf("past the budget: %d %v, want 507 storage_full", rec.Code, body)
	}
	for _, id := range []string{"big", "two"} {
		if _, found, _ := ix.Get(id); found {
			t.Errorf("refused upload %s is in the index", id)
		}
	}
	if info, _ := store.Info(context.Background()); info.Count != 2 {
		t.Errorf("blob store %+v, want only one's original and thumbnail", info)
	}
}

// A replica further behind its corpus log than Config.MaxLagEntries says
// "degraded" in /v1/status and /readyz, and is "ok" again once it has
// caught up.
func TestStatusDegradedWhenBehind(t *testing.T) {
	o, err := cache.ParseRedisURL(redistest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewUniversalClient(o)
	defer rc.Close()
	l := replica.NewLog(rc, redistest.Prefix(t))
	defer l.Drop(context.Background())
	_, ix := newTestServer(t)
	f, err := replica.NewFollower(l, ix, replica.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(ix, Config{Replica: f, Writer: replica.Writer{F: f}, MaxLagEntries: 2}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for i := range 3 {
		if _, err := l.Append(t.Context(), replica.Entry{Delete: []string{fmt.Sprint("none-", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	rec, body := do(t, s, "GET", "/v1/status", nil, "")
	corpus, _ := body["corpus"].(map[string]any)
	rep, _ := corpus["replica"].(map[string]any)
	if rec.Code != 200 || body["status"] != "degraded" || rep["lag_entries"] != 3.0 || rep["lag_seconds"].(float64) < 0 {
		t.Fatalf("3 entries behind, at most 2 allowed: %d %v", rec.Code, body)
	}
	if _, ready := do(t, s, "GET", "/readyz", nil, ""); ready["status"] != "degraded" {
		t.Fatalf("/readyz: %v", ready)
	}
	if err := f.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, body := do(t, s, "GET", "/v1/status", nil, ""); body["status"] != "ok" {
		t.Fatalf("caught up: %v", body)
	}
}
