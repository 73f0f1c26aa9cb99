package social

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// checkImport writes files to a fresh directory and imports it leniently
// and strictly: neither may panic; the lenient import succeeds with a
// well-formed data set and reports every skipped line as a *LineError; the
// strict one fails with the first of those problems, or, when there were
// none, gives the same data set. Seeds: testdata/fuzz/FuzzImport*.
func checkImport(t *testing.T, files map[string]string) {
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ds, rep, err := LoadDir(dir, ImportOptions{})
	if err != nil {
		t.Fatalf("lenient import: %v", err)
	}
	checkDataset(t, ds)
	if n := len(rep.Problems) + rep.MoreProblems; n != rep.Skipped() {
		t.Fatalf("%d problems reported, %d lines skipped", n, rep.Skipped())
	}
	for _, p := range rep.Problems {
		if _, ok := files[p.File]; !ok || p.Line < 1 || p.Msg == "" {
			t.Fatalf("problem %+v names no line of the files", p)
		}
	}
	strict, _, err := LoadDir(dir, ImportOptions{StopOnError: true})
	var le *LineError
	switch {
	case len(rep.Problems) == 0 && err != nil:
		t.Fatalf("strict import failed (%v) where the lenient one met no problem", err)
	case len(rep.Problems) == 0 && !reflect.DeepEqual(ds, strict):
		t.Fatalf("strict and lenient imports differ without problems:\n%+v\n%+v", ds, strict)
	case len(rep.Problems) > 0 && (!errors.As(err, &le) || *le != *rep.Problems[0]):
		t.Fatalf("strict import: %v, want the first problem %v", err, rep.Problems[0])
	}
}

// checkDataset checks what every consumer of a Dataset relies on: users in
// strict natural order, indexed; relations in range, sorted and unique.
func checkDataset(t *testing.T, ds *Dataset) {
	for i, u := range ds.Users {
		if i > 0 && naturalOrder(ds.Users[i-1].ID, u.ID) >= 0 {
			t.Fatalf("users %q, %q out of order", ds.Users[i-1].ID, u.ID)
		}
		if k, ok := ds.UserIndex(u.ID); !ok || k != i {
			t.Fatalf("user %q at %d is indexed %d, %v", u.ID, i, k, ok)
		}
	}
	for g, name := range ds.Groups {
		if g > 0 && naturalOrder(ds.Groups[g-1], name) >= 0 {
			t.Fatalf("groups %q, %q out of order", ds.Groups[g-1], name)
		}
		if k, ok := ds.GroupIndex(name); !ok || k != g {
			t.Fatalf("group %q at %d is indexed %d, %v", name, g, k, ok)
		}
	}
	checkPairs(t, "friendship", ds.Friends, ds.N(), ds.N(), true)
	checkPairs(t, "membership", ds.Memberships, ds.N(), len(ds.Groups), false)
	for k, c := range ds.Comments {
		if c.Author < 0 || c.Author >= ds.N() || c.Owner < 0 || c.Owner >= ds.N() || c.Count < 1 {
			t.Fatalf("comment %d: %+v", k, c)
		}
	}
}

func checkPairs(t *testing.T, what string, pairs [][2]int, rows, cols int, ordered bool) {
	for k, p := range pairs {
		if p[0] < 0 || p[0] >= rows || p[1] < 0 || p[1] >= cols || (ordered && p[0] >= p[1]) {
			t.Fatalf("%s %d: %v out of range (%d x %d)", what, k, p, rows, cols)
		}
		if k > 0 && comparePairs(pairs[k-1], p) >= 0 {
			t.Fatalf("%ss %v, %v out of order or repeated", what, pairs[k-1], p)
		}
	}
}

func FuzzImportKernelrank(f *testing.F) {
	f.Fuzz(func(t *testing.T, users, friends, memberships, comments string) {
		checkImport(t, map[string]string{kernelrankUsers: users, kernelrankFriends: friends,
			kernelrankMemberships: memberships, kernelrankComments: comments})
	})
}

func FuzzImportBlogCatalog(f *testing.F) {
	f.Fuzz(func(t *testing.T, nodes, edges, groups, groupEdges string) {
		checkImport(t, map[string]string{blogNodes: nodes, blogEdges: edges, blogGroups: groups, blogGroupEdges: groupEdges})
	})
}

// FuzzImportEgoFacebook imports the friendships and one ego network, "0".
func FuzzImportEgoFacebook(f *testing.F) {
	f.Fuzz(func(t *testing.T, combined, featnames, feat, egofeat, circles string) {
		checkImport(t, map[string]string{egoCombined: combined, "0.featnames": featnames, "0.feat": feat,
			"0.egofeat": egofeat, "0.circles": circles})
	})
}
