package changelog

import "testing"

func TestPos(t *testing.T) {
	p := Pos{ID: "1700000000000-3", N: 42}
	if q, err := ParsePos(p.String()); err != nil || q != p {
		t.Fatalf("ParsePos(%q) = %+v, %v", p.String(), q, err)
	}
	if q, err := ParsePos(""); err != nil || q != (Pos{}) {
		t.Fatalf("ParsePos(\"\") = %+v, %v", q, err)
	}
	for _, bad := range []string{"x", "1-2", "1-2 x", "a-b 3"} {
		if _, err := ParsePos(bad); err == nil {
			t.Errorf("ParsePos(%q) accepted", bad)
		}
	}
	for _, c := range []struct {
		a, b string
		less bool
	}{{"", "0-1", true}, {"0-1", "", false}, {"", "", false}, {"5-0", "10-0", true}, {"10-2", "10-10", true}, {"10-10", "10-2", false}, {"7-7", "7-7", false}} {
		if Less(c.a, c.b) != c.less {
			t.Errorf("Less(%q, %q) = %v", c.a, c.b, !c.less)
		}
	}
	if Millis("1700000000123-9") != 1700000000123 {
		t.Error("Millis")
	}
}
