package dataset

import (
	"bytes"
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeGzip(t *testing.T, name, content string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(content))
	zw.Close()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadPMLBSmall(t *testing.T) {
	src := "a\ttarget\tb\n1\t0\t2.5\n\n3\t1\t-4\n"
	for name, p := range map[string]string{
		"gzip":  writeGzip(t, "t.tsv.gz", src),
		"plain": writeFile(t, "t.tsv", strings.ReplaceAll(src, "\n", "\r\n")),
	} {
		X, y, names, err := LoadPMLB(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(names, []string{"a", "b"}) || !reflect.DeepEqual(y, []float64{0, 1}) ||
			!reflect.DeepEqual(X, [][]float64{{1, 2.5}, {3, -4}}) {
			t.Errorf("%s: names %q y %v X %v", name, names, y, X)
		}
	}
}

func TestLoadPMLBMissing(t *testing.T) {
	p := writeGzip(t, "m.tsv.gz", "x\ty\ttarget\n1\t2\t0\n?\t2\t1\n1\t2\t1\n1\tNA\t0\n5\t6\t1\n")
	_, _, _, err := LoadPMLB(p)
	wantParseErr(t, err, 0, "2 rows with missing values at lines 3, 5")
	tab, err := LoadPMLBTable(p, MissingDrop)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tab.Dropped, []int{3, 5}) || !reflect.DeepEqual(tab.Y, []float64{0, 1, 1}) ||
		!reflect.DeepEqual(tab.X, [][]float64{{1, 2}, {1, 2}, {5, 6}}) {
		t.Errorf("MissingDrop: %+v", tab)
	}
}

func TestLoadPMLBMalformed(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"no target", "a\tb\n1\t2\n", 1, `no "target" column`},
		{"two targets", "target\ta\ttarget\n1\t2\t3\n", 1, "two"},
		{"short row", "a\ttarget\n1\t0\n1\n", 3, "1 fields, want 2"},
		{"bad number", "a\ttarget\n1\t0\nx\t1\n", 3, `bad number "x"`},
		{"empty", "", 0, "no header"},
		{"only header", "a\ttarget\n", 0, "no complete data rows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := LoadPMLB(writeGzip(t, "bad.tsv.gz", c.src))
			wantParseErr(t, err, c.line, c.msg)
		})
	}
}

