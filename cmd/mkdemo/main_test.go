package main

import (
	"fmt"
	"image"
	"image/color"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const goodSVG = `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:cc="http://web.resource.org/cc/"
     xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" width="10" height="10">
  <title>svg title, not metadata</title>
  <metadata>
    <rdf:RDF>
      <cc:Work rdf:about="">
        <dc:format>image/svg+xml</dc:format>
        <dc:title>Cats &amp; Dogs
          at   play</dc:title>
        <dc:description>a description</dc:description>
        <dc:subject>
          <rdf:Bag>
            <rdf:li>Cat</rdf:li>
            <rdf:li></rdf:li>
            <rdf:li>salt &amp; pepper</rdf:li>
            <rdf:li>caf&#233;</rdf:li>
            <rdf:li><![CDATA[dog <3]]></rdf:li>
          </rdf:Bag>
        </dc:subject>
        <dc:publisher>
          <cc:Agent rdf:about="http://www.openclipart.org/">
            <dc:title>Open Clip Art Library</dc:title>
          </cc:Agent>
        </dc:publisher>
        <dc:creator>
          <cc:Agent><dc:title>Jane Author</dc:title></cc:Agent>
        </dc:creator>
      </cc:Work>
    </rdf:RDF>
  </metadata>
  <rect width="5" height="5"/>
</svg>`

func TestParseMeta(t *testing.T) {
	m, err := ParseMeta(strings.NewReader(goodSVG))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Cats & Dogs\n          at   play"; m.Title != want {
		t.Errorf("title = %q, want %q", m.Title, want)
	}
	want := []string{"Cat", "", "salt & pepper", "café", "dog <3"}
	if !slices.Equal(m.Keywords, want) {
		t.Errorf("keywords = %q, want %q", m.Keywords, want)
	}
}

