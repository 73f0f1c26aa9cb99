package dataset

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MissingPolicy says what a table loader does with rows that have missing
// values ("?", "", "NA", "N/A" or "NaN", case-insensitive, in any column).
type MissingPolicy int

const (
	// MissingError (the default) fails with an error listing the line
	// numbers of the incomplete rows.
	MissingError MissingPolicy = iota
	// MissingDrop drops incomplete rows and records their line numbers in
	// Table.Dropped.
	MissingDrop
)

// Table is a labelled numeric table.
type Table struct {
	Names   []string    // feature names in file order, without the target
	X       [][]float64 // n x d
	Y       []float64   // n targets
	Dropped []int       // 1-based line numbers of rows dropped (MissingDrop)
}

// LoadPMLB reads a Penn ML Benchmarks table: a TSV, gzip-compressed or not
// (detected from the content), with a header row, whose label column is
// named "target" wherever it stands (it is first in breast_cancer_wisconsin
// and wine_recognition, last elsewhere). X and names are the other columns
// in file order. Rows with missing values are an error (see LoadPMLBTable
// for the MissingDrop option). Note that PMLB's breast_w has no "?" in it:
// its missing values are label-encoded (see LoadBreastW).
func LoadPMLB(path string) (X [][]float64, y []float64, names []string, err error) {
	t, err := LoadPMLBTable(path, MissingError)
	if err != nil {
		return nil, nil, nil, err
	}
	return t.X, t.Y, t.Names, nil
}

// LoadPMLBTable is LoadPMLB with a choice of missing-value policy.
func LoadPMLBTable(path string, missing MissingPolicy) (*Table, error) {
	return loadTable(path, '\t', "target", missing)
}

// LoadDenseCSV reads a dense labelled CSV such as the LIBSVM a1a copy in
// uci/libsvm/a1a.csv: a header line (its names are returned as feature names
// only after the first, the label column), then "label,x1,...,xd" rows, all
// with the header's field count. Blank lines are skipped; missing values are
// an error.
func LoadDenseCSV(path string) (X [][]float64, y []float64, err error) {
	t, err := loadTable(path, ',', "", MissingError)
	if err != nil {
		return nil, nil, err
	}
	return t.X, t.Y, nil
}

func isMissing(s string) bool {
	switch strings.ToLower(s) {
	case "?", "", "na", "n/a", "nan":
		return true
	}
	return false
}

// openMaybeGzip opens path, transparently decompressing gzip content.
func openMaybeGzip(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %w", err)
	}
	br := bufio.NewReader(f)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("dataset: %s: %w", path, err)
		}
		return zr, func() error { zr.Close(); return f.Close() }, nil
	}
	return br, f.Close, nil
}

// loadTable reads a delimited table with a header. The label column is the
// one named target, or the first column when target is "".
func loadTable(path string, sep byte, target string, missing MissingPolicy) (*Table, error) {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	name := filepath.Base(path)
	lr := newLineReader(r)
	var header []string
	for header == nil {
		s, ok, err := lr.next()
		if err != nil {
			return nil, fmt.Errorf("dataset: reading %s: %w", path, err)
		}
		if !ok {
			return nil, parseErr(name, 0, "empty file: no header line")
		}
		if s != "" {
			header = splitRaw(s, sep)
		}
	}
	ti := 0
	if target != "" {
		ti = -1
		for i, h := range header {
			if h == target {
				if ti >= 0 {
					return nil, parseErr(name, 1, "two %q columns (%d and %d)", target, ti+1, i+1)
				}
				ti = i
			}
		}
		if ti < 0 {
			return nil, parseErr(name, lr.line, "no %q column in the header", target)
		}
	}
	if len(header) < 2 {
		return nil, parseErr(name, lr.line, "header has %d column(s); need a label and at least one feature", len(header))
	}
	t := &Table{}
	for i, h := range header {
		if i != ti {
			t.Names = append(t.Names, h)
		}
	}
	var incomplete []int
	for {
		s, ok, err := lr.next()
		if err != nil {
			return nil, fmt.Errorf("dataset: reading %s: %w", path, err)
		}
		if !ok {
			break
		}
		if s == "" {
			continue
		}
		fields := splitRaw(s, sep)
		if len(fields) != len(header) {
			return nil, parseErr(name, lr.line, "%d fields, want %d (as in the header)", len(fields), len(header))
		}
		x := make([]float64, 0, len(header)-1)
		var label float64
		hole := false
		for i, fv := range fields {
			if isMissing(fv) {
				hole = true
				continue
			}
			v, err := strconv.ParseFloat(fv, 64)
			if err != nil || math.IsInf(v, 0) {
				return nil, parseErr(name, lr.line, "column %d (%s): bad number %q", i+1, header[i], fv)
			}
			if i == ti {
				label = v
			} else {
				x = append(x, v)
			}
		}
		if hole {
			incomplete = append(incomplete, lr.line)
			continue
		}
		t.X = append(t.X, x)
		t.Y = append(t.Y, label)
	}
	if len(incomplete) > 0 {
		if missing != MissingDrop {
			return nil, parseErr(name, 0, "%d rows with missing values at lines %s (use MissingDrop to drop them)", len(incomplete), listLines(incomplete))
		}
		t.Dropped = incomplete
	}
	if len(t.X) == 0 {
		return nil, parseErr(name, 0, "no complete data rows")
	}
	return t, nil
}

