package social

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestLoadEgoFacebookGolden(t *testing.T) {
	ds, rep := realDataset(t, "ego-facebook")
	if ds.Format != FormatEgoFacebook || rep.Format != FormatEgoFacebook {
		t.Errorf("format %q / %q", ds.Format, rep.Format)
	}
	// MANIFEST.md: 4,039 users, 88,234 friendships, 193 circles; the circle
	// lines list 4,233 members in all, none twice (counted with awk).
	if ds.N() != 4039 || len(ds.Friends) != 88234 || len(ds.Groups) != 193 || len(ds.Memberships) != 4233 {
		t.Fatalf("%d users, %d friendships, %d groups, %d memberships; want 4039, 88234, 193, 4233",
			ds.N(), len(ds.Friends), len(ds.Groups), len(ds.Memberships))
	}
	if len(rep.Problems) != 0 || rep.Skipped() != 0 {
		t.Errorf("problems on the real files: %v", rep)
	}
	for _, f := range rep.Files {
		if f.SelfLoops != 0 || f.Duplicates != 0 {
			t.Errorf("%s: %d self-loops, %d duplicates, want none", f.Name, f.SelfLoops, f.Duplicates)
		}
	}
	// Users are the ids 0..4038 in numeric order.
	for _, id := range []string{"0", "9", "10", "4038"} {
		if i, ok := ds.UserIndex(id); !ok || ds.Users[i].ID != id || i != atoi(t, id) {
			t.Errorf("user %q at index %d (%v)", id, i, ok)
		}
	}
	name := regexp.MustCompile(`^(0|107|348|414|686|698|1684|1912|3437|3980)/circle[0-9]+$`)
	for _, g := range ds.Groups {
		if !name.MatchString(g) {
			t.Errorf("group name %q, want ego/circleK", g)
		}
	}
	// 0.circles line 1: circle0<TAB>71<TAB>215<TAB>54<TAB>61<TAB>298...
	g, ok := ds.GroupIndex("0/circle0")
	if !ok {
		t.Fatal("no group 0/circle0")
	}
	for _, id := range []string{"71", "215", "54", "61", "298"} {
		i, _ := ds.UserIndex(id)
		if _, found := slices.BinarySearchFunc(ds.Memberships, [2]int{i, g}, comparePairs); !found {
			t.Errorf("user %s not in 0/circle0", id)
		}
	}

	// Node 25 appears in 0.feat only. Read by hand from 0.feat and
	// 0.featnames: local index 149 is "work;employer;id;anonymized feature
	// 50", while local index 50 is "education;school;id;anonymized feature
	// 50": K = 50 alone would merge two different features.
	u := ds.Users[atoi(t, "25")]
	wantAttrs := []string{
		"education;concentration;id;anonymized feature 14", "education;school;id;anonymized feature 47",
		"education;school;id;anonymized feature 50", "education;type;anonymized feature 53",
		"education;type;anonymized feature 55", "education;year;id;anonymized feature 59",
		"education;year;id;anonymized feature 65", "gender;anonymized feature 78",
		"locale;anonymized feature 127", "location;id;anonymized feature 132",
		"work;employer;id;anonymized feature 50", "work;end_date;anonymized feature 158",
		"work;end_date;anonymized feature 163", "work;end_date;anonymized feature 166",
		"work;end_date;anonymized feature 172", "work;location;id;anonymized feature 132",
		"work;location;id;anonymized feature 137", "work;position;id;anonymized feature 185",
		"work;position;id;anonymized feature 187", "work;position;id;anonymized feature 193",
		"work;start_date;anonymized feature 164", "work;start_date;anonymized feature 194",
		"work;start_date;anonymized feature 195", "work;start_date;anonymized feature 202",
	}
	sameSet(t, "user 25 attrs", u.Attrs, wantAttrs)
	sameSet(t, "user 25 places", u.Places, []string{"location;id;anonymized feature 132"})
	var wantTags []string
	for _, a := range wantAttrs {
		if strings.HasPrefix(a, "education;") || strings.HasPrefix(a, "work;") {
			wantTags = append(wantTags, a)
		}
	}
	if len(wantTags) != 21 {
		t.Fatalf("test bug: %d tags", len(wantTags))
	}
	sameSet(t, "user 25 tags", u.Tags, wantTags)

	// Node 483 is in 107.feat, 348.feat and 414.feat with different
	// profiles (last_name 586 only in 107, degree 220 not in 107, school 319
	// not in 348); its features are the union, 16 names.
	u = ds.Users[atoi(t, "483")]
	sameSet(t, "user 483 attrs", u.Attrs, []string{
		"education;concentration;id;anonymized feature 15", "education;degree;id;anonymized feature 220",
		"education;school;id;anonymized feature 237", "education;school;id;anonymized feature 319",
		"education;school;id;anonymized feature 485", "education;school;id;anonymized feature 52",
		"education;type;anonymized feature 53", "education;type;anonymized feature 54",
		"education;type;anonymized feature 55", "education;year;id;anonymized feature 60",
		"education;year;id;anonymized feature 66", "gender;anonymized feature 78",
		"hometown;id;anonymized feature 84", "last_name;anonymized feature 586",
		"locale;anonymized feature 127", "location;id;anonymized feature 128",
	})
	sameSet(t, "user 483 places", u.Places, []string{"hometown;id;anonymized feature 84", "location;id;anonymized feature 128"})

	// Ego 3980's own features come from 3980.egofeat.
	if u := ds.Users[atoi(t, "3980")]; len(u.Attrs) == 0 {
		t.Error("ego 3980 has no features")
	}
}