func TestParseMetaCreatorBeforeWorkTitle(t *testing.T) {
	// A stray dc:title and the author's name come before the cc:Work title;
	// a bare dc:subject without a Bag.
	const doc = `<svg xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:cc="http://web.resource.org/cc/">
<dc:title>stray</dc:title><cc:Work><dc:creator><cc:Agent><dc:title>Author</dc:title></cc:Agent></dc:creator>
<dc:subject> tree, leaf </dc:subject><dc:title>Oak</dc:title></cc:Work></svg>`
	m, err := ParseMeta(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if m.Title != "Oak" || !slices.Equal(m.Keywords, []string{"tree, leaf"}) {
		t.Errorf("got %q %q, want \"Oak\" [\"tree, leaf\"]", m.Title, m.Keywords)
	}
}

func TestParseMetaIgnoresAgents(t *testing.T) {
	// Titles and subjects inside a cc:Agent describe the author, not the
	// drawing.
	const doc = `<svg xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:cc="http://web.resource.org/cc/" xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<cc:Agent><dc:title>Author</dc:title><dc:subject><rdf:Bag><rdf:li>x</rdf:li></rdf:Bag></dc:subject></cc:Agent>
<dc:subject><rdf:Bag><rdf:li>y</rdf:li></rdf:Bag></dc:subject></svg>`
	m, err := ParseMeta(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if m.Title != "" || !slices.Equal(m.Keywords, []string{"y"}) {
		t.Errorf("got %q %q, want \"\" [\"y\"]", m.Title, m.Keywords)
	}
}

func TestParseMetaEntitiesAndCharset(t *testing.T) {
	// Adobe Illustrator exports declare entities in an internal DTD subset
	// and use them in attributes; a few files are ISO-8859-1.
	doc := "<?xml version=\"1.0\" encoding=\"iso-8859-1\"?>\n" +
		`<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd" [
	<!ENTITY ns_svg "http://www.w3.org/2000/svg">
	<!ENTITY kw 'kitten'>
]>
<svg xmlns="&ns_svg;" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:cc="http://web.resource.org/cc/">
<cc:Work><dc:title>Caf` + "\xe9" + ` &copy;</dc:title><dc:subject><rdf:Bag><rdf:li>&kw;</rdf:li><rdf:li>na` + "\xef" + `ve</rdf:li></rdf:Bag></dc:subject></cc:Work></svg>`
	m, err := ParseMeta(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if m.Title != "Café ©" || !slices.Equal(m.Keywords, []string{"kitten", "naïve"}) {
		t.Errorf("got %q %q, want \"Café ©\" [\"kitten\" \"naïve\"]", m.Title, m.Keywords)
	}
}

func TestParseMetaMalformed(t *testing.T) {
	for name, doc := range map[string]string{
		"unclosed":      `<svg xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>x</dc:title>`,
		"mismatched":    `<svg><metadata></svg></metadata>`,
		"bad entity":    `<svg><title>&nosuch;</title></svg>`,
		"bad version":   `<?xml version="1"?><svg/>`,
		"bad charset":   `<?xml version="1.0" encoding="koi8-r"?><svg/>`,
		"unquoted attr": `<svg width=10/>`,
	} {
		if _, err := ParseMeta(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestNormalizeKeywords(t *testing.T) {
	x40 := strings.Repeat("x", 40)
	raw := []string{
		" Cat ", "CAT", "big \t  Cat\n", "", "   ", "2005", "3.5", "01", "-1",
		"rome,italy", "a;b ; ", strings.Repeat("y", 41), x40,
		"hash", "HASH(0x8a095fc)", "0x8a09650", "array(0xdeadbeef)", "hashtag", "r2d2", "élan", "Rome",
	}
	got := NormalizeKeywords(raw)
	want := []string{"cat", "big cat", "rome", "italy", "a", "b", x40, "hashtag", "r2d2", "élan"}
	if !slices.Equal(got, want) {
		t.Errorf("NormalizeKeywords = %q\nwant %q", got, want)
	}
	if got := NormalizeKeywords([]string{"", "42", "hash"}); len(got) != 0 {
		t.Errorf("only junk: got %q, want none", got)
	}
}

func TestLabel(t *testing.T) {
	for in, want := range map[string]string{
		"food/fruit/apple.svg":                         "food/fruit",
		"recreation/games/cards/ornamental/x_q.svg":    "recreation/games",
		"people/man.svg":                               "people",
		"signs_and_symbols/flags/america/brazil_1.svg": "signs_and_symbols/flags",
	} {
		if got := Label(in); got != want {
			t.Errorf("Label(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"computer/icons/flat-theme/action/pen_style_nopen.svg": "computer-icons-pen-style-nopen",
		"people/Man  Crystal__01.SVG":                          "people-man-crystal-01",
		"animals/mammals/sheep-md-v0.1.svg":                    "animals-mammals-sheep-md-v0-1",
		"food/fruit/_apple_.svg":                               "food-fruit-apple",
		"shapes/stars/star 5pt.svg":                            "shapes-stars-star-5pt",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAssignIDsUnique(t *testing.T) {
	rels := []string{
		"a/x-2.svg",   // a-x-2
		"a/x.svg",     // a-x
		"a/x_.svg",    // a-x taken, a-x-2 taken -> a-x-3
		"a/X.svg",     // a-x -> a-x-4
		"a/b/x_y.svg", // a-b-x-y
		"a/b/c/x-y.svg",
		"a/b/d/e/x y.svg",
	}
	got := AssignIDs(rels)
	want := []string{"a-x-2", "a-x", "a-x-3", "a-x-4", "a-b-x-y", "a-b-x-y-2", "a-b-x-y-3"}
	if !slices.Equal(got, want) {
		t.Errorf("AssignIDs = %q, want %q", got, want)
	}
	valid := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, id := range got {
		if !valid.MatchString(id) || seen[id] {
			t.Errorf("id %q invalid or repeated", id)
		}
		seen[id] = true
	}
	// Stable: the same list gives the same ids.
	if again := AssignIDs(rels); !slices.Equal(again, got) {
		t.Errorf("AssignIDs not deterministic: %q vs %q", again, got)
	}
}

// testCandidates builds strata A:100, B:50, C:5, D:1, E:2. In A the even
// drawings share the keyword "a" and the odd ones only carry a keyword of
// their own.
func testCandidates() []candidate {
	var cs []candidate
	for s, size := range map[string]int{"A": 100, "B": 50, "C": 5, "D": 1, "E": 2} {
		for i := range size {
			tags := []string{strings.ToLower(s)}
			if s == "A" && i%2 == 1 {
				tags = []string{fmt.Sprintf("only-%d", i)}
			}
			cs = append(cs, candidate{stratum: s, tags: tags})
		}
	}
	// Map iteration is random: fix the candidate order.
	slices.SortFunc(cs, func(a, b candidate) int {
		return strings.Compare(a.stratum+a.tags[0], b.stratum+b.tags[0])
	})
	return cs
}

func perStratum(cs []candidate, sel []int) map[string]int {
	m := map[string]int{}
	for _, i := range sel {
		m[cs[i].stratum]++
	}
	return m
}

func TestSelectDrawingsQuotas(t *testing.T) {
	cs := testCandidates()
	sel := selectDrawings(cs, 30, 1)
	if len(sel) != 30 {
		t.Fatalf("selected %d, want 30", len(sel))
	}
	if !slices.IsSorted(sel) || len(slices.Compact(slices.Clone(sel))) != len(sel) {
		t.Errorf("selection not sorted and unique: %v", sel)
	}
	// Water-filling: cap 11 gives 11+11+5+1+2 = 30.
	want := map[string]int{"A": 11, "B": 11, "C": 5, "D": 1, "E": 2}
	if got := perStratum(cs, sel); !maps.Equal(got, want) {
		t.Errorf("per stratum %v, want %v", got, want)
	}
	// Preference: A has 50 drawings with a shared keyword, so none of the
	// drawings whose only keyword is unique is taken.
	for _, i := range sel {
		if strings.HasPrefix(cs[i].tags[0], "only-") {
			t.Errorf("picked %q although shared drawings were left", cs[i].tags)
		}
	}
	// A quota larger than A's 50 shared drawings falls back to the unique
	// ones: n=150 gives cap 92 (92+50+5+1+2 = 150).
	sel = selectDrawings(cs, 150, 1)
	got := perStratum(cs, sel)
	if want := map[string]int{"A": 92, "B": 50, "C": 5, "D": 1, "E": 2}; !maps.Equal(got, want) {
		t.Errorf("n=150: per stratum %v, want %v", got, want)
	}
	unique := 0
	for _, i := range sel {
		if strings.HasPrefix(cs[i].tags[0], "only-") {
			unique++
		}
	}
	if unique != 42 {
		t.Errorf("n=150: %d drawings with only a unique keyword, want 92-50 = 42", unique)
	}
}

func TestSelectDrawingsLeftovers(t *testing.T) {
	cs := testCandidates()
	// n=33: cap 12 fills 12+12+5+1+2 = 32; the one left-over slot goes to
	// A or B (the strata larger than the cap), chosen by the seed.
	sel := selectDrawings(cs, 33, 7)
	got := perStratum(cs, sel)
	if len(sel) != 33 || got["C"] != 5 || got["D"] != 1 || got["E"] != 2 || got["A"]+got["B"] != 25 ||
		min(got["A"], got["B"]) != 12 {
		t.Errorf("n=33: per stratum %v", got)
	}
	// n below the number of strata: one each for n distinct strata.
	sel = selectDrawings(cs, 3, 1)
	if got := perStratum(cs, sel); len(sel) != 3 || len(got) != 3 {
		t.Errorf("n=3: per stratum %v, want 3 strata with one each", got)
	}
	// n at least the number of candidates: everything.
	if sel := selectDrawings(cs, 1000, 1); len(sel) != len(cs) || sel[0] != 0 || sel[len(sel)-1] != len(cs)-1 {
		t.Errorf("n=1000: selected %d of %d", len(sel), len(cs))
	}
	if sel := selectDrawings(cs, 0, 1); len(sel) != 0 {
		t.Errorf("n=0: selected %d", len(sel))
	}
}

func TestSelectDrawingsDeterministic(t *testing.T) {
	cs := testCandidates()
	a := selectDrawings(cs, 40, 1)
	b := selectDrawings(cs, 40, 1)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different selections:\n%v\n%v", a, b)
	}
	c := selectDrawings(cs, 40, 2)
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 gave the same selection %v", a)
	}
	if len(c) != 40 {
		t.Errorf("seed 2 selected %d, want 40", len(c))
	}
}

func TestSelectDrawingsEveryStratum(t *testing.T) {
	// 40 strata of very different sizes; with n >= 40 every stratum is
	// represented, whatever the seed.
	var cs []candidate
	for s := range 40 {
		for i := range 1 + s*s {
			cs = append(cs, candidate{stratum: fmt.Sprintf("s%02d", s), tags: []string{"t", fmt.Sprint(i % 3)}})
		}
	}
	for _, n := range []int{40, 41, 100, 500} {
		for seed := range int64(5) {
			sel := selectDrawings(cs, n, seed)
			if got := perStratum(cs, sel); len(sel) != n || len(got) != 40 {
				t.Errorf("n=%d seed=%d: %d selected from %d strata, want %d from 40", n, seed, len(sel), len(got), n)
			}
		}
	}
}

func TestFlat(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for y := range 8 {
		for x := range 8 {
			img.Set(x, y, color.White)
		}
	}
	if !flat(img) {
		t.Error("white image not flat")
	}
	img.Set(7, 7, color.Black)
	if flat(img) {
		t.Error("image with a black pixel reported flat")
	}
}
