// Package demo bundles the demo corpus (public-domain openclipart drawings
// with their authors' keywords, rebuilt by cmd/mkdemo) into the binary, so
// that `kernelrank serve` runs with no data and no external service.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

//go:embed corpus
var corpus embed.FS

// Extract writes the demo corpus (corpus.jsonl and images/) into dir and
// returns the path of its corpus.jsonl.
func Extract(dir string) (string, error) {
	err := fs.WalkDir(corpus, "corpus", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("corpus", path)
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := corpus.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("extracting the demo corpus: %w", err)
	}
	return filepath.Join(dir, "corpus.jsonl"), nil
}

// ExtractFirst is Extract with only the first n records in corpus.jsonl
// (every image is written): a small corpus of real images, for tests.
func ExtractFirst(dir string, n int) (string, error) {
	jsonl, err := Extract(dir)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(jsonl)
	if err != nil {
		return "", err
	}
	lines := strings.SplitAfterN(string(b), "\n", n+1)
	return jsonl, os.WriteFile(jsonl, []byte(strings.Join(lines[:min(n, len(lines))], "")), 0o644)
}