func splitRaw(s string, sep byte) []string {
	f := strings.Split(s, string(sep))
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return f
}

func listLines(ls []int) string {
	const show = 20
	var b strings.Builder
	for i, l := range ls {
		if i == show {
			fmt.Fprintf(&b, " and %d more", len(ls)-show)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(l))
	}
	return b.String()
}

// BreastWFile is PMLB's copy of the original Wisconsin breast cancer table.
const BreastWFile = "uci/pmlb/breast_w.tsv.gz"

var breastWNames = []string{"Clump_Thickness", "Cell_Size_Uniformity", "Cell_Shape_Uniformity",
	"Marginal_Adhesion", "Single_Epi_Cell_Size", "Bare_Nuclei", "Bland_Chromatin", "Normal_Nucleoli", "Mitoses"}

// LoadBreastW loads PMLB's breast_w (UCI breast-cancer-wisconsin original,
// 699 rows x 9 features, target 0 benign / 1 malignant) from dataDir after
// checking its manifest md5, and undoes PMLB's encoding of the one column
// with missing values.
//
// The file contains no "?": PMLB label-encoded Bare_Nuclei from its sorted
// string values "1","10","2",...,"9","?", so code 0 means 1, code 1 means
// 10, codes 2..9 mean themselves and code 10 is the 16 missing values.
// LoadBreastW maps the codes back to the UCI values 1..10; the 16 rows with
// code 10 are handled by missing: MissingError fails listing their line
// numbers, MissingDrop drops them, leaving the 683 complete rows (in UCI
// order, the rows of uci/libsvm/breast-cancer_scale).
func LoadBreastW(dataDir string, missing MissingPolicy) (*Table, error) {
	if err := VerifyMD5(dataDir, BreastWFile); err != nil {
		return nil, err
	}
	path := filepath.Join(dataDir, filepath.FromSlash(BreastWFile))
	t, err := LoadPMLBTable(path, MissingError)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(t.Names, breastWNames) {
		return nil, fmt.Errorf("dataset: %s: columns %v, want %v", path, t.Names, breastWNames)
	}
	const col = 5 // Bare_Nuclei
	var keep [][]float64
	var keepY []float64
	var holes []int
	for i, x := range t.X {
		line := i + 2 // header is line 1, no blank lines in this file
		code := x[col]
		switch {
		case code == 0:
			x[col] = 1
		case code == 1:
			x[col] = 10
		case code >= 2 && code <= 9 && code == math.Trunc(code):
		case code == 10:
			holes = append(holes, line)
			continue
		default:
			return nil, parseErr(filepath.Base(path), line, "Bare_Nuclei code %v is not one of PMLB's 0..10", code)
		}
		keep = append(keep, x)
		keepY = append(keepY, t.Y[i])
	}
	if len(holes) > 0 && missing != MissingDrop {
		return nil, parseErr(filepath.Base(path), 0, "%d rows with a missing Bare_Nuclei (PMLB code 10) at lines %s (use MissingDrop to drop them)", len(holes), listLines(holes))
	}
	t.X, t.Y, t.Dropped = keep, keepY, holes
	return t, nil
}
