package dataset

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestLoadLIBSVMSmall(t *testing.T) {
	p := writeFile(t, "tiny.svm", "# a comment line\n+1 1:0.5 3:-1   # trailing comment\r\n\n   \n-1 2:2e1\n0.5\n")
	X, y, err := LoadLIBSVM(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]float64{{0.5, 0, -1}, {0, 20, 0}, {0, 0, 0}}; !reflect.DeepEqual(X, want) {
		t.Errorf("X = %v, want %v", X, want)
	}
	if want := []float64{1, -1, 0.5}; !reflect.DeepEqual(y, want) {
		t.Errorf("y = %v, want %v", y, want)
	}
	X, _, err = LoadLIBSVMDim(p, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(X[0]) != 5 || X[0][2] != -1 {
		t.Errorf("dim 5: row 0 = %v", X[0])
	}
	_, _, err = LoadLIBSVMDim(p, 2)
	wantParseErr(t, err, 2, "above the dimension 2")
}

func TestLoadLIBSVMMalformed(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"index 0", "1 1:1\n1 0:1\n", 2, "index must be an integer >= 1"},
		{"decreasing", "1 1:1\n\n# c\n1 3:1 2:1\n", 4, "indices must increase"},
		{"repeated", "1 2:1 2:1\n", 1, "indices must increase"},
		{"bad label", "1 1:1\nx 1:1\n", 2, `bad label "x"`},
		{"no colon", "1 1-1\n", 1, "not index:value"},
		{"bad value", "1 1:abc\n", 1, "bad value"},
		{"nan value", "1 1:NaN\n", 1, "bad value"},
		{"empty", "# only a comment\n\n", 0, "no instances"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := LoadLIBSVM(writeFile(t, "bad.svm", c.src))
			wantParseErr(t, err, c.line, c.msg)
		})
	}
	if _, _, err := LoadLIBSVM(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file: no error")
	}
}

func countLabels(y []float64) map[float64]int {
	m := map[float64]int{}
	for _, v := range y {
		m[v]++
	}
	return m
}

func TestLoadLIBSVMReal(t *testing.T) {
	dir := realData(t)
	cases := []struct {
		file   string
		n, d   int
		labels map[float64]int
	}{
		// MANIFEST.md says labels 2/4 for breast-cancer_scale; the file has
		// -1 (benign, 444) / +1 (malignant, 239).
		{"breast-cancer_scale", 683, 10, map[float64]int{-1: 444, 1: 239}},
		{"ionosphere_scale", 351, 34, map[float64]int{-1: 126, 1: 225}},
		{"sonar_scale", 208, 60, map[float64]int{-1: 111, 1: 97}},
		{"pima_scale", 768, 8, map[float64]int{-1: 500, 1: 268}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			rel := "uci/libsvm/" + c.file
			if err := VerifyMD5(dir, rel); err != nil {
				t.Fatal(err)
			}
			X, y, err := LoadLIBSVM(filepath.Join(dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			if len(X) != c.n || len(y) != c.n || len(X[0]) != c.d {
				t.Fatalf("shape %dx%d (%d labels), want %dx%d", len(X), len(X[0]), len(y), c.n, c.d)
			}
			if got := countLabels(y); !reflect.DeepEqual(got, c.labels) {
				t.Errorf("labels %v, want %v", got, c.labels)
			}
			for i, x := range X {
				for j, v := range x {
					if v < -1 || v > 1 {
						t.Fatalf("X[%d][%d] = %v outside the scaled range [-1,1]", i, j, v)
					}
				}
			}
			if c.file == "ionosphere_scale" {
				for i, x := range X {
					if x[1] != 0 {
						t.Fatalf("ionosphere row %d: feature 2 = %v, want 0 (index 2 all zero)", i, x[1])
					}
				}
			}
		})
	}
}
