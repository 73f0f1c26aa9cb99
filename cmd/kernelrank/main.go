// Command kernelrank is the kernelrank server and its tools:
//
//	kernelrank serve  [--addr HOST:PORT] [--data DIR] [--redis URL]   serve the HTTP API (the bundled demo corpus by default)
//	kernelrank ingest --data DIR | --redis URL CORPUS...   build or update an index, or a deployment's corpus, from corpora
//	kernelrank import [--redis URL] SOCIAL-DIR          load social data into the social store (the difference only)
//	kernelrank retrain --target social|search|all [--redis URL]   retrain and publish a new version
//	kernelrank worker --redis URL [--concurrency N]     run the retraining jobs queued in Redis
//	kernelrank eval images [--data PATH] [--seed N] [--json]
//	kernelrank eval learners [--suite zhuang] [--table ID]... [--reps N] [--json] [--dataset PATH]...
//	kernelrank eval social [--data PATH] [--seed N] [--preprocess thesis|default] [--json]
//	kernelrank bench http [--url URL] [--duration D] [--concurrency 1,8]   HTTP load: req/s, p50, p99
//	kernelrank version                                  module version, VCS revision, Go version
//	kernelrank bench corpus --redis URL [--rates 10,100]   replication lag, Redis bytes per image, ingest, start-up
//
// Every flag can also be set by an environment variable: KERNELRANK_ and the
// flag name in upper case with dashes as underscores (--admin-token is
// KERNELRANK_ADMIN_TOKEN). A flag given on the command line wins.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kernelrank/kernelrank/internal/retrain"
	_ "github.com/kernelrank/kernelrank/learners/kit/all"
)

const usage = `kernelrank: image search re-ranked by learned kernels.

Usage:
  kernelrank serve  [--addr HOST:PORT] [--data DIR] [--admin-token T] [--redis URL]
  kernelrank ingest (--data DIR | --redis URL) [--stop-on-error] CORPUS...
  kernelrank import [--redis URL | --cache-dir DIR] [--stop-on-error] SOCIAL-DIR
  kernelrank retrain --target social|search|all [--redis URL [--detach]] [--queue NAME]
                     [--social PATH] [--learner L] [--queries N] [--cache-dir DIR]
  kernelrank worker --redis URL [--concurrency N] [--queue NAME] [--social PATH]
  kernelrank eval images [--data PATH] [--seed N] [--json] [--keep P] [--swap P]
  kernelrank eval learners [--suite zhuang] [--table ID]... [--method M]... [--seed N]
                           [--reps N] [--workers N] [--json] [--dataset PATH]...
  kernelrank eval social [--data PATH] [--seed N] [--preprocess thesis|default]
                         [--max-users N] [--variant tags-faves] [--json]
  kernelrank bench http [--url URL] [--duration D] [--concurrency 1,8] [--requests N]
  kernelrank version
  kernelrank bench corpus --redis URL [--rates 10,100] [--duration D] [--bootstrap-docs N]

Run "kernelrank COMMAND -h" for the flags of a command. Every flag can be set
by an environment variable, e.g. KERNELRANK_ADDR or KERNELRANK_ADMIN_TOKEN.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kernelrank:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "ingest":
		return ingest(ctx, args[1:], stdout, stderr)
	case "import":
		return importSocial(ctx, args[1:], stdout, stderr)
	case "eval":
		return evaluate(ctx, args[1:], stdout, stderr)
	case "retrain":
		return retrainCommand(ctx, args[1:], stdout, stderr, retrain.NewHandler)
	case "worker":
		return worker(ctx, args[1:], stderr, retrain.NewHandler, retrain.NewSplit)
	case "bench":
		return benchCommand(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		return version(args[1:], stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// parse parses flags, then fills every flag not given on the command line
// from its KERNELRANK_* environment variable.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		env := "KERNELRANK_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok && !given[f.Name] && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %v", env, v, e)
			}
		}
	})
	return err
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: use text or json", format)
}
