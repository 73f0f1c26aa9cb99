// Command mkdemo rebuilds kernelrank's bundled demo corpus (internal/demo/corpus) from
// Debian's openclipart-svg package: real public-domain drawings with their
// authors' keywords, rendered to small PNGs with rsvg-convert.
//
// Usage (from the module root, after
// `apt-get install -y openclipart-svg librsvg2-bin`):
//
//	go run ./cmd/mkdemo [-src /usr/share/openclipart/svg] [-out internal/demo/corpus]
//	                    [-n 4000] [-size 64] [-seed 1] [-jobs N]
//
// Pipeline:
//
//  1. Walk -src (sorted, so the run is deterministic) and stream each SVG's
//     RDF metadata with encoding/xml: the drawing's dc:title (the one that is
//     a child of cc:Work, not the author's cc:Agent title) and the keywords in
//     dc:subject/rdf:Bag/rdf:li. Files that are not well-formed XML are skipped
//     with a logged reason. Entities declared in an internal DTD subset (the
//     Adobe Illustrator exports do that) and the HTML entities are resolved.
//  2. Normalise keywords (see normalizeKeywords) and keep drawings with at
//     least one keyword. Byte-identical files (the package ships ~660 copies
//     of drawings filed under several folders) are merged into one drawing
//     whose labels are all of its folders.
//  3. Select -n drawings (see selectDrawings): stratified over the curated
//     folders "<category>/<subcategory>" by water-filling, so every folder is
//     represented and the huge ones (computer/icons, shapes/stars) are capped;
//     inside a folder a seeded weighted sample prefers drawings whose keywords
//     are shared with other drawings.
//  4. Render the selection with rsvg-convert in parallel (a timeout per file),
//     re-encode with image/png BestCompression when that is smaller, and drop
//     failures and blank renders; a dropped drawing is excluded and the
//     selection is recomputed, so the output is exactly "select n among the
//     drawings that render".
//  5. Write images/<id>.png and corpus.jsonl (one JSON object a line, sorted by
//     id), delete stale PNGs, check the directory is at most -maxbytes, and
//     print a summary.
//
// Only the standard library is used; rsvg-convert is run as a subprocess.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"io/fs"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

const (
	nsDC  = "http://purl.org/dc/elements/1.1/"
	nsRDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	nsCC  = "http://web.resource.org/cc/"

	// maxKeywordLen is the longest keyword (in runes) that is kept; longer
	// "keywords" are sentences or pasted descriptions.
	maxKeywordLen = 40
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("mkdemo: ")
	var cfg config
	flag.StringVar(&cfg.src, "src", "/usr/share/openclipart/svg", "root of the openclipart-svg tree")
	flag.StringVar(&cfg.out, "out", "internal/demo/corpus", "output directory")
	flag.IntVar(&cfg.n, "n", 4000, "number of images to write (about 2.4 KB each at -size 64)")
	flag.IntVar(&cfg.size, "size", 64, "width and height of the rendered PNGs in pixels")
	flag.Int64Var(&cfg.seed, "seed", 1, "seed of the deterministic selection")
	flag.IntVar(&cfg.jobs, "jobs", runtime.GOMAXPROCS(0), "parallel parse and render workers")
	flag.Int64Var(&cfg.maxBytes, "maxbytes", 15_000_000, "fail if the output directory is larger than this")
	flag.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "rsvg-convert timeout per file")
	flag.BoolVar(&cfg.verbose, "v", false, "log every skipped file")
	flag.Parse()
	if cfg.n <= 0 || cfg.size <= 0 || cfg.jobs <= 0 {
		log.Fatal("-n, -size and -jobs must be positive")
	}
	if err := run(cfg); err != nil {
		log.Fatal(err)
	}
}

type config struct {
	src, out       string
	n, size, jobs  int
	seed, maxBytes int64
	timeout        time.Duration
	verbose        bool
}

