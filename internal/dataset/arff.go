package dataset

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Attribute is one ARFF attribute. Nominal is nil for numeric attributes
// (numeric, real, integer) and holds the declared values, in order, for
// nominal ones ({a,b,...}).
type Attribute struct {
	Name    string
	Nominal []string
}

// ARFF is a parsed ARFF file with every instance as a dense row.
//
// Values: a numeric attribute holds its number; a nominal attribute holds the
// index of its value in the declared list (Weka's internal encoding), so a
// {0,1} attribute holds 0 or 1. In sparse rows ({index value, ...}, 0-based
// indices) an omitted attribute is 0, i.e. the number 0 or the first declared
// nominal value, as in Weka. Missing values (?), string, date and relational
// attributes and instance weights are not supported and are reported as
// errors.
type ARFF struct {
	Relation   string
	Attributes []Attribute
	Data       [][]float64
}

// ParseARFF reads an ARFF file (dense or sparse rows, % comments, quoted
// names and values). name is used in error messages only.
func ParseARFF(r io.Reader, name string) (*ARFF, error) {
	a := &ARFF{}
	err := parseARFF(r, name, func(rel string, attrs []Attribute) error {
		a.Relation = rel
		a.Attributes = attrs
		return nil
	}, func(_ int, row []float64) error {
		a.Data = append(a.Data, slices.Clone(row))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// lineReader yields trimmed lines with their 1-based numbers; it accepts LF
// and CRLF line ends and lines of any length.
type lineReader struct {
	br   *bufio.Reader
	line int
	eof  bool
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<16)}
}

func (lr *lineReader) next() (string, bool, error) {
	if lr.eof {
		return "", false, nil
	}
	s, err := lr.br.ReadString('\n')
	if err == io.EOF {
		lr.eof = true
		if s == "" {
			return "", false, nil
		}
	} else if err != nil {
		return "", false, err
	}
	lr.line++
	return strings.TrimSpace(s), true, nil
}

// parseARFF streams an ARFF file: header is called once with the relation
// name and the attributes when @data is reached, then row once per instance
// with a reused buffer.
func parseARFF(r io.Reader, name string, header func(string, []Attribute) error, row func(line int, vals []float64) error) error {
	lr := newLineReader(r)
	var (
		relation string
		attrs    []Attribute
		seen     = map[string]int{}
		inData   bool
		buf      []float64
		setAt    []int // line-local marker for duplicate sparse indices
		nominal  []map[string]int
		rows     int
	)
	for {
		s, ok, err := lr.next()
		if err != nil {
			return fmt.Errorf("dataset: reading %s: %w", name, err)
		}
		if !ok {
			break
		}
		ln := lr.line
		if s == "" || s[0] == '%' {
			continue
		}
		if !inData {
			if s[0] != '@' {
				return parseErr(name, ln, "expected @relation, @attribute or @data before the data section, got %q", clip(s))
			}
			kw, rest := splitKeyword(s)
			switch strings.ToLower(kw) {
			case "@relation":
				if rest == "" {
					return parseErr(name, ln, "@relation without a name")
				}
				n, _, err := readName(rest)
				if err != nil {
					return parseErr(name, ln, "@relation: %v", err)
				}
				relation = n
			case "@attribute":
				at, err := parseAttribute(rest)
				if err != nil {
					return parseErr(name, ln, "%v", err)
				}
				if prev, dup := seen[at.Name]; dup {
					return parseErr(name, ln, "duplicate attribute %q (first declared as attribute %d)", at.Name, prev)
				}
				seen[at.Name] = len(attrs)
				attrs = append(attrs, at)
			case "@data":
				if len(attrs) == 0 {
					return parseErr(name, ln, "@data before any @attribute")
				}
				inData = true
				buf = make([]float64, len(attrs))
				setAt = make([]int, len(attrs))
				nominal = make([]map[string]int, len(attrs))
				for i, at := range attrs {
					if at.Nominal != nil {
						m := make(map[string]int, len(at.Nominal))
						for k, v := range at.Nominal {
							m[v] = k
						}
						nominal[i] = m
					}
				}
				if err := header(relation, attrs); err != nil {
					return err
				}
			default:
				return parseErr(name, ln, "unknown header keyword %q", kw)
			}
			continue
		}
		if s[0] == '@' {
			return parseErr(name, ln, "header line %q inside the @data section", clip(s))
		}
		rows++
		if s[0] == '{' {
			if err := parseSparse(s, attrs, nominal, buf, setAt, rows); err != nil {
				return parseErr(name, ln, "%v", err)
			}
		} else {
			if err := parseDense(s, attrs, nominal, buf); err != nil {
				return parseErr(name, ln, "%v", err)
			}
		}
		if err := row(ln, buf); err != nil {
			return err
		}
	}
	if !inData {
		return parseErr(name, 0, "no @data section")
	}
	return nil
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// splitKeyword splits "@attribute rest" at the first blank.
func splitKeyword(s string) (string, string) {
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i+1:])
}

