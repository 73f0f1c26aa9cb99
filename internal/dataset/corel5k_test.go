package dataset

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCorel5kShape(t *testing.T) {
	ml := realCorel5k(t)
	if len(ml.X) != 5000 || len(ml.Y) != 5000 {
		t.Fatalf("%d rows of X, %d of Y; want 5000", len(ml.X), len(ml.Y))
	}
	if len(ml.FeatureNames) != 499 || len(ml.LabelNames) != 374 {
		t.Fatalf("%d features, %d labels; want 499, 374", len(ml.FeatureNames), len(ml.LabelNames))
	}
	for j, name := range ml.FeatureNames {
		if want := fmt.Sprintf("Cluster%d", j+1); name != want {
			t.Fatalf("feature %d is %q, want %q", j, name, want)
		}
	}
	// Label count distribution, counted from the raw file with awk.
	hist := map[int]int{}
	for i, y := range ml.Y {
		if len(y) < 1 || len(y) > 5 {
			t.Errorf("image %d has %d labels, want 1..5", i, len(y))
		}
		for k := 1; k < len(y); k++ {
			if y[k] <= y[k-1] {
				t.Errorf("image %d labels %v not strictly ascending", i, y)
			}
		}
		hist[len(y)]++
	}
	if want := map[int]int{1: 32, 2: 376, 3: 1559, 4: 3016, 5: 17}; !reflect.DeepEqual(hist, want) {
		t.Errorf("labels-per-image histogram %v, want %v", hist, want)
	}
	for i, x := range ml.X {
		if len(x) != 499 {
			t.Fatalf("row %d has %d features", i, len(x))
		}
		for j, v := range x {
			if v != 0 && v != 1 {
				t.Fatalf("X[%d][%d] = %v, want 0 or 1", i, j, v)
			}
		}
	}
}

// The first @data row of Corel5k-sparse.arff, read by eye:
// {19 1,93 1,143 1,149 1,259 1,329 1,379 1,461 1,499 1,500 1,501 1,502 1}
// Attributes 0..498 are Cluster1..Cluster499 and 499.. the keywords, so the
// features 19,93,143,149,259,329,379,461 are set and the labels are the
// first four keywords.
func TestCorel5kFirstRow(t *testing.T) {
	ml := realCorel5k(t)
	var set []int
	for j, v := range ml.X[0] {
		if v == 1 {
			set = append(set, j)
		}
	}
	if want := []int{19, 93, 143, 149, 259, 329, 379, 461}; !reflect.DeepEqual(set, want) {
		t.Errorf("first row features set at %v, want %v", set, want)
	}
	if want := []int{0, 1, 2, 3}; !reflect.DeepEqual(ml.Y[0], want) {
		t.Errorf("first row labels %v, want %v", ml.Y[0], want)
	}
	var names []string
	for _, l := range ml.Y[0] {
		names = append(names, ml.LabelNames[l])
	}
	if want := []string{"city", "mountain", "sky", "sun"}; !reflect.DeepEqual(names, want) {
		t.Errorf("first row label names %q, want %q", names, want)
	}
	// Third row: {19 1,159 1,192 1,235 1,422 1,502 1,508 1} -> sun (3), sea (9).
	if want := []int{3, 9}; !reflect.DeepEqual(ml.Y[2], want) {
		t.Errorf("third row labels %v, want %v", ml.Y[2], want)
	}
}

// TestCorel5kLabelNamesFromFile checks the label names against the ARFF
// @attribute lines read directly from the file: the XML order is the ARFF
// order, 499 Cluster attributes then the 374 keywords.
func TestCorel5kLabelNamesFromFile(t *testing.T) {
	dir := realData(t)
	ml := realCorel5k(t)
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(Corel5kARFF)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var attrs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) == 3 && fs[0] == "@attribute" {
			attrs = append(attrs, fs[1])
		}
	}
	if len(attrs) != 873 {
		t.Fatalf("found %d @attribute lines, want 873", len(attrs))
	}
	if !reflect.DeepEqual(ml.LabelNames, attrs[499:]) {
		t.Errorf("label names differ from the ARFF attributes 499..872")
	}
	if ml.LabelNames[0] != "city" || ml.LabelNames[373] != "hawaii" {
		t.Errorf("first/last label %q/%q, want city/hawaii", ml.LabelNames[0], ml.LabelNames[373])
	}
}