// drawing is one distinct SVG (byte-identical copies merged).
type drawing struct {
	rel    string   // slash path relative to -src of the canonical copy
	id     string   // slug of rel, unique
	title  string   // dc:title, whitespace collapsed
	tags   []string // normalised keywords
	labels []string // sorted folder labels of all copies
	label  string   // primary label: the stratum used by the selection
}

// record is one line of corpus.jsonl.
type record struct {
	ID     string   `json:"id"`
	Tags   []string `json:"tags"`
	Title  string   `json:"title"`
	Image  string   `json:"image"`
	Labels []string `json:"labels"`
}

func run(cfg config) error {
	if _, err := exec.LookPath("rsvg-convert"); err != nil {
		return fmt.Errorf("rsvg-convert not found (apt-get install -y librsvg2-bin): %w", err)
	}
	drawings, st, err := load(cfg)
	if err != nil {
		return err
	}
	log.Printf("%d SVG files, %d skipped (malformed), %d without keywords, %d duplicate copies merged, %d eligible drawings in %d folders",
		st.files, st.malformed, st.noKeywords, st.duplicates, len(drawings), countLabels(drawings))

	cands := make([]candidate, len(drawings))
	for i, d := range drawings {
		cands[i] = candidate{stratum: d.label, tags: d.tags}
	}

	// Select, render what is new, exclude failures, and select again until
	// every selected drawing rendered.
	rendered := map[int][]byte{}
	failed := map[int]string{}
	var sel []int
	for {
		var ok []int
		for i := range cands {
			if _, bad := failed[i]; !bad {
				ok = append(ok, i)
			}
		}
		sub := make([]candidate, len(ok))
		for j, i := range ok {
			sub[j] = cands[i]
		}
		sel = sel[:0]
		for _, j := range selectDrawings(sub, cfg.n, cfg.seed) {
			sel = append(sel, ok[j])
		}
		var todo []int
		for _, i := range sel {
			if _, done := rendered[i]; !done {
				todo = append(todo, i)
			}
		}
		if len(todo) == 0 {
			break
		}
		log.Printf("rendering %d drawings with %d jobs", len(todo), cfg.jobs)
		imgs, errs := renderAll(cfg, drawings, todo)
		for k, i := range todo {
			if errs[k] != nil {
				failed[i] = errs[k].Error()
				log.Printf("render failed, excluded: %s: %v", drawings[i].rel, errs[k])
				continue
			}
			rendered[i] = imgs[k]
		}
	}

	if err := write(cfg, drawings, sel, rendered); err != nil {
		return err
	}
	total, err := dirSize(cfg.out)
	if err != nil {
		return err
	}

	printSummary(os.Stdout, cfg, st, drawings, sel, len(failed), total)
	if total > cfg.maxBytes {
		return fmt.Errorf("%s is %d bytes, over the %d byte limit: lower -n or -size", cfg.out, total, cfg.maxBytes)
	}
	return nil
}

type loadStats struct {
	files, malformed, noKeywords, duplicates int
}