// readName reads a possibly quoted ('...' or "...", backslash escapes) name
// at the start of s and returns it with the rest of s.
func readName(s string) (string, string, error) {
	if s == "" {
		return "", "", errors.New("missing name")
	}
	if q := s[0]; q == '\'' || q == '"' {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '\\' && i+1 < len(s):
				i++
				b.WriteByte(s[i])
			case c == q:
				return b.String(), strings.TrimSpace(s[i+1:]), nil
			default:
				b.WriteByte(c)
			}
		}
		return "", "", fmt.Errorf("unterminated quote in %q", clip(s))
	}
	i := strings.IndexAny(s, " \t{")
	if i < 0 {
		return s, "", nil
	}
	return s[:i], strings.TrimSpace(s[i:]), nil
}

func parseAttribute(rest string) (Attribute, error) {
	name, typ, err := readName(rest)
	if err != nil {
		return Attribute{}, fmt.Errorf("@attribute: %v", err)
	}
	if name == "" {
		return Attribute{}, errors.New("@attribute with an empty name")
	}
	if typ == "" {
		return Attribute{}, fmt.Errorf("@attribute %q has no type", name)
	}
	if typ[0] == '{' {
		if !strings.HasSuffix(typ, "}") {
			return Attribute{}, fmt.Errorf("@attribute %q: nominal list not closed with }", name)
		}
		parts, err := splitFields(typ[1 : len(typ)-1])
		if err != nil {
			return Attribute{}, fmt.Errorf("@attribute %q: %v", name, err)
		}
		vals := make([]string, 0, len(parts))
		dup := map[string]bool{}
		for _, p := range parts {
			v, err := unquote(p)
			if err != nil {
				return Attribute{}, fmt.Errorf("@attribute %q: %v", name, err)
			}
			if v == "" {
				return Attribute{}, fmt.Errorf("@attribute %q: empty nominal value", name)
			}
			if dup[v] {
				return Attribute{}, fmt.Errorf("@attribute %q: duplicate nominal value %q", name, v)
			}
			dup[v] = true
			vals = append(vals, v)
		}
		if len(vals) == 0 {
			return Attribute{}, fmt.Errorf("@attribute %q: empty nominal list", name)
		}
		return Attribute{Name: name, Nominal: vals}, nil
	}
	switch strings.ToLower(strings.Fields(typ)[0]) {
	case "numeric", "real", "integer":
		return Attribute{Name: name}, nil
	default:
		return Attribute{}, fmt.Errorf("@attribute %q: unsupported type %q (only numeric, real, integer and nominal {...})", name, typ)
	}
}

// splitFields splits s at commas that are not inside quotes and trims each
// field.
func splitFields(s string) ([]string, error) {
	var out []string
	start := 0
	balanced := scanUnquoted(s, func(i int, c byte) bool {
		if c == ',' {
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
		return true
	})
	if !balanced {
		return nil, fmt.Errorf("unterminated quote in %q", clip(s))
	}
	out = append(out, strings.TrimSpace(s[start:]))
	return out, nil
}

// scanUnquoted calls visit for every byte of s outside single or double
// quotes (a backslash escapes the next byte inside quotes) until visit returns
// false; it reports whether every quote was closed.
func scanUnquoted(s string, visit func(i int, c byte) bool) bool {
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0 && c == '\\':
			i++
		case q != 0 && c == q:
			q = 0
		case q == 0 && (c == '\'' || c == '"'):
			q = c
		case q == 0:
			if !visit(i, c) {
				return true
			}
		}
	}
	return q == 0
}