func TestLoadBlogCatalogGolden(t *testing.T) {
	ds, rep := realDataset(t, "blogcatalog")
	if ds.N() != 10312 || len(ds.Friends) != 333983 || len(ds.Groups) != 39 || len(ds.Memberships) != 14476 {
		t.Fatalf("%d users, %d friendships, %d groups, %d memberships; want 10312, 333983, 39, 14476",
			ds.N(), len(ds.Friends), len(ds.Groups), len(ds.Memberships))
	}
	if len(rep.Problems) != 0 {
		t.Errorf("problems on the real files: %v", rep)
	}
	// First lines: edges.csv "1,176", group-edges.csv "28,1"; users 1..10312.
	if ds.Users[0].ID != "1" || ds.Users[10311].ID != "10312" {
		t.Errorf("first and last users %q, %q", ds.Users[0].ID, ds.Users[10311].ID)
	}
	if _, ok := slices.BinarySearchFunc(ds.Friends, [2]int{0, 175}, comparePairs); !ok {
		t.Error("friendship 1-176 missing")
	}
	g, _ := ds.GroupIndex("1")
	if _, ok := slices.BinarySearchFunc(ds.Memberships, [2]int{27, g}, comparePairs); !ok || g != 0 {
		t.Errorf("membership of user 28 in group 1 missing (group index %d)", g)
	}
	if ds.Groups[38] != "39" {
		t.Errorf("last group %q, want 39", ds.Groups[38])
	}
}

// tinyKernelrank is a small data set in the kernelrank format.
var tinyKernelrank = map[string]string{
	"users.jsonl": `{"id":"u2","tags":["jazz"],"photos":[{"id":"p1","visual":[1,0],"tags":["sea","sun"],"geo":{"lat":1.31,"lon":103.8},"time":"2010-06-01T12:00:00Z"}]}
{"id":"u10","faves":["p1","x9"]}
{"id":"u1","places":["Paris"],"photos":[{"id":"p2","visual":[0,1]}]}
`,
	"friends.csv":     "u1,u2\nu10,u2\n",
	"memberships.csv": "u1,g2\nu2,g2\nu2,g10\n",
	"comments.csv":    "u1,p1\nu1,p1\nu2,p2\nu2,p1\n",
}