// load walks the tree, parses every SVG in parallel and returns the eligible
// drawings in sorted path order with unique ids.
func load(cfg config) ([]drawing, loadStats, error) {
	var st loadStats
	var rels []string
	links := map[string]bool{}
	err := filepath.WalkDir(cfg.src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.EqualFold(filepath.Ext(p), ".svg") {
			return nil
		}
		// The package links one drawing into several folders with
		// symlinks; keep those (they add labels) but only if they resolve
		// to a regular file.
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			rel, err := filepath.Rel(cfg.src, p)
			if err != nil {
				return err
			}
			rels = append(rels, filepath.ToSlash(rel))
			if d.Type()&fs.ModeSymlink != 0 {
				links[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, st, fmt.Errorf("walking %s: %w (is openclipart-svg installed?)", cfg.src, err)
	}
	slices.Sort(rels)
	st.files = len(rels)
	if len(rels) == 0 {
		return nil, st, fmt.Errorf("no .svg files under %s (apt-get install -y openclipart-svg)", cfg.src)
	}

	type parsed struct {
		meta Meta
		hash [32]byte
		err  error
	}
	res := make([]parsed, len(rels))
	parallel(len(rels), cfg.jobs, func(i int) {
		b, err := os.ReadFile(filepath.Join(cfg.src, filepath.FromSlash(rels[i])))
		if err != nil {
			res[i].err = err
			return
		}
		res[i].hash = sha256.Sum256(b)
		res[i].meta, res[i].err = ParseMeta(bytes.NewReader(b))
	})

	// Merge byte-identical copies (symlinks and a few real duplicates): the
	// canonical copy, which gives the id, title, keywords and stratum, is
	// the first real file in path order.
	byHash := map[[32]byte]int{}
	var groups [][]int
	for i, r := range res {
		if r.err != nil {
			st.malformed++
			log.Printf("skipping %s: %v", rels[i], r.err)
			continue
		}
		if g, ok := byHash[r.hash]; ok {
			groups[g] = append(groups[g], i)
			st.duplicates++
			continue
		}
		byHash[r.hash] = len(groups)
		groups = append(groups, []int{i})
	}
	ids := AssignIDs(rels)
	var out []drawing
	for _, g := range groups {
		canon := g[0]
		for _, i := range g {
			if !links[rels[i]] {
				canon = i
				break
			}
		}
		tags := NormalizeKeywords(res[canon].meta.Keywords)
		if len(tags) == 0 {
			st.noKeywords++
			if cfg.verbose {
				log.Printf("no keywords: %s", rels[canon])
			}
			continue
		}
		var labels []string
		for _, i := range g {
			labels = append(labels, Label(rels[i]))
		}
		slices.Sort(labels)
		out = append(out, drawing{
			rel:    rels[canon],
			id:     ids[canon],
			title:  collapseSpace(res[canon].meta.Title),
			tags:   tags,
			labels: slices.Compact(labels),
			label:  Label(rels[canon]),
		})
	}
	slices.SortFunc(out, func(a, b drawing) int { return strings.Compare(a.rel, b.rel) })
	return out, st, nil
}

func countLabels(ds []drawing) int {
	m := map[string]bool{}
	for _, d := range ds {
		m[d.label] = true
	}
	return len(m)
}

// parallel runs f(0..n-1) on jobs goroutines.
func parallel(n, jobs int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, jobs) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// ---------------------------------------------------------------------------
// Metadata parsing

// Meta is the metadata of one SVG.
type Meta struct {
	Title    string   // dc:title of the cc:Work, as written
	Keywords []string // raw dc:subject keywords, in document order
}

var entityDecl = regexp.MustCompile(`<!ENTITY\s+([A-Za-z_:][-A-Za-z0-9_:.]*)\s+(?:"([^"]*)"|'([^']*)')`)

// ParseMeta streams an SVG document and extracts the title and keywords of
// its RDF metadata. It reads the whole document so that a file that is not
// well-formed XML is reported as an error rather than half-parsed.
//
// The title is the dc:title whose parent is cc:Work (falling back to the
// first dc:title outside a cc:Agent); the dc:title inside dc:creator etc. is
// the author's name and is ignored. Keywords are the rdf:li items of
// dc:subject (bare text directly inside dc:subject is accepted too), taken
// only outside cc:Agent elements.
func ParseMeta(r io.Reader) (Meta, error) {
	d := xml.NewDecoder(r)
	d.Strict = true
	d.CharsetReader = charsetReader
	d.Entity = make(map[string]string, len(xml.HTMLEntity))
	for k, v := range xml.HTMLEntity {
		d.Entity[k] = v
	}

	var (
		m          Meta
		stack      []xml.Name
		workTitle  = false // a cc:Work dc:title was found
		inTitle    = false
		titleBuf   strings.Builder
		titleDepth int
		inSubject  = 0 // depth of the open dc:subject, 0 if none
		inLi       = false
		liBuf      strings.Builder
		subjText   strings.Builder
		agentDepth = 0 // number of open cc:Agent elements
	)
	isDC := func(n xml.Name, local string) bool { return n.Local == local && (n.Space == nsDC || n.Space == "dc") }
	isRDF := func(n xml.Name, local string) bool { return n.Local == local && (n.Space == nsRDF || n.Space == "rdf") }
	isCC := func(n xml.Name, local string) bool { return n.Local == local && (n.Space == nsCC || n.Space == "cc") }

	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Meta{}, err
		}
		switch t := tok.(type) {
		case xml.Directive:
			// <!DOCTYPE svg [ <!ENTITY ns_svg "http://..."> ... ]>
			for _, e := range entityDecl.FindAllStringSubmatch(string(t), -1) {
				d.Entity[e[1]] = e[2] + e[3]
			}
		case xml.StartElement:
			parent := xml.Name{}
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			stack = append(stack, t.Name)
			switch {
			case isCC(t.Name, "Agent"):
				agentDepth++
			case agentDepth > 0:
			case isDC(t.Name, "title") && !workTitle && !inTitle:
				// A cc:Work title wins over an earlier stray one.
				if isCC(parent, "Work") || m.Title == "" {
					inTitle = true
					titleDepth = len(stack)
					titleBuf.Reset()
					if isCC(parent, "Work") {
						workTitle = true
					}
				}
			case isDC(t.Name, "subject") && inSubject == 0:
				inSubject = len(stack)
				subjText.Reset()
			case inSubject > 0 && isRDF(t.Name, "li"):
				inLi = true
				liBuf.Reset()
			}
		case xml.EndElement:
			switch {
			case isCC(t.Name, "Agent"):
				agentDepth--
			case inTitle && len(stack) == titleDepth:
				inTitle = false
				m.Title = titleBuf.String()
			case inLi && isRDF(t.Name, "li"):
				inLi = false
				m.Keywords = append(m.Keywords, liBuf.String())
			case inSubject > 0 && inSubject == len(stack):
				inSubject = 0
				if s := strings.TrimSpace(subjText.String()); s != "" {
					m.Keywords = append(m.Keywords, s)
				}
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			switch {
			case inTitle:
				titleBuf.Write(t)
			case inLi:
				liBuf.Write(t)
			case inSubject == len(stack) && inSubject > 0:
				subjText.Write(t)
			}
		}
	}
	return m, nil
}

// charsetReader handles the non-UTF-8 encodings found in the package
// (ISO-8859-1) without leaving the standard library.
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return input, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "windows-1252", "cp1252":
		return &latin1Reader{r: bufio.NewReader(input)}, nil
	}
	return nil, fmt.Errorf("unsupported charset %q", charset)
}