func unquote(s string) (string, error) {
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return s, nil
	}
	v, rest, err := readName(s)
	if err != nil {
		return "", err
	}
	if rest != "" {
		return "", fmt.Errorf("text after quoted value %q", clip(s))
	}
	return v, nil
}

// closingBrace returns the index of the first } outside quotes, or -1.
func closingBrace(s string) int {
	at := -1
	scanUnquoted(s, func(i int, c byte) bool {
		if c == '}' {
			at = i
			return false
		}
		return true
	})
	return at
}

func parseValue(tok string, at Attribute, nom map[string]int) (float64, error) {
	v, err := unquote(tok)
	if err != nil {
		return 0, err
	}
	if v == "" {
		return 0, fmt.Errorf("empty value for attribute %q", at.Name)
	}
	if v == "?" {
		return 0, fmt.Errorf("missing value (?) for attribute %q is not supported", at.Name)
	}
	if nom != nil {
		k, ok := nom[v]
		if !ok {
			return 0, fmt.Errorf("value %q is not one of the declared values %v of attribute %q", v, at.Nominal, at.Name)
		}
		return float64(k), nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("bad numeric value %q for attribute %q", v, at.Name)
	}
	return x, nil
}

func parseDense(s string, attrs []Attribute, nominal []map[string]int, buf []float64) error {
	fields, err := splitFields(s)
	if err != nil {
		return err
	}
	if len(fields) != len(attrs) {
		return fmt.Errorf("dense row has %d values, want %d (one per attribute)", len(fields), len(attrs))
	}
	for i, f := range fields {
		x, err := parseValue(f, attrs[i], nominal[i])
		if err != nil {
			return fmt.Errorf("value %d: %v", i+1, err)
		}
		buf[i] = x
	}
	return nil
}

// parseSparse fills buf from a "{i v, j w, ...}" row; stamp marks which
// indices this row has set (setAt[i] == stamp) to catch duplicates.
func parseSparse(s string, attrs []Attribute, nominal []map[string]int, buf []float64, setAt []int, stamp int) error {
	end := closingBrace(s)
	switch {
	case end < 0:
		return errors.New("sparse row not closed with }")
	case end != len(s)-1:
		return fmt.Errorf("text %q after the closing } of a sparse row (instance weights are not supported)", clip(s[end+1:]))
	}
	clear(buf)
	body := strings.TrimSpace(s[1:end])
	if body == "" {
		return nil
	}
	entries, err := splitFields(body)
	if err != nil {
		return err
	}
	for _, e := range entries {
		i := strings.IndexAny(e, " \t")
		if i < 0 {
			return fmt.Errorf("sparse entry %q is not \"index value\"", e)
		}
		idx, err := strconv.Atoi(e[:i])
		if err != nil {
			return fmt.Errorf("sparse entry %q: bad index", e)
		}
		if idx < 0 || idx >= len(attrs) {
			return fmt.Errorf("sparse index %d out of range [0,%d)", idx, len(attrs))
		}
		if setAt[idx] == stamp {
			return fmt.Errorf("sparse index %d given twice", idx)
		}
		setAt[idx] = stamp
		x, err := parseValue(strings.TrimSpace(e[i+1:]), attrs[idx], nominal[idx])
		if err != nil {
			return fmt.Errorf("sparse index %d: %v", idx, err)
		}
		buf[idx] = x
	}
	return nil
}

// MultiLabel is a multi-label data set: instance i has features X[i] and the
// relevant labels Y[i] (ascending indices into LabelNames).
type MultiLabel struct {
	FeatureNames []string
	LabelNames   []string
	X            [][]float64 // n x d features, in ARFF attribute order
	Y            [][]int     // per instance: indices into LabelNames, ascending
}