func TestLoadKernelrankFormat(t *testing.T) {
	ds, rep, err := LoadDir(writeFiles(t, tinyKernelrank), ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Format != FormatKernelrank {
		t.Errorf("format %q", ds.Format)
	}
	ids := []string{ds.Users[0].ID, ds.Users[1].ID, ds.Users[2].ID}
	if !slices.Equal(ids, []string{"u1", "u2", "u10"}) {
		t.Errorf("users %v, want natural order u1 u2 u10", ids)
	}
	if !slices.Equal(ds.Groups, []string{"g2", "g10"}) {
		t.Errorf("groups %v", ds.Groups)
	}
	if !slices.Equal(ds.Friends, [][2]int{{0, 1}, {1, 2}}) {
		t.Errorf("friends %v", ds.Friends)
	}
	if !slices.Equal(ds.Memberships, [][2]int{{0, 0}, {1, 0}, {1, 1}}) {
		t.Errorf("memberships %v", ds.Memberships)
	}
	// u1 -> p1 (of u2) twice, u2 -> p2 (of u1), u2 -> p1 (own photo).
	want := []Comment{{0, 1, 2}, {1, 0, 1}, {1, 1, 1}}
	if !slices.Equal(ds.Comments, want) {
		t.Errorf("comments %v, want %v", ds.Comments, want)
	}
	p := ds.Users[1].Photos[0]
	if p.Geo == nil || p.Geo.Lat != 1.31 || p.Time.Year() != 2010 || !slices.Equal(p.Visual, []float64{1, 0}) {
		t.Errorf("photo %+v", p)
	}
	if len(rep.Files) != 4 || rep.Files[3].Records != 4 {
		t.Errorf("report %v", rep)
	}
}

// crlf rewrites LF line ends as CR LF and drops the final one.
func crlf(files map[string]string) map[string]string {
	out := map[string]string{}
	for name, s := range files {
		out[name] = strings.TrimSuffix(strings.ReplaceAll(s, "\n", "\r\n"), "\r\n")
	}
	return out
}

func TestLineEndingsAndMissingFinalNewline(t *testing.T) {
	ego := map[string]string{
		"facebook_combined.txt": "0 1\n0 2\n1 2\n",
		"0.featnames":           "0 gender;anonymized feature 0\n1 location;id;anonymized feature 7\n",
		"0.feat":                "1 0 1\n2 1 1\n",
		"0.egofeat":             "1 0\n",
		"0.circles":             "circle0\t1\t2\ncircle1\t2\n",
	}
	blog := map[string]string{
		"nodes.csv": "1\n2\n3\n", "edges.csv": "1,2\n2,3\n", "groups.csv": "1\n2\n", "group-edges.csv": "1,1\n3,2\n",
	}
	for name, files := range map[string]map[string]string{"kernelrank": tinyKernelrank, "ego": ego, "blog": blog} {
		a, _, err := LoadDir(writeFiles(t, files), ImportOptions{StopOnError: true})
		if err != nil {
			t.Fatalf("%s LF: %v", name, err)
		}
		b, _, err := LoadDir(writeFiles(t, crlf(files)), ImportOptions{StopOnError: true})
		if err != nil {
			t.Fatalf("%s CRLF: %v", name, err)
		}
		if !sameDataset(a, b) {
			t.Errorf("%s: CRLF without final newline gives another data set:\n%+v\n%+v", name, a, b)
		}
	}
	ds, _, _ := LoadDir(writeFiles(t, crlf(ego)), ImportOptions{StopOnError: true})
	if !slices.Equal(ds.Users[2].Places, []string{"location;id;anonymized feature 7"}) ||
		!slices.Equal(ds.Users[0].Attrs, []string{"gender;anonymized feature 0"}) ||
		!slices.Equal(ds.Groups, []string{"0/circle0", "0/circle1"}) || len(ds.Memberships) != 3 {
		t.Errorf("tiny ego network read as %+v", ds)
	}
}

func sameDataset(a, b *Dataset) bool {
	return slices.EqualFunc(a.Users, b.Users, func(x, y User) bool {
		return x.ID == y.ID && slices.Equal(x.Tags, y.Tags) && slices.Equal(x.Places, y.Places) &&
			slices.Equal(x.Attrs, y.Attrs) && slices.Equal(x.Faves, y.Faves) && len(x.Photos) == len(y.Photos)
	}) && slices.Equal(a.Groups, b.Groups) && slices.Equal(a.Friends, b.Friends) &&
		slices.Equal(a.Memberships, b.Memberships) && slices.Equal(a.Comments, b.Comments)
}

func TestBadLinesReportedWithFileAndLine(t *testing.T) {
	files := map[string]string{
		"users.jsonl": `{"id":"a","photos":[{"visual":[0.5,1]}]}
{"id":"b","photos":[{"visual":[0.5,NaN]}]}
{"id":"c","photos":[{"visual":[0.5,"NaN"]}]}
{"id":"d","photos":[{"visual":[-Infinity,1]}]}
{"id":"e","photos":[{"visual":[1,2,3]}]}
{"id":"a"}
{"id":"f","colour":"red"}
{"id":"g"} {"id":"h"}
{"id":"i","photos":[{"geo":{"lat":91,"lon":0}}]}
{"id":"j"}
`,
		"friends.csv":     "a,j\nj,a\na,a\nj,zz\na\na,j,x\n\n a , j \n",
		"memberships.csv": "a,g1\na,g1\nq,g1\n",
	}
	dir := writeFiles(t, files)
	ds, rep, err := LoadDir(dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		file string
		line int
		msg  string
	}{
		{"users.jsonl", 2, "non-finite number"},
		{"users.jsonl", 3, "cannot unmarshal string"},
		{"users.jsonl", 4, "non-finite number"},
		{"users.jsonl", 5, "3 values, earlier photos 2"},
		{"users.jsonl", 6, `user "a" already defined at line 1`},
		{"users.jsonl", 7, `unknown field "colour"`},
		{"users.jsonl", 8, "data after the JSON object"},
		{"users.jsonl", 9, "outside [-90, 90]"},
		{"friends.csv", 4, `unknown user "zz"`},
		{"friends.csv", 5, "1 comma-separated fields, want 2"},
		{"friends.csv", 6, "3 comma-separated fields, want 2"},
		{"memberships.csv", 3, `unknown user "q"`},
	}
	if len(rep.Problems) != len(want) {
		t.Fatalf("%d problems, want %d: %v", len(rep.Problems), len(want), rep.Problems)
	}
	for k, w := range want {
		p := rep.Problems[k]
		if p.File != w.file || p.Line != w.line || !strings.Contains(p.Msg, w.msg) {
			t.Errorf("problem %d = %v, want %s:%d containing %q", k, p, w.file, w.line, w.msg)
		}
	}
	if ds.N() != 2 || len(ds.Friends) != 1 || len(ds.Memberships) != 1 {
		t.Errorf("%d users, friends %v, memberships %v; want a and j, one friendship, one membership", ds.N(), ds.Friends, ds.Memberships)
	}
	fr := rep.Files[1]
	// a,j imported; j,a and " a , j " repeat it; a,a is a self-loop.
	if fr.Name != "friends.csv" || fr.Lines != 7 || fr.Records != 1 || fr.Skipped != 3 || fr.SelfLoops != 1 || fr.Duplicates != 2 {
		t.Errorf("friends.csv report %+v", fr)
	}
	if rep.Files[2].Duplicates != 1 || rep.Skipped() != 12 {
		t.Errorf("memberships.csv report %+v, %d skipped in all", rep.Files[2], rep.Skipped())
	}

	// Stopping on errors: the first problem, no data set.
	ds, rep, err = LoadDir(dir, ImportOptions{StopOnError: true})
	var le *LineError
	if ds != nil || !errors.As(err, &le) || le.File != "users.jsonl" || le.Line != 2 {
		t.Fatalf("StopOnError: data set %v, err %v", ds, err)
	}
	if !strings.Contains(err.Error(), "users.jsonl:2:") || len(rep.Problems) != 1 {
		t.Errorf("error %q, report %v", err, rep)
	}
}

func TestEgoAndBlogCatalogBadLines(t *testing.T) {
	ego := map[string]string{
		"facebook_combined.txt": "0 1\n1 0\n2 2\n0 1 5\n",
		"0.featnames":           "0 gender;anonymized feature 0\nx location\n",
		"0.feat":                "1 0 1\n9 1 1\n1 1\n2 1 2\n",
		"0.egofeat":             "1 1\n",
		"0.circles":             "circle0\t1\t9\t2\ncircle0\t1\n",
	}
	_, rep, err := LoadDir(writeFiles(t, ego), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := problemStrings(rep)
	want := []string{
		"social: facebook_combined.txt:4: 3 fields, want 2 user ids",
		`social: 0.featnames:2: want "index name", got "x location"`,
		"social: 0.feat:1: feature 1 is set but has no name in 0.featnames",
		`social: 0.feat:2: unknown user "9" (node)`,
		"social: 0.feat:3: 1 feature values, want 2 (the lines of 0.featnames)",
		`social: 0.feat:4: feature value "2" at column 2, want 0 or 1`,
		"social: 0.egofeat:1: feature 1 is set but has no name in 0.featnames",
		`social: 0.circles:1: unknown user "9" (member of 0/circle0)`,
		`social: 0.circles:2: group "0/circle0" declared twice`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if f := rep.Files[0]; f.SelfLoops != 1 || f.Duplicates != 1 || f.Records != 1 {
		t.Errorf("facebook_combined.txt report %+v", f)
	}
	blog := map[string]string{
		"nodes.csv": "1\n1\n2\n", "edges.csv": "1,2\n1,3\n", "groups.csv": "1\n", "group-edges.csv": "1,1\n2,7\n",
	}
	_, rep, err = LoadDir(writeFiles(t, blog), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got = problemStrings(rep)
	want = []string{
		`social: nodes.csv:2: user "1" listed twice`,
		`social: edges.csv:2: unknown user "3" (second column)`,
		`social: group-edges.csv:2: unknown group "7"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func problemStrings(rep *ImportReport) []string {
	var out []string
	for _, p := range rep.Problems {
		out = append(out, p.Error())
	}
	return out
}

func TestDetectFormatErrors(t *testing.T) {
	if _, err := DetectFormat(writeFiles(t, map[string]string{"nodes.csv": "1\n"})); err == nil ||
		!strings.Contains(err.Error(), "no users.jsonl") {
		t.Errorf("directory without a known layout: %v", err)
	}
	if _, _, err := LoadDir(t.TempDir()+"/missing", ImportOptions{}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("missing directory: %v", err)
	}
	if _, _, err := LoadDir(t.TempDir(), ImportOptions{Format: "csv"}); err == nil || !strings.Contains(err.Error(), `unknown format "csv"`) {
		t.Errorf("unknown format: %v", err)
	}
}

func TestNaturalLess(t *testing.T) {
	in := []string{"u10", "u2", "10", "9", "0/circle10", "0/circle2", "007", "7", "a", "", "u2x"}
	slices.SortFunc(in, naturalOrder)
	want := []string{"", "0/circle2", "0/circle10", "007", "7", "9", "10", "a", "u2", "u2x", "u10"}
	if !slices.Equal(in, want) {
		t.Errorf("natural order %q, want %q", in, want)
	}
}

func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("%s = %q, want %q", what, g, w)
	}
}

func atoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestProblemListIsCapped(t *testing.T) {
	bad := strings.Repeat("a,zz\n", MaxProblems+5)
	_, rep, err := LoadDir(writeFiles(t, map[string]string{"users.jsonl": `{"id":"a"}`, "friends.csv": bad}), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != MaxProblems || rep.MoreProblems != 5 || rep.Skipped() != MaxProblems+5 {
		t.Errorf("%d problems listed, %d more, %d skipped", len(rep.Problems), rep.MoreProblems, rep.Skipped())
	}
	if s := rep.String(); !strings.Contains(s, "friends.csv: 1005 lines, 0 records, 1005 skipped") ||
		!strings.Contains(s, "1005 problems, the first: social: friends.csv:1:") {
		t.Errorf("summary:\n%s", s)
	}
}
