package dataset

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// EnvDataDir is the environment variable that overrides the location of the
// shared data directory.
const EnvDataDir = "KERNELRANK_SHARED_DATA"

// DataDir locates the shared evaluation data (the directory holding
// MANIFEST.md, images/, social/ and uci/).
//
// If $KERNELRANK_SHARED_DATA is set and non-empty it wins: DataDir returns its
// absolute form and whether it is an existing directory (no search is made,
// so a wrong override is not papered over by another copy). Otherwise DataDir
// walks up from the working directory to the first directory holding go.mod
// (the module root) and looks for shared/data beside it, i.e.
// <root>/../shared/data. It returns ("", false) when there is no such
// directory.
func DataDir() (string, bool) {
	if env := os.Getenv(EnvDataDir); env != "" {
		abs, err := filepath.Abs(env)
		if err != nil {
			abs = env
		}
		return abs, isDir(abs)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for dir := wd; ; {
		if fi, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !fi.IsDir() {
			cand := filepath.Join(filepath.Dir(dir), "shared", "data")
			if isDir(cand) {
				return cand, true
			}
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// KnownMD5 maps a path relative to the data directory to the md5 sum listed
// in the data MANIFEST.md for every file this package loads.
var KnownMD5 = map[string]string{
	Corel5kARFF:                               Corel5kARFFMD5,
	Corel5kXML:                                Corel5kXMLMD5,
	"uci/libsvm/a1a.csv":                      "72e507ba63bcd369f186d44ca0d90758",
	"uci/libsvm/breast-cancer_scale":          "64bc6c76e345c84b198fc9ba8dce1d96",
	"uci/libsvm/ionosphere_scale":             "5dae06d1367d5b4fe7d96865a5b16bb7",
	"uci/libsvm/pima_scale":                   "13d989f17d54b73b1900b91f2f987871",
	"uci/libsvm/sonar_scale":                  "4036f39c7c8517782586c90d77ea3238",
	"uci/pmlb/breast_cancer_wisconsin.tsv.gz": "544b098cb18a77a70f087b214cca5407",
	"uci/pmlb/breast_w.tsv.gz":                "ee0bd1d68d53687e5838aaf5807faed0",
	"uci/pmlb/ionosphere.tsv.gz":              "5f5bb2ef2fb44883f0372d9d75807de6",
	"uci/pmlb/iris.tsv.gz":                    "d876c2c819374d016a9eec319ae022c4",
	"uci/pmlb/mfeat_factors.tsv.gz":           "154f0af88f278a96b50d79b0e8b93738",
	"uci/pmlb/mfeat_fourier.tsv.gz":           "0444bd8fffa3d76c4dd1606812ea502e",
	"uci/pmlb/mfeat_karhunen.tsv.gz":          "fc0453b20322b32be47b4f25b4a2d776",
	"uci/pmlb/mfeat_morphological.tsv.gz":     "1c06dcbf0928f952493d5356f9f3f1e2",
	"uci/pmlb/mfeat_pixel.tsv.gz":             "74e980323f9cbc0412733975221805c2",
	"uci/pmlb/mfeat_zernike.tsv.gz":           "fcca2bf430415ae932b5c2da474dd334",
	"uci/pmlb/pima.tsv.gz":                    "31e78038e599bb241be555e7052ffe76",
	"uci/pmlb/sonar.tsv.gz":                   "575a5d0a2fef79e7894a78e5020e19d9",
	"uci/pmlb/spambase.tsv.gz":                "9cbc8646e05a17390ca2b7816a35d1a2",
	"uci/pmlb/wine_recognition.tsv.gz":        "a6de57540b31fd019c83bf8a43e94aaa",
}

// ErrChecksum is wrapped by the error VerifyMD5 returns when a file's md5
// differs from the one the manifest lists.
var ErrChecksum = errors.New("md5 mismatch")

// FileMD5 returns the hex md5 of the file at path.
func FileMD5(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("dataset: reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// VerifyMD5 checks the file dataDir/rel against KnownMD5[rel]. It is an
// error if rel is not a known file, cannot be read, or has another md5 (the
// last wraps ErrChecksum).
func VerifyMD5(dataDir, rel string) error {
	want, ok := KnownMD5[filepath.ToSlash(rel)]
	if !ok {
		return fmt.Errorf("dataset: no known md5 for %q", rel)
	}
	path := filepath.Join(dataDir, filepath.FromSlash(rel))
	got, err := FileMD5(path)
	if err != nil {
		return fmt.Errorf("dataset: verifying %s: %w", path, err)
	}
	if got != want {
		return fmt.Errorf("dataset: %s: %w: got %s, want %s (MANIFEST.md)", path, ErrChecksum, got, want)
	}
	return nil
}

// ParseError reports malformed input at a given line of a file.
type ParseError struct {
	File string // file name as given to the loader ("" when parsing a reader)
	Line int    // 1-based line number; 0 if the error is not tied to a line
	Msg  string
}

func (e *ParseError) Error() string {
	name := e.File
	if name == "" {
		name = "input"
	}
	if e.Line > 0 {
		return fmt.Sprintf("dataset: %s:%d: %s", name, e.Line, e.Msg)
	}
	return fmt.Sprintf("dataset: %s: %s", name, e.Msg)
}

func parseErr(file string, line int, format string, args ...any) error {
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}
