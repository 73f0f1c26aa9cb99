package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/kernelrank/kernelrank/internal/eval"
)

const evalFoldInUsage = "usage: kernelrank eval foldin [--data PATH] [--seed N] [--hidden N] [--reveal F] [--json]"

// evalFoldIn compares folding new users into a model with retraining.
func evalFoldIn(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval foldin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, evalFoldInUsage); fs.PrintDefaults() }
	cfg := eval.FoldInConfig{Progress: stderr}
	fs.StringVar(&cfg.Data, "data", "", "a directory in the import format, or ego-Facebook / BlogCatalog as in ../shared/data/social (default: BlogCatalog)")
	fs.Int64Var(&cfg.Seed, "seed", 1, "seed of the hidden users, their friendships added back and the tie-breaks")
	fs.IntVar(&cfg.Hidden, "hidden", 200, "users hidden with all their friendships, then added back")
	fs.Float64Var(&cfg.Reveal, "reveal", 0.5, "fraction of a hidden user's friendships added back with it (at least one); the rest are the test")
	fs.IntVar(&cfg.Workers, "workers", 2, "users scored in parallel")
	asJSON := fs.Bool("json", false, "print the rows as one JSON array")
	if err := parse(fs, args); err != nil {
		return err
	}
	if cfg.Hidden < 1 {
		return fmt.Errorf("--hidden must be at least 1, got %d", cfg.Hidden)
	}
	if !(cfg.Reveal > 0 && cfg.Reveal < 1) {
		return fmt.Errorf("--reveal must be in (0, 1), got %v", cfg.Reveal)
	}
	rep, err := eval.FoldIn(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		return enc.Encode(rep.Rows)
	}
	eval.PrintFoldIn(stdout, rep, cfg)
	return nil
}
