package social

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The import formats LoadDir reads.
const (
	FormatKernelrank  = "kernelrank"   // users.jsonl + friends.csv, memberships.csv, comments.csv (README.md)
	FormatEgoFacebook = "ego-facebook" // SNAP ego-Facebook: facebook_combined.txt and N.{featnames,feat,egofeat,circles}
	FormatBlogCatalog = "blogcatalog"  // nodes.csv, edges.csv, groups.csv, group-edges.csv
)

// ImportOptions controls LoadDir.
type ImportOptions struct {
	// Format forces a format; empty means detect it from the file names.
	Format string
	// StopOnError makes the first malformed line (or unknown id) an error;
	// otherwise such lines are skipped and listed in the report.
	StopOnError bool
}

// ImportReport says what LoadDir read, per file, and every problem it met.
type ImportReport struct {
	Format string
	Files  []*FileReport
	// Problems lists the first MaxProblems problems in the order met.
	Problems []*LineError
	// MoreProblems counts the problems beyond MaxProblems.
	MoreProblems int
}

// MaxProblems caps the problems an ImportReport lists (all are counted).
const MaxProblems = 1000

// FileReport counts what one file gave.
type FileReport struct {
	Name    string // path relative to the import directory
	Lines   int    // non-blank lines read
	Records int    // records imported (users, edges, memberships, comments, features)
	Skipped int    // malformed lines and unknown ids, each listed in Problems
	// SelfLoops and Duplicates count friendships (or memberships) dropped
	// because both ends are one user, or because they were already read
	// (in either orientation); they are not problems.
	SelfLoops  int
	Duplicates int
}

// LineError is a problem at a line of an input file.
type LineError struct {
	File string
	Line int // 1-based; 0 when the problem is not tied to a line
	Msg  string
}

func (e *LineError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("social: %s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("social: %s: %s", e.File, e.Msg)
}

// Skipped returns the number of skipped lines and records over all files.
func (r *ImportReport) Skipped() int {
	n := 0
	for _, f := range r.Files {
		n += f.Skipped
	}
	return n
}

// String summarises the report, one line a file.
func (r *ImportReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "format %s\n", r.Format)
	for _, f := range r.Files {
		fmt.Fprintf(&b, "%s: %d lines, %d records, %d skipped, %d self-loops, %d duplicates\n",
			f.Name, f.Lines, f.Records, f.Skipped, f.SelfLoops, f.Duplicates)
	}
	if n := len(r.Problems) + r.MoreProblems; n > 0 {
		fmt.Fprintf(&b, "%d problems, the first: %v\n", n, r.Problems[0])
	}
	return b.String()
}

// DetectFormat returns the format of the data in dir from the names of the
// files there: users.jsonl (kernelrank), facebook_combined.txt
// (ego-Facebook), nodes.csv with edges.csv (BlogCatalog).
func DetectFormat(dir string) (string, error) {
	has := func(name string) bool {
		fi, err := os.Stat(filepath.Join(dir, name))
		return err == nil && !fi.IsDir()
	}
	switch {
	case has(kernelrankUsers):
		return FormatKernelrank, nil
	case has(egoCombined):
		return FormatEgoFacebook, nil
	case has(blogNodes) && has(blogEdges):
		return FormatBlogCatalog, nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("social: %s is not a directory", dir)
	}
	return "", fmt.Errorf("social: %s: no %s (kernelrank), %s (ego-Facebook) or %s and %s (BlogCatalog)",
		dir, kernelrankUsers, egoCombined, blogNodes, blogEdges)
}

// LoadDir reads the data set in dir. The report is returned in every case;
// with opts.StopOnError the first problem is returned as a *LineError and no
// data set, otherwise problem lines are skipped and listed in the report.
// Self-loops and repeated friendships or memberships are dropped and counted.
func LoadDir(dir string, opts ImportOptions) (*Dataset, *ImportReport, error) {
	format := opts.Format
	if format == "" {
		var err error
		if format, err = DetectFormat(dir); err != nil {
			return nil, &ImportReport{}, err
		}
	}
	b := newBuilder(dir, format, opts)
	var err error
	switch format {
	case FormatKernelrank:
		err = b.loadKernelrank()
	case FormatEgoFacebook:
		err = b.loadEgoFacebook()
	case FormatBlogCatalog:
		err = b.loadBlogCatalog()
	default:
		err = fmt.Errorf("social: unknown format %q (want %s, %s or %s)", format, FormatKernelrank, FormatEgoFacebook, FormatBlogCatalog)
	}
	if err != nil {
		return nil, b.rep, err
	}
	return b.finish(), b.rep, nil
}

// builder accumulates a data set while the files of one import are read.
type builder struct {
	dir  string
	opts ImportOptions
	rep  *ImportReport
	ds   *Dataset

	friends     map[[2]int]struct{}
	groups      map[string]struct{}
	memberships map[membership]struct{}
	comments    map[[2]int]int
	// implicitGroups: a membership may name a group not declared before.
	implicitGroups bool
}

type membership struct {
	user  int
	group string
}

func newBuilder(dir, format string, opts ImportOptions) *builder {
	return &builder{
		dir:         dir,
		opts:        opts,
		rep:         &ImportReport{Format: format},
		ds:          &Dataset{Format: format},
		friends:     map[[2]int]struct{}{},
		groups:      map[string]struct{}{},
		memberships: map[membership]struct{}{},
		comments:    map[[2]int]int{},
	}
}

