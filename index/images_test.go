package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"image"
	"image/png"
	"testing"
)

func TestPrepareLimits(t *testing.T) {
	var small bytes.Buffer
	if err := png.Encode(&small, image.NewGray(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, id string
		raw      []byte
		want     error
	}{
		{"over MaxImageBytes", "a", append(small.Bytes(), make([]byte, MaxImageBytes)...), ErrTooLarge},
		{"not an image", "a", []byte("not an image at all"), ErrBadImage},
		{"empty", "a", nil, ErrBadImage},
		{"bad id", "..", small.Bytes(), ErrInvalid},
	}
	for _, c := range cases {
		if _, err := NewImages(nil).Prepare(c.id, c.raw); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	up, err := NewImages(nil).Prepare("a", small.Bytes())
	if err != nil || len(up.Features) != 297 || up.hash != hexSHA256(small.Bytes()) {
		t.Errorf("a small PNG: %+v %v", up, err)
	}
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
