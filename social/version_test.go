package social

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestVersion(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"users.jsonl": `{"id":"a","tags":["jazz"],"photos":[{"id":"p1","visual":[0.5,1],"tags":["sea"],"geo":{"lat":1,"lon":2}}]}
{"id":"b","places":["paris"],"faves":["p1"],"attrs":["x"]}
{"id":"c"}
`,
		"friends.csv":     "a,b\nb,c\n",
		"memberships.csv": "a,g1\nc,g2\n",
		"comments.csv":    "b,p1\nb,p1\nb,p1\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	load := func() *Dataset {
		ds, _, err := LoadDir(dir, ImportOptions{StopOnError: true})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	ds := load()
	v := ds.Version()
	if len(v) != 32 || load().Version() != v {
		t.Fatalf("two loads of the same files: %q and %q", v, load().Version())
	}
	if len(ds.Comments) != 1 || ds.Users[0].Photos[0].Geo == nil {
		t.Fatalf("fixture not read as meant: %+v", ds)
	}
	// Each edit works on a fresh load; those of what training reads must
	// change the version, the others must not.
	changes := map[string]func(*Dataset){
		"user id":          func(d *Dataset) { d.Users[2].ID = "c2" },
		"user order":       func(d *Dataset) { d.Users[1], d.Users[2] = d.Users[2], d.Users[1] },
		"profile tag":      func(d *Dataset) { d.Users[0].Tags = []string{"rock"} },
		"tags split":       func(d *Dataset) { d.Users[0].Tags = []string{"ja", "zz"} },
		"tag moved":        func(d *Dataset) { d.Users[0].Tags, d.Users[1].Tags = nil, []string{"jazz"} },
		"place":            func(d *Dataset) { d.Users[1].Places = nil },
		"fave":             func(d *Dataset) { d.Users[1].Faves = []string{"p2"} },
		"visual feature":   func(d *Dataset) { d.Users[0].Photos[0].Visual[1] = 1.0000001 },
		"photo tag":        func(d *Dataset) { d.Users[0].Photos[0].Tags = nil },
		"photo position":   func(d *Dataset) { d.Users[0].Photos[0].Geo.Lat = 1.5 },
		"photo unplaced":   func(d *Dataset) { d.Users[0].Photos[0].Geo = nil },
		"photo removed":    func(d *Dataset) { d.Users[0].Photos = nil },
		"group renamed":    func(d *Dataset) { d.Groups[1] = "g3" },
		"friendship":       func(d *Dataset) { d.Friends[1] = [2]int{0, 2} },
		"friendship added": func(d *Dataset) { d.Friends = append(d.Friends, [2]int{0, 2}) },
		"membership":       func(d *Dataset) { d.Memberships[0][1] = 1 },
		"comment count":    func(d *Dataset) { d.Comments[0].Count = 4 },
	}
	seen := map[string]string{v: "the original"}
	for name, edit := range changes {
		d := load()
		edit(d)
		w := d.Version()
		if other, dup := seen[w]; dup {
			t.Errorf("%s: version %s, the same as %s", name, w, other)
		}
		seen[w] = name
	}
	for name, edit := range map[string]func(*Dataset){
		"attrs":      func(d *Dataset) { d.Users[1].Attrs = nil },
		"format":     func(d *Dataset) { d.Format = FormatEgoFacebook },
		"photo id":   func(d *Dataset) { d.Users[0].Photos[0].ID = "p9" },
		"same again": func(d *Dataset) { d.Friends = slices.Clone(d.Friends) },
	} {
		d := load()
		edit(d)
		if w := d.Version(); w != v {
			t.Errorf("%s, which no kernel reads, changed the version", name)
		}
	}
}
