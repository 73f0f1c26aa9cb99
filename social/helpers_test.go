package social

import (
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kernelrank/kernelrank/internal/dataset"
)

// socialMD5 lists the md5 sums of the data MANIFEST.md for the files the
// golden tests read.
var socialMD5 = map[string]string{
	"blogcatalog/edges.csv":              "9398aa019ad00a4d1269467fa73f23be",
	"blogcatalog/group-edges.csv":        "4dd56749a3e5bb885ca4c7e291f30619",
	"blogcatalog/groups.csv":             "c77599bdedf68f380c9ee12cdf83cc7d",
	"blogcatalog/nodes.csv":              "75f4ce8f578a84eb01d8dfd817dbb193",
	"ego-facebook/facebook_combined.txt": "bce355f160df0ebe7491d5462b40f4e0",
	"ego-facebook/0.feat":                "c9e04583e6bd3cd34208612996a22129",
	"ego-facebook/0.featnames":           "2dcad512ed8180e5f6dccce16024a83b",
	"ego-facebook/0.circles":             "98a139dbd5fe77f3adb347e5253a2c39",
	"ego-facebook/107.feat":              "531a60c9f0a1e449a350dba7e8d75360",
	"ego-facebook/107.featnames":         "bd159a75b28790d58d071ac3ea4f5395",
	"ego-facebook/348.feat":              "6096de72c7aed02ac1503cc8b09621bd",
	"ego-facebook/348.featnames":         "f9887d92a62d96047dfd9c0c52c2f2bf",
	"ego-facebook/414.feat":              "75cdc0ad5f4fe2f360c58197156192b3",
	"ego-facebook/414.featnames":         "a65686f16641ae64f81cdc210bea2cac",
	"ego-facebook/1912.circles":          "cf5a65045a477b435c55b9638a9530f8",
	"ego-facebook/3980.egofeat":          "8fff303018ae6e492aad3356aa21a516",
	"ego-facebook/3980.featnames":        "c477153c520c815167d9d620b2a18912",
	"ego-facebook/686.circles":           "373afaeaa5d77b74fc0e49e6ea1482e0",
	"ego-facebook/698.circles":           "f01893040427cf0a61172c39aa598bd3",
	"ego-facebook/3437.circles":          "b8ac1aa99e047197e8710e98d06a13f7",
	"ego-facebook/1684.circles":          "f694559e65c2b6f1b9369d016df80da9",
	"ego-facebook/107.circles":           "19fc9459b52589613a7f056dfca8c4e6",
	"ego-facebook/348.circles":           "24bef84b1c7048b1d44f19527b2642cf",
	"ego-facebook/414.circles":           "dd4a1f183dc55ae2799f4a372edb511c",
	"ego-facebook/3980.circles":          "1eee38aa1fb420521841edcc03e23eaf",
	"ego-facebook/0.egofeat":             "b1d10e5cdc07148dbb9875e46e0e167f",
	"ego-facebook/107.egofeat":           "acb247cc18bf1e76f149564b8eddd54e",
	"ego-facebook/348.egofeat":           "8f8dbee6ec0ed36563ce014df0de7844",
	"ego-facebook/414.egofeat":           "7c628b5cada17ab6607673c345dda6ea",
	"ego-facebook/1684.featnames":        "da29326203d7d0b0c5e7772970963ed2",
	"ego-facebook/1912.featnames":        "a897b77adf596b983848f8f8c1e8d97b",
	"ego-facebook/3437.featnames":        "003eeb7d3b46005027f407a71d887c06",
	"ego-facebook/686.featnames":         "1dae8eb9d91526603d4c0077cd85a448",
	"ego-facebook/698.featnames":         "aa40c383ef98459deb17022b1d88abaf",
	"ego-facebook/1684.feat":             "19e940288cf3b69c8497644094301cf4",
	"ego-facebook/1912.feat":             "e87227b06fead272e5861ecd50383424",
	"ego-facebook/3437.feat":             "5d69027385b7751488b9d101b39e2917",
	"ego-facebook/686.feat":              "9c2b024db239bb76175e2db88cc324a6",
	"ego-facebook/698.feat":              "6d4742fa6dd6ce4a719edb2030ee8fa2",
	"ego-facebook/3980.feat":             "7110168dbbff80197448accdab8d2a12",
	"ego-facebook/1684.egofeat":          "d6afccf85142003dd66188327301bc5a",
	"ego-facebook/1912.egofeat":          "f7d4d5cb32971c27631e97bf82e85e3c",
	"ego-facebook/3437.egofeat":          "1fcc0a93b5405d34c7d9a14b351c6ee7",
	"ego-facebook/686.egofeat":           "8c9ef110c2846906cc581a0c1055621a",
	"ego-facebook/698.egofeat":           "1570e9a8fb78f836b3a741ce20f0f802",
}

// socialDir returns the directory of one social data set (ego-facebook or
// blogcatalog) after checking the md5 of its files, or skips the test when
// the shared data is absent.
func socialDir(t testing.TB, name string) string {
	t.Helper()
	root, ok := dataset.DataDir()
	if !ok {
		t.Skipf("shared data not found (set %s to the shared data directory): skipping test on real data", dataset.EnvDataDir)
	}
	dir := filepath.Join(root, "social", name)
	for rel, want := range socialMD5 {
		if filepath.Dir(rel) != name {
			continue
		}
		got, err := dataset.FileMD5(filepath.Join(root, "social", rel))
		if err != nil || got != want {
			t.Fatalf("%s: md5 %s (%v), want %s (MANIFEST.md)", rel, got, err, want)
		}
	}
	return dir
}

type loaded struct {
	ds  *Dataset
	rep *ImportReport
	err error
}

var (
	egoOnce, blogOnce sync.Once
	egoData, blogData loaded
)

// realDataset loads a real data set once per test binary, or skips.
func realDataset(t testing.TB, name string) (*Dataset, *ImportReport) {
	t.Helper()
	dir := socialDir(t, name)
	once, l := &egoOnce, &egoData
	if name == "blogcatalog" {
		once, l = &blogOnce, &blogData
	}
	once.Do(func() { l.ds, l.rep, l.err = LoadDir(dir, ImportOptions{StopOnError: true}) })
	if l.err != nil {
		t.Fatalf("LoadDir(%s): %v", dir, l.err)
	}
	return l.ds, l.rep
}

// writeFiles writes name -> content files into a fresh temporary directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) {
		t.Errorf("%s = %.12g, want %.12g (tol %g)", what, got, want, tol)
	}
}