func TestLoadPMLBReal(t *testing.T) {
	dir := realData(t)
	cases := []struct {
		file    string
		n, d    int
		classes int
		first   string // first feature name
	}{
		{"breast_w", 699, 9, 2, "Clump_Thickness"},
		{"breast_cancer_wisconsin", 569, 30, 2, "2"}, // target first
		{"ionosphere", 351, 34, 2, "0"},
		{"sonar", 208, 60, 2, "A1"},
		{"pima", 768, 8, 2, "Pregnant"},
		{"iris", 150, 4, 3, "sepal-length"},
		{"wine_recognition", 178, 13, 3, "1"}, // target first
		{"spambase", 4601, 57, 2, "0"},
		{"mfeat_factors", 2000, 216, 10, "att1"},
		{"mfeat_fourier", 2000, 76, 10, "att1"},
		{"mfeat_karhunen", 2000, 64, 10, "att1"},
		{"mfeat_morphological", 2000, 6, 10, "att1"},
		{"mfeat_pixel", 2000, 240, 10, "attribute_0"},
		{"mfeat_zernike", 2000, 47, 10, "att1"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			rel := "uci/pmlb/" + c.file + ".tsv.gz"
			if err := VerifyMD5(dir, rel); err != nil {
				t.Fatal(err)
			}
			X, y, names, err := LoadPMLB(filepath.Join(dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			if len(X) != c.n || len(y) != c.n || len(names) != c.d || len(X[0]) != c.d {
				t.Fatalf("shape %dx%d (%d names, %d labels), want %dx%d", len(X), len(X[0]), len(names), len(y), c.n, c.d)
			}
			if names[0] != c.first {
				t.Errorf("first feature %q, want %q", names[0], c.first)
			}
			counts := countLabels(y)
			if len(counts) != c.classes {
				t.Errorf("%d classes %v, want %d", len(counts), counts, c.classes)
			}
			if strings.HasPrefix(c.file, "mfeat") {
				for cl, k := range counts {
					if k != 200 {
						t.Errorf("class %v has %d digits, want 200", cl, k)
					}
				}
			}
		})
	}
}

// Spot values read from the files with zcat: iris row 1 is
// "6.7 3.0 5.2 2.3 2"; wine row 1 is "1 14.23 1.71 ... 1065" (target first).
func TestLoadPMLBRealRows(t *testing.T) {
	dir := realData(t)
	X, y, _, err := LoadPMLB(filepath.Join(dir, "uci/pmlb/iris.tsv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(X[0], []float64{6.7, 3.0, 5.2, 2.3}) || y[0] != 2 {
		t.Errorf("iris row 1: %v -> %v", X[0], y[0])
	}
	X, y, _, err = LoadPMLB(filepath.Join(dir, "uci/pmlb/wine_recognition.tsv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if y[0] != 1 || X[0][0] != 14.23 || X[0][12] != 1065 {
		t.Errorf("wine row 1: %v -> %v", X[0], y[0])
	}
	X, _, _, err = LoadPMLB(filepath.Join(dir, "uci/pmlb/ionosphere.tsv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range X {
		if x[1] != X[0][1] {
			t.Fatalf("ionosphere row %d: feature 2 = %v, want constant %v", i, x[1], X[0][1])
		}
	}
}

func TestLoadBreastW(t *testing.T) {
	dir := realData(t)
	_, err := LoadBreastW(dir, MissingError)
	wantParseErr(t, err, 0, "16 rows with a missing Bare_Nuclei")
	tab, err := LoadBreastW(dir, MissingDrop)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.X) != 683 || len(tab.Y) != 683 || len(tab.Dropped) != 16 || len(tab.X[0]) != 9 {
		t.Fatalf("%d rows, %d dropped; want 683, 16", len(tab.X), len(tab.Dropped))
	}
	// UCI row 1 (id 1000025): 5,1,1,1,2,1,3,1,1, benign.
	if !reflect.DeepEqual(tab.X[0], []float64{5, 1, 1, 1, 2, 1, 3, 1, 1}) || tab.Y[0] != 0 {
		t.Errorf("row 1 = %v -> %v", tab.X[0], tab.Y[0])
	}
	// UCI Bare_Nuclei counts without the 16 "?": 1:402 10:132 2:30 3:28
	// 4:19 5:30 6:4 7:8 8:21 9:9.
	bn := map[float64]int{}
	for _, x := range tab.X {
		bn[x[5]]++
	}
	if want := map[float64]int{1: 402, 10: 132, 2: 30, 3: 28, 4: 19, 5: 30, 6: 4, 7: 8, 8: 21, 9: 9}; !reflect.DeepEqual(bn, want) {
		t.Errorf("Bare_Nuclei counts %v, want %v", bn, want)
	}
	if got := countLabels(tab.Y); !reflect.DeepEqual(got, map[float64]int{0: 444, 1: 239}) {
		t.Errorf("classes %v, want 444 benign / 239 malignant", got)
	}
	// The complete rows, in UCI order, are those of breast-cancer_scale
	// (svm-scale to [-1,1]; its feature 1 is the sample id).
	S, sy, err := LoadLIBSVM(filepath.Join(dir, "uci/libsvm/breast-cancer_scale"))
	if err != nil {
		t.Fatal(err)
	}
	for j := range 9 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range tab.X {
			lo, hi = min(lo, x[j]), max(hi, x[j])
		}
		for i, x := range tab.X {
			want := 2*(x[j]-lo)/(hi-lo) - 1
			if math.Abs(S[i][j+1]-want) > 1e-5 {
				t.Fatalf("row %d feature %d: scaled %v, libsvm %v", i, j, want, S[i][j+1])
			}
		}
	}
	for i := range sy {
		if (sy[i] == 1) != (tab.Y[i] == 1) {
			t.Fatalf("row %d: label %v vs libsvm %v", i, tab.Y[i], sy[i])
		}
	}
}

func TestLoadDenseCSV(t *testing.T) {
	p := writeFile(t, "d.csv", "0,1,2\n+1,0.5,0\r\n\n-1,0,1\n")
	X, y, err := LoadDenseCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(X, [][]float64{{0.5, 0}, {0, 1}}) || !reflect.DeepEqual(y, []float64{1, -1}) {
		t.Errorf("X %v y %v", X, y)
	}
	_, _, err = LoadDenseCSV(writeFile(t, "bad.csv", "0,1,2\n1,0,0\n1,0\n"))
	wantParseErr(t, err, 3, "2 fields, want 3")
	_, _, err = LoadDenseCSV(writeFile(t, "bad.csv", "0,1,2\n1,0,0\n1,?,0\n"))
	wantParseErr(t, err, 0, "lines 3")
}

func TestLoadA1A(t *testing.T) {
	dir := realData(t)
	if err := VerifyMD5(dir, "uci/libsvm/a1a.csv"); err != nil {
		t.Fatal(err)
	}
	X, y, err := LoadDenseCSV(filepath.Join(dir, "uci/libsvm/a1a.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(X) != 1605 || len(X[0]) != 123 {
		t.Fatalf("shape %dx%d, want 1605x123", len(X), len(X[0]))
	}
	if got := countLabels(y); !reflect.DeepEqual(got, map[float64]int{-1: 1210, 1: 395}) {
		t.Errorf("labels %v", got)
	}
	// a1a row 1 (from the file): label -1, x3 = x11 = x14 = 1.
	if y[0] != -1 || X[0][2] != 1 || X[0][10] != 1 || X[0][13] != 1 || X[0][0] != 0 {
		t.Errorf("row 1: %v -> %v", X[0][:15], y[0])
	}
	for i, x := range X {
		for j, v := range x {
			if v != 0 && v != 1 {
				t.Fatalf("X[%d][%d] = %v, want binary", i, j, v)
			}
		}
	}
}