// latin1Reader converts ISO-8859-1 bytes to UTF-8 (windows-1252 is read as
// ISO-8859-1, which only differs in the rarely used 0x80-0x9F range).
type latin1Reader struct {
	r   *bufio.Reader
	buf []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	for len(l.buf) < len(p) {
		b, err := l.r.ReadByte()
		if err != nil {
			if len(l.buf) > 0 {
				break
			}
			return 0, err
		}
		l.buf = utf8.AppendRune(l.buf, rune(b))
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// ---------------------------------------------------------------------------
// Normalisation, labels and ids

// NormalizeKeywords applies the corpus' keyword rules, in order:
//   - split each raw keyword on ',' and ';' (a few authors typed "rome,italy"
//     into a single field);
//   - trim, lowercase, collapse runs of white space to one space;
//   - drop empty keywords, pure numbers (only digits and . , + - with at
//     least one digit, e.g. "01", "2005", "3.5"), keywords longer than 40
//     runes, and the debris of openclipart's old Perl export script, which
//     wrote stringified hash references into the keyword lists: "hash"
//     (on 1,794 drawings across unrelated folders: a lizard, houses, books,
//     all of computer/icons), "hash(0x8a095fc)" and bare "0x8a09650";
//   - drop duplicates, keeping the first occurrence (author's order).
func NormalizeKeywords(raw []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range raw {
		for _, k := range strings.FieldsFunc(r, func(c rune) bool { return c == ',' || c == ';' }) {
			k = collapseSpace(strings.ToLower(k))
			if k == "" || isNumber(k) || utf8.RuneCountInString(k) > maxKeywordLen || isPerlDebris(k) || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

var perlRef = regexp.MustCompile(`^(?:(?:hash|array|scalar|code)\()?0x[0-9a-f]+\)?$`)

// isPerlDebris reports whether a (lowercased) keyword is a stringified Perl
// reference or the bare word "hash" left by the same bug.
func isPerlDebris(s string) bool { return s == "hash" || perlRef.MatchString(s) }

func isNumber(s string) bool {
	digit := false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c == '.' || c == ',' || c == '+' || c == '-':
		default:
			return false
		}
	}
	return digit
}

// Label is the curated folder label of a file path relative to the tree:
// "<category>/<subcategory>" for files two or more folders deep (deeper
// folders are folded into their subcategory), "<category>" for files directly
// in a category folder.
func Label(rel string) string {
	parts := strings.Split(rel, "/")
	switch {
	case len(parts) >= 3:
		return parts[0] + "/" + parts[1]
	case len(parts) == 2:
		return parts[0]
	}
	return "unsorted"
}

// Slug is the id stem of a relative path: category, subcategory and base
// name without extension, lowercased, every run of characters outside
// [a-z0-9] replaced by one '-', with leading and trailing '-' removed.
func Slug(rel string) string {
	parts := strings.Split(strings.TrimSuffix(rel, path.Ext(rel)), "/")
	if len(parts) > 3 {
		parts = []string{parts[0], parts[1], parts[len(parts)-1]}
	}
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(strings.Join(parts, "-")) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(c)
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}

// AssignIDs gives every path a unique id: its Slug, or Slug-2, Slug-3, ...
// when an earlier path (in the given order) took it. Callers pass the full
// sorted file list, so a file's id does not depend on -n or -seed.
func AssignIDs(rels []string) []string {
	ids := make([]string, len(rels))
	used := map[string]bool{}
	for i, r := range rels {
		s := Slug(r)
		id := s
		for k := 2; used[id]; k++ {
			id = fmt.Sprintf("%s-%d", s, k)
		}
		used[id] = true
		ids[i] = id
	}
	return ids
}

// ---------------------------------------------------------------------------
// Selection

type candidate struct {
	stratum string   // folder label
	tags    []string // normalised keywords
}

// selectDrawings picks min(n, len(cs)) candidates and returns their indices
// in increasing order. The result depends only on cs, n and seed.
//
// Rule:
//
//  1. Quotas by water-filling over strata (folder labels): every stratum gets
//     min(size, c) drawings for the largest c whose total fits in n; the
//     few left-over slots go one each to strata still larger than c, in a
//     seeded order. Small folders are taken whole, every folder is
//     represented once n >= number of folders, and the big ones
//     (computer/icons and shapes/stars hold 1,853 and 1,378 of the 8,121
//     files) cannot crowd out the rest. Everyday keywords (cat, car,
//     flower, bird, house) live mostly in the small and middle-sized
//     folders, which are taken whole or nearly, so they keep all or most
//     of their images; the capped big folders still give dozens (flag).
//  2. Inside a stratum, a seeded weighted sample without replacement
//     (Efraimidis-Spirakis: sort by log(u)/w descending). The weight w of a
//     drawing is the number of its keywords carried by at least one other
//     eligible drawing; a keyword no other drawing has cannot match any
//     other image and is useless for search. Drawings with w = 0 come
//     last, in seeded order, and are only taken when the quota exhausts the
//     others.
func selectDrawings(cs []candidate, n int, seed int64) []int {
	if n >= len(cs) {
		all := make([]int, len(cs))
		for i := range all {
			all[i] = i
		}
		return all
	}
	if n <= 0 {
		return nil
	}
	df := map[string]int{}
	for _, c := range cs {
		for _, t := range c.tags {
			df[t]++
		}
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6b65726e656c72)) // "kernelr"

	// Within-stratum ranking keys, drawn in candidate order.
	type ranked struct {
		i   int
		w   int
		key float64
	}
	strata := map[string][]ranked{}
	var names []string
	for i, c := range cs {
		w := 0
		for _, t := range c.tags {
			if df[t] >= 2 {
				w++
			}
		}
		u := 1 - rng.Float64() // (0, 1]
		key := math.Log(u)     // <= 0
		if w > 0 {
			key /= float64(w)
		}
		if _, ok := strata[c.stratum]; !ok {
			names = append(names, c.stratum)
		}
		strata[c.stratum] = append(strata[c.stratum], ranked{i, w, key})
	}
	slices.Sort(names)
	for _, s := range names {
		slices.SortStableFunc(strata[s], func(a, b ranked) int {
			if (a.w > 0) != (b.w > 0) {
				if a.w > 0 {
					return -1
				}
				return 1
			}
			return cmp.Compare(b.key, a.key)
		})
	}

	// Water-filling quotas.
	sizes := make([]int, len(names))
	for k, s := range names {
		sizes[k] = len(strata[s])
	}
	fill := func(c int) int {
		t := 0
		for _, z := range sizes {
			t += min(z, c)
		}
		return t
	}
	lo, hi := 0, slices.Max(sizes) // fill(lo) <= n < fill(hi) since n < len(cs)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fill(mid) <= n {
			lo = mid
		} else {
			hi = mid
		}
	}
	quota := make([]int, len(names))
	for k, z := range sizes {
		quota[k] = min(z, lo)
	}
	left := n - fill(lo)
	for _, k := range rng.Perm(len(names)) {
		if left == 0 {
			break
		}
		if sizes[k] > lo {
			quota[k]++
			left--
		}
	}

	var out []int
	for k, s := range names {
		for _, r := range strata[s][:quota[k]] {
			out = append(out, r.i)
		}
	}
	slices.Sort(out)
	return out
}