// ParseMulanXML reads a Mulan label file (<labels><label name="..."/>...)
// and returns the label names flattened in document order (a hierarchy's
// parent comes before its children). Duplicate or empty names are errors.
func ParseMulanXML(r io.Reader) ([]string, error) {
	type label struct {
		Name     string  `xml:"name,attr"`
		Children []label `xml:"label"`
	}
	var doc struct {
		XMLName xml.Name
		Labels  []label `xml:"label"`
	}
	if err := xml.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("dataset: Mulan XML: %w", err)
	}
	if doc.XMLName.Local != "labels" {
		return nil, fmt.Errorf("dataset: Mulan XML: root element is <%s>, want <labels>", doc.XMLName.Local)
	}
	var names []string
	seen := map[string]bool{}
	var walk func([]label) error
	walk = func(ls []label) error {
		for _, l := range ls {
			if l.Name == "" {
				return errors.New("dataset: Mulan XML: <label> without a name")
			}
			if seen[l.Name] {
				return fmt.Errorf("dataset: Mulan XML: duplicate label %q", l.Name)
			}
			seen[l.Name] = true
			names = append(names, l.Name)
			if err := walk(l.Children); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(doc.Labels); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("dataset: Mulan XML: no labels")
	}
	return names, nil
}

// ParseMulan reads a Mulan ARFF (dense or sparse) given the label attribute
// names (as from ParseMulanXML). Every label must be an attribute of the
// ARFF, either nominal with values exactly {0,1} (in any order) or numeric
// with values 0 or 1; a label is relevant when its value is 1. All other
// attributes are features, kept in ARFF order. LabelNames keeps the order of
// labels. name is used in error messages only.
func ParseMulan(arff io.Reader, name string, labels []string) (*MultiLabel, error) {
	if len(labels) == 0 {
		return nil, errors.New("dataset: ParseMulan: no label names")
	}
	labelIdx := make(map[string]int, len(labels))
	for i, l := range labels {
		if _, dup := labelIdx[l]; dup {
			return nil, fmt.Errorf("dataset: ParseMulan: duplicate label name %q", l)
		}
		labelIdx[l] = i
	}
	ml := &MultiLabel{LabelNames: slices.Clone(labels)}
	// role[a] >= 0: feature column; role[a] < 0: label -role[a]-1.
	var role []int
	// one[a]: the encoded value meaning "relevant" for label attribute a.
	var one []float64
	err := parseARFF(arff, name, func(_ string, attrs []Attribute) error {
		role = make([]int, len(attrs))
		one = make([]float64, len(attrs))
		found := make([]bool, len(labels))
		for a, at := range attrs {
			li, isLabel := labelIdx[at.Name]
			if !isLabel {
				role[a] = len(ml.FeatureNames)
				ml.FeatureNames = append(ml.FeatureNames, at.Name)
				continue
			}
			found[li] = true
			role[a] = -li - 1
			one[a] = 1
			if at.Nominal != nil {
				if len(at.Nominal) != 2 || !slices.Contains(at.Nominal, "0") || !slices.Contains(at.Nominal, "1") {
					return parseErr(name, 0, "label attribute %q must be {0,1}, is %v", at.Name, at.Nominal)
				}
				one[a] = float64(slices.Index(at.Nominal, "1"))
			}
		}
		for li, ok := range found {
			if !ok {
				return parseErr(name, 0, "label %q (from the label list) is not an attribute of the ARFF", labels[li])
			}
		}
		return nil
	}, func(line int, vals []float64) error {
		x := make([]float64, len(ml.FeatureNames))
		var y []int
		for a, v := range vals {
			if r := role[a]; r >= 0 {
				x[r] = v
				continue
			}
			li := -role[a] - 1
			switch {
			case v == one[a]:
				y = append(y, li)
			case v == 1-one[a]:
			default:
				return parseErr(name, line, "label %q has value %v, want 0 or 1", labels[li], v)
			}
		}
		slices.Sort(y)
		if y == nil {
			y = []int{}
		}
		ml.X = append(ml.X, x)
		ml.Y = append(ml.Y, y)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ml, nil
}

// LoadMulan loads a Mulan multi-label data set from its ARFF file (dense or
// sparse) and its XML label file. See ParseMulan for the conventions.
func LoadMulan(arffPath, xmlPath string) (*MultiLabel, error) {
	xf, err := os.Open(xmlPath)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	labels, err := ParseMulanXML(xf)
	xf.Close()
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, xmlPath)
	}
	af, err := os.Open(arffPath)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer af.Close()
	return ParseMulan(af, filepath.Base(arffPath), labels)
}
