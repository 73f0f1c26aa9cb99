package dataset

import (
	"reflect"
	"strings"
	"testing"
)

const tinyHeader = `% a comment before the header
@RELATION 'tiny data'

@attribute 'feat one' numeric
@attribute "feat,two" {0,1}
% comment between attributes
@attribute f3 REAL
@Attribute a {0,1}
@attribute b {1,0}
@data
`

// Labels listed b before a: LabelNames follows the label list, so b = 0, a = 1.
var tinyLabels = []string{"b", "a"}

// The same three instances in both row forms:
//
//	feat one  feat,two  f3   a  b
//	1.5       0         -2   1  0
//	0         0         0    0  0   (b is declared {1,0}: the sparse default is "1"!)
//	0         1         0    1  1
const tinySparse = tinyHeader + `{0 1.5,2 -2,3 1, 4 0}
% comment in the data
{4 0}

{1 1,4 '1', 3 1}
`

const tinyDense = tinyHeader + `1.5,0,-2,1,0
0, 0 ,0,0,0
0,'1',0,1,1
`

func TestParseMulanSparseAndDense(t *testing.T) {
	wantX := [][]float64{{1.5, 0, -2}, {0, 0, 0}, {0, 1, 0}}
	wantY := [][]int{{1}, {}, {0, 1}}
	for name, src := range map[string]string{"sparse": tinySparse, "dense": tinyDense} {
		ml, err := ParseMulan(strings.NewReader(src), name, tinyLabels)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := []string{"feat one", "feat,two", "f3"}; !reflect.DeepEqual(ml.FeatureNames, want) {
			t.Errorf("%s: FeatureNames = %q, want %q", name, ml.FeatureNames, want)
		}
		if !reflect.DeepEqual(ml.LabelNames, tinyLabels) {
			t.Errorf("%s: LabelNames = %q, want %q", name, ml.LabelNames, tinyLabels)
		}
		if !reflect.DeepEqual(ml.X, wantX) {
			t.Errorf("%s: X = %v, want %v", name, ml.X, wantX)
		}
		if !reflect.DeepEqual(ml.Y, wantY) {
			t.Errorf("%s: Y = %v, want %v", name, ml.Y, wantY)
		}
	}
}

func TestParseARFFNominalEncoding(t *testing.T) {
	src := `@relation r
@attribute colour {red, 'dark blue', green}
@attribute x integer
@data
'dark blue', 7
{1 3}
{0 green}
`
	a, err := ParseARFF(strings.NewReader(src), "r.arff")
	if err != nil {
		t.Fatal(err)
	}
	if a.Relation != "r" || len(a.Attributes) != 2 {
		t.Fatalf("relation %q, %d attributes", a.Relation, len(a.Attributes))
	}
	if want := []string{"red", "dark blue", "green"}; !reflect.DeepEqual(a.Attributes[0].Nominal, want) {
		t.Errorf("nominal values %q, want %q", a.Attributes[0].Nominal, want)
	}
	if a.Attributes[1].Nominal != nil {
		t.Errorf("integer attribute has nominal values %q", a.Attributes[1].Nominal)
	}
	// Nominal values are their index in the declaration; omitted sparse
	// nominal values are index 0 (red).
	want := [][]float64{{1, 7}, {0, 3}, {2, 0}}
	if !reflect.DeepEqual(a.Data, want) {
		t.Errorf("Data = %v, want %v", a.Data, want)
	}
}

func TestParseMulanMalformed(t *testing.T) {
	hdr := "@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n" // data starts at line 5
	cases := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"sparse index out of range", hdr + "{0 1}\n{2 1}\n", 6, "out of range"},
		{"sparse negative index", hdr + "{-1 1}\n", 5, "out of range"},
		{"sparse duplicate index", hdr + "{0 1,0 2}\n", 5, "given twice"},
		{"sparse not closed", hdr + "{0 1\n", 5, "not closed"},
		{"sparse weight", hdr + "{0 1}, {3}\n", 5, "weights"},
		{"sparse entry without value", hdr + "{0}\n", 5, "index value"},
		{"sparse bad index", hdr + "{a 1}\n", 5, "bad index"},
		{"dense too few", hdr + "1,0\n2\n", 6, "1 values, want 2"},
		{"dense too many", hdr + "1,0,1\n", 5, "3 values, want 2"},
		{"bad number", hdr + "abc,0\n", 5, `bad numeric value "abc"`},
		{"undeclared nominal", hdr + "1,2\n", 5, `value "2" is not one of`},
		{"missing value", hdr + "?,1\n", 5, "missing value"},
		{"label not 0/1", "@relation r\n@attribute x numeric\n@attribute y numeric\n@data\n1,0\n1,2\n", 6, "want 0 or 1"},
		{"unterminated quote", hdr + "1,'0\n", 5, "unterminated quote"},
		{"header after data", hdr + "1,0\n@attribute z numeric\n", 6, "inside the @data"},
		{"unsupported type", "@relation r\n@attribute s string\n@attribute y {0,1}\n@data\n", 2, "unsupported type"},
		{"duplicate attribute", "@relation r\n@attribute y {0,1}\n@attribute y {0,1}\n@data\n", 3, "duplicate attribute"},
		{"unknown keyword", "@relation r\n@attrib y {0,1}\n@data\n", 2, "unknown header keyword"},
		{"data before header", "1,0\n", 1, "expected @relation"},
		{"no type", "@relation r\n@attribute y\n", 2, "no type"},
		{"nominal not closed", "@relation r\n@attribute y {0,1\n", 2, "not closed"},
		{"no data section", "@relation r\n@attribute y {0,1}\n", 0, "no @data"},
		{"label not an attribute", "@relation r\n@attribute x numeric\n@data\n", 0, `label "y"`},
		{"label not binary", "@relation r\n@attribute x numeric\n@attribute y {0,1,2}\n@data\n", 0, "must be {0,1}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseMulan(strings.NewReader(c.src), "bad.arff", []string{"y"})
			wantParseErr(t, err, c.line, c.msg)
			if err != nil && !strings.Contains(err.Error(), "bad.arff") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestParseMulanXML(t *testing.T) {
	src := `<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
  <label name="animal">
    <label name="cat"></label>
    <label name="dog"><label name="puppy"/></label>
  </label>
  <label name="plant"></label>
</labels>`
	got, err := ParseMulanXML(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"animal", "cat", "dog", "puppy", "plant"}; !reflect.DeepEqual(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
	for name, bad := range map[string]string{
		"duplicate": `<labels><label name="a"/><label name="b"><label name="a"/></label></labels>`,
		"no name":   `<labels><label/></labels>`,
		"empty":     `<labels></labels>`,
		"bad root":  `<lbls><label name="a"/></lbls>`,
		"not xml":   `<labels><label name="a">`,
	} {
		if _, err := ParseMulanXML(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestLoadMulanFiles(t *testing.T) {
	arff := writeFile(t, "tiny.arff", strings.ReplaceAll(tinySparse, "\n", "\r\n"))
	xml := writeFile(t, "tiny.xml", `<labels><label name="b"/><label name="a"/></labels>`)
	ml, err := LoadMulan(arff, xml)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{1}, {}, {0, 1}}; !reflect.DeepEqual(ml.Y, want) {
		t.Errorf("Y = %v, want %v (CRLF input)", ml.Y, want)
	}
	if _, err := LoadMulan(arff, xml+".missing"); err == nil {
		t.Error("missing XML: no error")
	}
}