// maxLine bounds the length of a line (a JSONL user with many photos).
const maxLine = 64 << 20

// eachLine calls fn for every non-blank line of the file name (relative to
// the import directory), with CR LF or LF line ends, with or without a final
// newline, the line end and surrounding white space removed. It stops at the
// first error fn returns.
func (b *builder) eachLine(name string, fn func(fr *FileReport, line int, text string) error) error {
	f, err := os.Open(filepath.Join(b.dir, name))
	if err != nil {
		return fmt.Errorf("social: %w", err)
	}
	defer f.Close()
	fr := &FileReport{Name: name}
	b.rep.Files = append(b.rep.Files, fr)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		fr.Lines++
		if err := fn(fr, line, text); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &LineError{File: name, Line: line + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxLine)}
		}
		return fmt.Errorf("social: reading %s: %w", name, err)
	}
	return nil
}

// problem records a problem at a line; it returns it as an error when the
// import stops on errors, nil when the line is to be skipped.
func (b *builder) problem(fr *FileReport, line int, format string, args ...any) error {
	fr.Skipped++
	e := &LineError{File: fr.Name, Line: line, Msg: fmt.Sprintf(format, args...)}
	if len(b.rep.Problems) < MaxProblems {
		b.rep.Problems = append(b.rep.Problems, e)
	} else {
		b.rep.MoreProblems++
	}
	if b.opts.StopOnError {
		return e
	}
	return nil
}

// setUsers fixes the users (sorted in natural order of their ids). Ids must
// be unique.
func (b *builder) setUsers(users []User) {
	slices.SortFunc(users, func(x, y User) int { return naturalOrder(x.ID, y.ID) })
	b.ds.Users = users
	b.ds.userIndex = make(map[string]int, len(users))
	for i, u := range users {
		b.ds.userIndex[u.ID] = i
	}
}

// usersFromIDs makes users with the given unique ids and nothing else.
func usersFromIDs(ids map[string]struct{}) []User {
	users := make([]User, 0, len(ids))
	for id := range ids {
		users = append(users, User{ID: id})
	}
	return users
}

// user looks id up; an unknown id is a problem (what names the field).
func (b *builder) user(fr *FileReport, line int, what, id string) (int, bool, error) {
	if i, ok := b.ds.userIndex[id]; ok {
		return i, true, nil
	}
	return 0, false, b.problem(fr, line, "unknown user %q (%s)", id, what)
}

// addFriend records the friendship of the users with ids x and y.
func (b *builder) addFriend(fr *FileReport, line int, x, y string) error {
	i, ok, err := b.user(fr, line, "first column", x)
	if !ok {
		return err
	}
	j, ok, err := b.user(fr, line, "second column", y)
	if !ok {
		return err
	}
	if i == j {
		fr.SelfLoops++
		return nil
	}
	key := [2]int{min(i, j), max(i, j)}
	if _, dup := b.friends[key]; dup {
		fr.Duplicates++
		return nil
	}
	b.friends[key] = struct{}{}
	fr.Records++
	return nil
}

// declareGroup adds a group; a repeated name is a problem (ok false).
func (b *builder) declareGroup(fr *FileReport, line int, name string) (bool, error) {
	if _, dup := b.groups[name]; dup {
		return false, b.problem(fr, line, "group %q declared twice", name)
	}
	b.groups[name] = struct{}{}
	return true, nil
}

// addMembership records that user i is in the named group.
func (b *builder) addMembership(fr *FileReport, line, i int, group string) error {
	if _, ok := b.groups[group]; !ok {
		if !b.implicitGroups {
			return b.problem(fr, line, "unknown group %q", group)
		}
		b.groups[group] = struct{}{}
	}
	key := membership{i, group}
	if _, dup := b.memberships[key]; dup {
		fr.Duplicates++
		return nil
	}
	b.memberships[key] = struct{}{}
	fr.Records++
	return nil
}

// finish sorts the relations into the data set.
func (b *builder) finish() *Dataset {
	ds := b.ds
	ds.Groups = make([]string, 0, len(b.groups))
	for g := range b.groups {
		ds.Groups = append(ds.Groups, g)
	}
	slices.SortFunc(ds.Groups, naturalOrder)
	ds.groupIndex = make(map[string]int, len(ds.Groups))
	for k, g := range ds.Groups {
		ds.groupIndex[g] = k
	}
	ds.Friends = sortedKeys(b.friends)
	ms := make(map[[2]int]struct{}, len(b.memberships))
	for m := range b.memberships {
		ms[[2]int{m.user, ds.groupIndex[m.group]}] = struct{}{}
	}
	ds.Memberships = sortedKeys(ms)
	for _, p := range sortedKeys(b.comments) {
		ds.Comments = append(ds.Comments, Comment{Author: p[0], Owner: p[1], Count: b.comments[p]})
	}
	return ds
}

func sortedKeys[V any](m map[[2]int]V) [][2]int {
	out := make([][2]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, comparePairs)
	return out
}

// csvFields splits a line of the kernelrank or BlogCatalog CSV files (no
// quoting: ids cannot contain commas) into exactly want trimmed, non-empty
// fields.
func csvFields(text string, want int) ([]string, error) {
	f := strings.Split(text, ",")
	if len(f) != want {
		return nil, fmt.Errorf("%d comma-separated fields, want %d", len(f), want)
	}
	for k := range f {
		if f[k] = strings.TrimSpace(f[k]); f[k] == "" {
			return nil, fmt.Errorf("field %d is empty", k+1)
		}
	}
	return f, nil
}
