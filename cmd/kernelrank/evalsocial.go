package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kernelrank/kernelrank/internal/eval"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

const evalSocialUsage = "usage: kernelrank eval social [--data PATH] [--seed N] [--preprocess default|cosine|thesis] [--max-users N] [--variant tags-faves] [--tasks friends,groups] [--learners alignf,uniform] [--json]"

// evalSocial runs the friend and group recommendation protocol.
func evalSocial(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval social", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, evalSocialUsage); fs.PrintDefaults() }
	cfg := eval.SocialConfig{Progress: stderr}
	fs.StringVar(&cfg.Data, "data", "", "a directory in the import format, or ego-Facebook / BlogCatalog as in ../shared/data/social (default: ego-Facebook)")
	fs.Int64Var(&cfg.Seed, "seed", 1, "seed of the hidden edges and memberships, the samples and the tie-breaks")
	mode := fs.String("preprocess", string(social.ModeDefault), "kernel preprocessing: default (mean diagonal 1), cosine (unit diagonal) or thesis (section 7.5.1 as written)")
	fs.IntVar(&cfg.MaxUsers, "max-users", 0, "evaluate a seeded sample of this many test users per task (0: all)")
	fs.StringVar(&cfg.Variant, "variant", "", "transform the data first: tags-faves keeps the friendships, tags and favourites only (places become favourites; a data set without content gets its groups as tags and favourites)")
	tasks := fs.String("tasks", "friends,groups", "the tasks to run, comma-separated (the group task's split is the same without the friend task)")
	learnerList := fs.String("learners", "alignf,uniform", "the kernel-combination learners of the NAME+mklr rows, comma-separated (any of: "+strings.Join(recommend.Learners(), ", ")+")")
	fs.IntVar(&cfg.Workers, "workers", 2, "users scored in parallel")
	asJSON := fs.Bool("json", false, "print the rows as one JSON array")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch social.Mode(*mode) {
	case social.ModeDefault, social.ModeCosine, social.ModeThesis:
		cfg.Mode = social.Mode(*mode)
	default:
		return fmt.Errorf("--preprocess %q: use default, cosine or thesis", *mode)
	}
	if cfg.MaxUsers < 0 {
		return fmt.Errorf("--max-users must be >= 0, got %d", cfg.MaxUsers)
	}
	for _, t := range strings.Split(*tasks, ",") {
		if t != "friends" && t != "groups" {
			return fmt.Errorf("--tasks: unknown task %q (friends, groups)", t)
		}
		cfg.Tasks = append(cfg.Tasks, t)
	}
	for _, l := range strings.Split(*learnerList, ",") {
		if !slices.Contains(recommend.Learners(), l) {
			return fmt.Errorf("--learners: %q cannot combine the recommender's kernels (usable: %s)", l, strings.Join(recommend.Learners(), ", "))
		}
		cfg.Learners = append(cfg.Learners, l)
	}
	if cfg.Variant != "" && cfg.Variant != eval.VariantTagsFaves {
		return fmt.Errorf("--variant %q: use %s", cfg.Variant, eval.VariantTagsFaves)
	}
	rep, err := eval.Social(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		return enc.Encode(rep.Rows)
	}
	eval.PrintSocial(stdout, rep, cfg)
	return nil
}
