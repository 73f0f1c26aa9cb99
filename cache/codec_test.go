package cache

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"slices"
	"testing"
)

// sameValue reports whether a and b hold the same kind, shape and
// elements, bit for bit (NaN equals NaN; nil equals empty).
func sameValue(a, b Value) bool {
	f32 := func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }
	f64 := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	return a.Kind == b.Kind && slices.Equal(a.Shape, b.Shape) && slices.Equal(a.Bytes, b.Bytes) &&
		slices.EqualFunc(a.F32, b.F32, f32) && slices.EqualFunc(a.F64, b.F64, f64) && slices.Equal(a.I32, b.I32)
}

func TestCodecRoundTrip(t *testing.T) {
	nan32, nan64 := float32(math.NaN()), math.NaN()
	for name, v := range map[string]Value{
		"bytes":          {Kind: Bytes, Shape: []int{4}, Bytes: []byte{0, 1, 0xfe, 0xff}},
		"bytes empty":    {Kind: Bytes, Shape: []int{0}},
		"float32 scalar": {Kind: Float32, Shape: []int{}, F32: []float32{-1.5}},
		"float32 3-D":    {Kind: Float32, Shape: []int{2, 3, 2}, F32: []float32{0, 1, -1, 1e-45, math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), nan32, float32(math.Copysign(0, -1)), 1.0 / 3, 7}},
		"float32 empty":  {Kind: Float32, Shape: []int{3, 0, 2}},
		"float64 2-D":    {Kind: Float64, Shape: []int{2, 2}, F64: []float64{math.Pi, -math.SmallestNonzeroFloat64, nan64, math.Inf(-1)}},
		"float64 empty":  {Kind: Float64, Shape: []int{0}},
		"int32":          {Kind: Int32, Shape: []int{5}, I32: []int32{0, -1, 1, math.MaxInt32, math.MinInt32}},
		"int32 empty":    {Kind: Int32, Shape: []int{0, 0}},
	} {
		b, err := Encode(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The layout: 6 header bytes, 4 per dimension, the payload length,
		// the payload, the checksum.
		if want := 6 + 4*len(v.Shape) + 4 + v.len()*v.Kind.size() + 4; len(b) != want {
			t.Errorf("%s: %d bytes, want %d", name, len(b), want)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !sameValue(got, v) {
			t.Errorf("%s: decoded %+v, want %+v", name, got, v)
		}
	}
}

// TestCodecLayout pins the bytes of a small value, computed by hand.
func TestCodecLayout(t *testing.T) {
	b, err := Encode(Value{Kind: Int32, Shape: []int{1, 2}, I32: []int32{1, -2}})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{'K', 'R', 'V', FormatVersion, 4, 2, 1, 0, 0, 0, 2, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff}
	want = binary.LittleEndian.AppendUint32(want, crc32.Checksum(want, crc32.MakeTable(crc32.Castagnoli)))
	if !slices.Equal(b, want) {
		t.Errorf("encoded % x\nwant    % x", b, want)
	}
}

func TestCodecCorrupt(t *testing.T) {
	b, err := Encode(Value{Kind: Float32, Shape: []int{2, 2}, F32: []float32{1, 2, 3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := Decode(b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("truncated to %d of %d bytes: %v, want ErrCorrupt", n, len(b), err)
		}
	}
	if _, err := Decode(append(slices.Clone(b), 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("one byte too many: %v, want ErrCorrupt", err)
	}
	for i := range b {
		for bit := range 8 {
			c := slices.Clone(b)
			c[i] ^= 1 << bit
			if _, err := Decode(c); !errors.Is(err, ErrCorrupt) {
				t.Errorf("bit %d of byte %d flipped: %v, want ErrCorrupt", bit, i, err)
			}
		}
	}
}

// reseal replaces the checksum of an encoded value after an edit, so that
// it is the edit that Decode must reject.
func reseal(b []byte) []byte {
	body := b[:len(b)-4]
	return binary.LittleEndian.AppendUint32(slices.Clone(body), crc32.Checksum(body, castagnoli))
}

func TestCodecRejectsWellSealed(t *testing.T) {
	b, err := Encode(Value{Kind: Int32, Shape: []int{2}, I32: []int32{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	edit := func(i int, x byte) []byte {
		c := slices.Clone(b)
		c[i] = x
		return reseal(c)
	}
	sixteen := func(d uint32) []byte { // 4 dimensions of d, no payload
		c := []byte{'K', 'R', 'V', FormatVersion, byte(Float64), 4}
		for range 4 {
			c = binary.LittleEndian.AppendUint32(c, d)
		}
		return reseal(binary.LittleEndian.AppendUint32(append(c, 0, 0, 0, 0), 0))
	}
	for name, c := range map[string][]byte{
		"another format version": edit(3, FormatVersion+1),
		"unknown kind":           edit(4, 9),
		"9 dimensions":           edit(5, 9),
		"shape of 3 elements":    edit(6, 3),
		"payload length":         edit(10, 4),
		// 65536^4 = 2^64 elements: an int product wraps to 0, the size of
		// the payload.
		"shape overflowing": sixteen(65536),
	} {
		if _, err := Decode(c); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	if v, err := Decode(sixteen(0)); err != nil || len(v.F64) != 0 || !slices.Equal(v.Shape, []int{0, 0, 0, 0}) {
		t.Errorf("4 dimensions of 0: %+v, %v", v, err)
	}
}

func TestEncodeErrors(t *testing.T) {
	for name, v := range map[string]Value{
		"shape larger than elements":  {Kind: Float32, Shape: []int{2, 3}, F32: make([]float32, 5)},
		"shape smaller than elements": {Kind: Float32, Shape: []int{2}, F32: make([]float32, 3)},
		"elements of another kind":    {Kind: Float64, Shape: []int{2}, F32: make([]float32, 2)},
		"no shape, no elements":       {Kind: Int32},
		"negative dimension":          {Kind: Bytes, Shape: []int{-1}},
		"dimension over 32 bits":      {Kind: Bytes, Shape: []int{1 << 32, 0}},
		"9 dimensions":                {Kind: Bytes, Shape: []int{1, 1, 1, 1, 1, 1, 1, 1, 1}, Bytes: []byte{1}},
		"shape overflowing":           {Kind: Bytes, Shape: []int{65536, 65536, 65536, 65536}},
		"unknown kind":                {Kind: 9, Shape: []int{0}},
		"zero kind":                   {Shape: []int{0}},
	} {
		if b, err := Encode(v); err == nil {
			t.Errorf("%s: encoded to % x, want an error", name, b)
		}
	}
}