// ---------------------------------------------------------------------------
// Rendering and output

// renderAll renders drawings[idx[k]] for every k in parallel.
func renderAll(cfg config, drawings []drawing, idx []int) ([][]byte, []error) {
	imgs := make([][]byte, len(idx))
	errs := make([]error, len(idx))
	parallel(len(idx), cfg.jobs, func(k int) {
		p := filepath.Join(cfg.src, filepath.FromSlash(drawings[idx[k]].rel))
		imgs[k], errs[k] = render(p, cfg.size, cfg.timeout)
	})
	return imgs, errs
}

// render runs rsvg-convert on one file and returns the smaller of its PNG and
// a BestCompression re-encoding. A render that is a single flat colour is an
// error (the drawing lies outside its canvas or failed silently).
func render(svg string, size int, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s := fmt.Sprint(size)
	cmd := exec.CommandContext(ctx, "rsvg-convert", "-w", s, "-h", s, "--keep-aspect-ratio", "-b", "white", "-f", "png", svg)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("timeout after %v", timeout)
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, fmt.Errorf("rsvg-convert: %v: %s", err, msg)
	}
	raw := stdout.Bytes()
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("rsvg-convert output: %w", err)
	}
	if flat(img) {
		return nil, errors.New("blank render (a single colour)")
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err == nil && buf.Len() < len(raw) {
		return buf.Bytes(), nil
	}
	return raw, nil
}

