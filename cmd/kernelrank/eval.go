package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kernelrank/kernelrank/internal/eval"
)

func evaluate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "learners" {
		return evalLearners(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "social" {
		return evalSocial(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "clicks" {
		return evalClicks(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "foldin" {
		return evalFoldIn(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "images" {
		fmt.Fprintln(stderr, "usage: kernelrank eval images [--data PATH] [--seed N] [--json] [--keep P] [--swap P] [--subset N] [--max-tags K] [--served-only] | --demo [--json]")
		fmt.Fprintln(stderr, "       "+strings.TrimPrefix(evalLearnersUsage, "usage: "))
		fmt.Fprintln(stderr, "       "+strings.TrimPrefix(evalSocialUsage, "usage: "))
		fmt.Fprintln(stderr, "       "+strings.TrimPrefix(evalClicksUsage, "usage: "))
		fmt.Fprintln(stderr, "       "+strings.TrimPrefix(evalFoldInUsage, "usage: "))
		return errors.New("eval needs a protocol: images, learners, social, clicks or foldin")
	}
	fs := flag.NewFlagSet("eval images", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := eval.ImagesConfig{Progress: stderr}
	fs.StringVar(&cfg.Data, "data", "", "Mulan ARFF (XML beside it) or JSONL corpus with labels and features; default Corel5k from ../shared/data")
	fs.Int64Var(&cfg.Seed, "seed", 1, "seed of the noisy tags, the query split and the tie-breaks")
	fs.Float64Var(&cfg.Keep, "keep", 0.8, "probability that a true keyword is kept as a tag (a JSONL corpus: given, its tags become the noisy copy of its labels)")
	fs.Float64Var(&cfg.Swap, "swap", 0.7, "probability that one kept tag is swapped for another image's keyword (likewise)")
	fs.IntVar(&cfg.Window, "window", 200, "candidates re-ranked per query")
	fs.IntVar(&cfg.MinImages, "min-images", 40, "labels with at least this many true images are the queries")
	fs.IntVar(&cfg.Workers, "workers", 2, "queries evaluated in parallel")
	fs.IntVar(&cfg.Subset, "subset", 0, "evaluate on a seeded sample of this many images (0: all)")
	fs.IntVar(&cfg.MaxTags, "max-tags", 0, "keep a seeded choice of at most this many tags an image (0: all)")
	fs.BoolVar(&cfg.ServedOnly, "served-only", false, "measure only the text order, the served choice and the per-query decision (minutes, not the whole grid)")
	asJSON := fs.Bool("json", false, "print the test-half rows as one JSON array")
	onDemo := fs.Bool("demo", false, "the bundled demo corpus instead: the served default chosen on its built-in validation queries, "+
		"every candidate's P@10 on them and on the queries the search page suggests (--window, --json apply)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *onDemo {
		rep, err := eval.Demo(ctx, cfg.Window, stderr)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(rep)
		}
		eval.PrintDemo(stdout, rep)
		return nil
	}
	if cfg.Keep < 0 || cfg.Keep > 1 || cfg.Swap < 0 || cfg.Swap > 1 {
		return errors.New("--keep and --swap are probabilities in [0, 1]")
	}
	if cfg.Subset < 0 || cfg.MaxTags < 0 {
		return errors.New("--subset and --max-tags must be 0 (off) or positive")
	}
	// A JSONL corpus keeps its own tags unless --keep or --swap asks for
	// the noisy copy of its labels.
	fs.Visit(func(f *flag.Flag) { cfg.NoisyJSONL = cfg.NoisyJSONL || f.Name == "keep" || f.Name == "swap" })
	rep, err := eval.Images(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		return enc.Encode(rep.Test)
	}
	eval.PrintImages(stdout, rep, cfg)
	return nil
}
