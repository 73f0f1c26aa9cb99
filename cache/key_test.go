package cache

import "testing"

func TestKeySchema(t *testing.T) {
	k := Key{Kind: "kernel", Learner: "npk", Params: "p0", Input: "i1"}
	if got, want := k.String(), "kr:1:kernel:npk:p0:i1"; got != want || FormatVersion != 1 {
		t.Errorf("key %q (format version %d), want %q", got, FormatVersion, want)
	}
}

// TestHash pins digests computed independently (Python: the first 16
// bytes of SHA-256 over each part preceded by its length, a little-endian
// uint64).
func TestHash(t *testing.T) {
	for _, c := range []struct {
		parts []string
		want  string
	}{
		{[]string{"ab", "c"}, "43ee655579de01ca739b3f95c1c2d3f4"},
		{[]string{"a", "bc"}, "9a8acca1b6c6c0befd3fbc756aed625d"},
		{nil, "e3b0c44298fc1c149afbf4c8996fb924"},
		{[]string{""}, "af5570f5a1810b7af78caf4bc70a660f"},
	} {
		if got := HashStrings(c.parts...); got != c.want {
			t.Errorf("HashStrings(%q) = %s, want %s", c.parts, got, c.want)
		}
		b := make([][]byte, len(c.parts))
		for i, p := range c.parts {
			b[i] = []byte(p)
		}
		if got := Hash(b...); got != c.want {
			t.Errorf("Hash(%q) = %s, want %s", c.parts, got, c.want)
		}
	}
}
