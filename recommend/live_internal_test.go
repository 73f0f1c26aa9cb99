package recommend

import (
	"reflect"
	"testing"

	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/social"
)

// The one-array relations of a data set are newRelations'.
func TestDatasetRelations(t *testing.T) {
	gen, err := demo.GenerateSocial(demo.DefaultSocialSeed, demo.SocialOptions{Users: 120, Groups: 12})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := gen.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	ds, _, err := social.LoadDir(dir, social.ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	got, want := datasetRelations(ds), newRelations(ds, ds.FullView())
	for name, pair := range map[string][2][][]int{"friends": {got.friends, want.friends}, "groups": {got.groups, want.groups}, "members": {got.members, want.members}} {
		if len(pair[0]) != len(pair[1]) {
			t.Fatalf("%s: %d lists, want %d", name, len(pair[0]), len(pair[1]))
		}
		for i := range pair[0] {
			if len(pair[0][i])+len(pair[1][i]) > 0 && !reflect.DeepEqual(pair[0][i], pair[1][i]) {
				t.Errorf("%s %d: %v, want %v", name, i, pair[0][i], pair[1][i])
			}
		}
	}
}