func flat(img image.Image) bool {
	b := img.Bounds()
	r0, g0, b0, a0 := img.At(b.Min.X, b.Min.Y).RGBA()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			if r != r0 || g != g0 || bl != b0 || a != a0 {
				return false
			}
		}
	}
	return true
}

// write stores the PNGs and corpus.jsonl and removes PNGs of an earlier run
// that are not part of this one.
func write(cfg config, drawings []drawing, sel []int, rendered map[int][]byte) error {
	imgDir := filepath.Join(cfg.out, "images")
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		return err
	}
	order := slices.Clone(sel)
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(drawings[a].id, drawings[b].id) })

	keep := map[string]bool{}
	var jsonl bytes.Buffer
	enc := json.NewEncoder(&jsonl)
	enc.SetEscapeHTML(false)
	for _, i := range order {
		d := drawings[i]
		name := d.id + ".png"
		keep[name] = true
		if err := os.WriteFile(filepath.Join(imgDir, name), rendered[i], 0o644); err != nil {
			return err
		}
		if err := enc.Encode(record{ID: d.id, Tags: d.tags, Title: d.title, Image: "images/" + name, Labels: d.labels}); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(cfg.out, "corpus.jsonl"), jsonl.Bytes(), 0o644); err != nil {
		return err
	}
	old, err := os.ReadDir(imgDir)
	if err != nil {
		return err
	}
	for _, e := range old {
		if strings.HasSuffix(e.Name(), ".png") && !keep[e.Name()] {
			if err := os.Remove(filepath.Join(imgDir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// dirSize is the total size in bytes of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			total += fi.Size()
		}
		return nil
	})
	return total, err
}

