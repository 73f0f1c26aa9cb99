package dataset

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LoadLIBSVM reads a LIBSVM / SVMlight text file: one instance a line,
// "label index:value index:value ...", 1-based strictly increasing indices,
// omitted features 0. A '#' starts a comment to the end of the line; blank
// lines are skipped; CRLF line ends are accepted. X is dense, with as many
// columns as the largest index in the file (a feature that is zero in every
// row beyond the largest index is therefore absent; use LoadLIBSVMDim to fix
// the width). Malformed lines are *ParseError with the line number, and so
// is a matrix of more than 2^28 values.
func LoadLIBSVM(path string) (X [][]float64, y []float64, err error) {
	return LoadLIBSVMDim(path, 0)
}

// maxDenseValues bounds the dense matrix of a sparse file (2 GiB), where
// one large index would otherwise ask for any amount of memory.
const maxDenseValues = 1 << 28

// LoadLIBSVMDim is LoadLIBSVM with dense rows of width dim when dim > 0 (an
// index above dim is an error); dim <= 0 means the largest index in the file.
func LoadLIBSVMDim(path string, dim int) (X [][]float64, y []float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	name := filepath.Base(path)
	type entry struct {
		idx int
		val float64
	}
	var rows [][]entry
	maxIdx := 0
	lr := newLineReader(f)
	for {
		s, ok, err := lr.next()
		if err != nil {
			return nil, nil, fmt.Errorf("dataset: reading %s: %w", path, err)
		}
		if !ok {
			break
		}
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = strings.TrimSpace(s[:i])
		}
		if s == "" {
			continue
		}
		fields := strings.Fields(s)
		label, err := strconv.ParseFloat(fields[0], 64)
		if err != nil || math.IsNaN(label) || math.IsInf(label, 0) {
			return nil, nil, parseErr(name, lr.line, "bad label %q", fields[0])
		}
		row := make([]entry, 0, len(fields)-1)
		prev := 0
		for _, fv := range fields[1:] {
			is, vs, ok := strings.Cut(fv, ":")
			if !ok {
				return nil, nil, parseErr(name, lr.line, "feature %q is not index:value", fv)
			}
			idx, err := strconv.Atoi(is)
			if err != nil || idx < 1 {
				return nil, nil, parseErr(name, lr.line, "feature %q: index must be an integer >= 1", fv)
			}
			if idx <= prev {
				return nil, nil, parseErr(name, lr.line, "feature %q: index %d not above the previous index %d (indices must increase)", fv, idx, prev)
			}
			if dim > 0 && idx > dim {
				return nil, nil, parseErr(name, lr.line, "feature %q: index %d above the dimension %d", fv, idx, dim)
			}
			prev = idx
			v, err := strconv.ParseFloat(vs, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, parseErr(name, lr.line, "feature %q: bad value", fv)
			}
			row = append(row, entry{idx, v})
		}
		maxIdx = max(maxIdx, prev)
		rows = append(rows, row)
		y = append(y, label)
	}
	if len(rows) == 0 {
		return nil, nil, parseErr(name, 0, "no instances")
	}
	if dim <= 0 {
		dim = maxIdx
	}
	if dim > maxDenseValues/len(rows) {
		return nil, nil, parseErr(name, 0, "%d rows of width %d (the largest index) is over %d dense values", len(rows), dim, maxDenseValues)
	}
	X = make([][]float64, len(rows))
	for i, row := range rows {
		x := make([]float64, dim)
		for _, e := range row {
			x[e.idx-1] = e.val
		}
		X[i] = x
	}
	return X, y, nil
}
