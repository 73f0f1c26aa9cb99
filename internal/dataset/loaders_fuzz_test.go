package dataset

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The loaders never panic; they return a data set or a *ParseError; and a
// data set they return, written back in the same format, loads again as
// the same data set. Seeds: testdata/fuzz/Fuzz*.

func FuzzParseARFF(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		a, err := ParseARFF(strings.NewReader(text), "fuzz.arff")
		if err != nil {
			checkParseError(t, err)
			return
		}
		again, err := ParseARFF(strings.NewReader(encodeARFF(a)), "again.arff")
		if err != nil {
			t.Fatalf("re-encoded ARFF does not parse: %v\n%s", err, encodeARFF(a))
		}
		if !reflect.DeepEqual(a, again) {
			t.Fatalf("round trip: %+v became %+v", a, again)
		}
	})
}

// encodeARFF writes a as a dense ARFF, every name and nominal value quoted.
func encodeARFF(a *ARFF) string {
	quote := func(s string) string {
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@relation %s\n", quote(a.Relation))
	for _, at := range a.Attributes {
		typ := "numeric"
		if at.Nominal != nil {
			vals := make([]string, len(at.Nominal))
			for i, v := range at.Nominal {
				vals[i] = quote(v)
			}
			typ = "{" + strings.Join(vals, ",") + "}"
		}
		fmt.Fprintf(&b, "@attribute %s %s\n", quote(at.Name), typ)
	}
	b.WriteString("@data\n")
	for _, row := range a.Data {
		for i, v := range row {
			if i > 0 {
				b.WriteByte(',')
			}
			if nom := a.Attributes[i].Nominal; nom != nil {
				b.WriteString(quote(nom[int(v)]))
			} else {
				b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func FuzzLoadLIBSVM(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		X, y, err := LoadLIBSVM(writeFile(t, "data.libsvm", text))
		if err != nil {
			checkParseError(t, err)
			return
		}
		dim := len(X[0])
		var b strings.Builder
		for i, row := range X {
			if len(row) != dim || math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
				t.Fatalf("row %d: width %d (want %d), label %v", i, len(row), dim, y[i])
			}
			b.WriteString(strconv.FormatFloat(y[i], 'g', -1, 64))
			for j, v := range row {
				if v != 0 {
					fmt.Fprintf(&b, " %d:%s", j+1, strconv.FormatFloat(v, 'g', -1, 64))
				}
			}
			b.WriteByte('\n')
		}
		X2, y2, err := LoadLIBSVMDim(writeFile(t, "again.libsvm", b.String()), dim)
		if err != nil || !reflect.DeepEqual(X, X2) || !reflect.DeepEqual(y, y2) {
			t.Fatalf("round trip (%v):\n%v %v\nbecame\n%v %v", err, X, y, X2, y2)
		}
	})
}

// FuzzLoadPMLB loads tab-separated tables (PMLB's format, gzip or not).
func FuzzLoadPMLB(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string, drop bool) {
		policy := MissingError
		if drop {
			policy = MissingDrop
		}
		tab, err := LoadPMLBTable(writeFile(t, "data.tsv", text), policy)
		if err != nil {
			checkParseError(t, err)
			return
		}
		var b strings.Builder
		b.WriteString(strings.Join(append(append([]string{}, tab.Names...), "target"), "\t") + "\n")
		for i, row := range tab.X {
			if len(row) != len(tab.Names) {
				t.Fatalf("row %d has %d values, %d names", i, len(row), len(tab.Names))
			}
			for _, v := range append(append([]float64{}, row...), tab.Y[i]) {
				b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + "\t")
			}
			b.WriteString("\n")
		}
		again, err := LoadPMLBTable(writeFile(t, "again.tsv", strings.ReplaceAll(b.String(), "\t\n", "\n")), MissingError)
		if err != nil || !reflect.DeepEqual(again.X, tab.X) || !reflect.DeepEqual(again.Y, tab.Y) || !reflect.DeepEqual(again.Names, tab.Names) {
			t.Fatalf("round trip (%v):\n%+v\nbecame\n%+v", err, tab, again)
		}
	})
}

// checkParseError fails unless err is a *ParseError or, in a file that
// starts as gzip, a corrupt stream: the loaders' other errors are I/O
// errors, which a file just written does not give.
func checkParseError(t *testing.T, err error) {
	var pe *ParseError
	var flateErr flate.CorruptInputError
	switch {
	case errors.As(err, &pe) && pe.Msg != "":
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum), errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &flateErr):
	default:
		t.Fatalf("error %v (%T) is not a *ParseError", err, err)
	}
}