func printSummary(w io.Writer, cfg config, st loadStats, drawings []drawing, sel []int, failures int, total int64) {
	tf := map[string]int{}
	labels := map[string]int{}
	cats := map[string]bool{}
	nTags := 0
	for _, i := range sel {
		for _, t := range drawings[i].tags {
			tf[t]++
		}
		nTags += len(drawings[i].tags)
		labels[drawings[i].label]++
		cats[strings.SplitN(drawings[i].label, "/", 2)[0]] = true
	}
	type kv struct {
		k string
		v int
	}
	var top []kv
	shared := 0
	for k, v := range tf {
		top = append(top, kv{k, v})
		if v >= 2 {
			shared++
		}
	}
	slices.SortFunc(top, func(a, b kv) int {
		if c := cmp.Compare(b.v, a.v); c != 0 {
			return c
		}
		return strings.Compare(a.k, b.k)
	})
	fmt.Fprintf(w, "source:            %s (%d SVG files, %d malformed, %d without keywords, %d duplicate copies merged)\n",
		cfg.src, st.files, st.malformed, st.noKeywords, st.duplicates)
	fmt.Fprintf(w, "eligible drawings: %d in %d folders\n", len(drawings), countLabels(drawings))
	fmt.Fprintf(w, "images written:    %d (%dx%d PNG, seed %d) from %d folders in %d categories\n",
		len(sel), cfg.size, cfg.size, cfg.seed, len(labels), len(cats))
	fmt.Fprintf(w, "render failures:   %d (excluded and replaced)\n", failures)
	fmt.Fprintf(w, "distinct tags:     %d (%d used by 2+ images)\n", len(tf), shared)
	fmt.Fprintf(w, "mean tags/image:   %.2f\n", float64(nTags)/float64(max(1, len(sel))))
	fmt.Fprintf(w, "total size:        %d bytes in %s (limit %d)\n", total, cfg.out, cfg.maxBytes)
	fmt.Fprintf(w, "top tags:\n")
	for k, e := range top[:min(30, len(top))] {
		fmt.Fprintf(w, "  %2d. %-20s %d\n", k+1, e.k, e.v)
	}
}
