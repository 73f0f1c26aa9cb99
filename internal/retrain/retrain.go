// Package retrain is the retraining work of kernelrank's jobs, above the
// facades: the handler that retrains and publishes the recommender
// (recommend) or precomputes the rankings of frequent queries (search),
// the check of a job at submission, the queue a process opens, and the
// following of a job with a progress bar. Package jobs runs what this
// package hands it and knows nothing of the facades.
package retrain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/search"
)

// Deps is what the retraining work of a process runs on.
type Deps struct {
	Social string // social data of jobs that name none ("": the demo network)
	Log    *slog.Logger
	// recommend and search return the facades the work calls, opening them
	// on first use; nil: the process runs no such jobs.
	Recommend func(context.Context) (*recommend.Service, error)
	Search    func(context.Context) (*search.Engine, error)
}

// defaultQueries is how many frequent queries a search job precomputes
// when its spec names no number.
const defaultQueries = 100

// NewHandler returns the retraining work of every target, publishing
// under the job's id (see jobs.Handler): a social job retrains and
// publishes the recommender through the recommend facade, a search job
// stores the rankings of the most frequent queries through the search
// facade (its version is the corpus version they were computed on).
func NewHandler(d Deps) jobs.Handler {
	var socialWork, searchWork jobs.Handler
	if d.Recommend != nil {
		socialWork = func(ctx context.Context, id string, spec jobs.Spec, progress func(string, float64)) (string, error) {
			svc, err := d.Recommend(ctx)
			if err != nil {
				return "", err
			}
			return svc.Retrain(ctx, recommend.RetrainRequest{Learner: spec.Learner, DataPath: spec.Social, Version: id}, byStage(progress, socialStages))
		}
	}
	if d.Search != nil {
		searchWork = func(ctx context.Context, id string, spec jobs.Spec, progress func(string, float64)) (string, error) {
			progress = byStage(progress, searchStages)
			progress("opening the corpus", 0)
			e, err := d.Search(ctx)
			if err != nil {
				return "", err
			}
			n := cmp.Or(spec.Queries, defaultQueries)
			rep, err := e.Precompute(ctx, n, progress)
			if err != nil {
				return "", err
			}
			d.Log.Info("search rankings precomputed", "job", id, "queries", rep.Queries, "rankings", rep.Rankings,
				"cached", rep.Cached, "failed", rep.Failed, "took", rep.Duration)
			return e.CorpusVersion(), nil
		}
	}
	return jobs.Dispatch(socialWork, searchWork)
}

// NewSplit returns how the workers of d split a job: a social job trains
// in one worker (recommend.Service.Stage), precomputes its users' lists in
// shards that any worker ranks (PrecomputeShard), and publishes its
// version once every shard is in (PublishShards). Other jobs, and every
// job of a process without the recommend facade, run in one task.
func NewSplit(d Deps) func(jobs.Spec) *jobs.Split {
	return func(spec jobs.Spec) *jobs.Split {
		if d.Recommend == nil || spec.Target != jobs.TargetSocial {
			return nil
		}
		req := func(id string, spec jobs.Spec) recommend.RetrainRequest {
			return recommend.RetrainRequest{Learner: spec.Learner, DataPath: spec.Social, Version: id}
		}
		from, to := stageSpan(socialStages, precomputing)
		return &jobs.Split{
			Prepare: func(ctx context.Context, id string, spec jobs.Spec, progress func(string, float64)) (int, error) {
				svc, err := d.Recommend(ctx)
				if err != nil {
					return 0, err
				}
				shards, err := svc.Stage(ctx, req(id, spec), byStage(progress, socialStages))
				if err == nil {
					d.Log.Info("model staged", "job", id, "shards", shards)
				}
				return shards, err
			},
			Shard: func(ctx context.Context, id string, spec jobs.Spec, shard, shards int) error {
				svc, err := d.Recommend(ctx)
				if err != nil {
					return err
				}
				start, cpu := time.Now(), cputime.Process()
				if err := svc.PrecomputeShard(ctx, req(id, spec), shard, shards, nil); err != nil {
					return err
				}
				// The process's CPU time: all of it is the shard's at a
				// worker's concurrency 1.
				d.Log.Info("shard precomputed", "job", id, "shard", shard, "shards", shards,
					"took", time.Since(start).Round(time.Millisecond), "cpu", (cputime.Process() - cpu).Round(time.Millisecond))
				return nil
			},
			Finish: func(ctx context.Context, id string, spec jobs.Spec, shards int) (string, error) {
				svc, err := d.Recommend(ctx)
				if err != nil {
					return "", err
				}
				return svc.PublishShards(ctx, req(id, spec), shards)
			},
			Stage: precomputing, From: from, To: to,
		}
	}
}

// stage is a step of a job and the share of the job's time it takes.
type stage struct {
	name  string
	share float64
}

// The steps of the jobs, in order, as their work reports them.
var (
	socialStages = []stage{{"loading data", 0.05}, {"training", 0.6}, {precomputing, 0.3}, {"publishing", 0.05}}
	searchStages = []stage{{"opening the corpus", 0.2}, {"rankings", 0.8}}
)

// precomputing is the stage of a social job's lists.
const precomputing = "precomputing top-k"

// stageSpan returns the fractions of the job at which stage name starts
// and ends.
func stageSpan(stages []stage, name string) (from, to float64) {
	for _, s := range stages {
		if s.name == name {
			return from, from + s.share
		}
		from += s.share
	}
	return from, from
}

// byStage turns progress within a stage (stage, fraction of it done) into
// progress through the whole job, so that a bar moves from stage to stage
// instead of starting again at each; an unknown stage keeps the job's
// fraction where it was.
func byStage(progress func(string, float64), stages []stage) func(string, float64) {
	var at float64
	return func(name string, f float64) {
		if from, to := stageSpan(stages, name); to > from {
			at = from + (to-from)*min(max(f, 0), 1)
		}
		progress(name, at)
	}
}

// OpenQueue returns the job queue, checking every job at submission (see
// checkJob): in-process without a Redis URL, running the targets given,
// otherwise the queue shared with `kernelrank worker` processes, which run
// every target.
func OpenQueue(ctx context.Context, redisURL, queue string, h jobs.Handler, targets []string, log *slog.Logger) (jobs.Queue, error) {
	if redisURL == "" {
		return jobs.Checked(jobs.NewLocal(h, 0), checkJob(targets)), nil
	}
	ro, err := cache.ParseRedisURL(redisURL)
	if err != nil {
		return nil, err
	}
	q, err := jobs.NewAsynq(ctx, ro, jobs.Options{Queue: queue, Log: log})
	if err != nil {
		return nil, err
	}
	return jobs.Checked(q, checkJob(nil)), nil
}

// checkJob returns the check of a job at submission: its learner is one
// the recommenders can use, the social data it names can be read (the
// worker reads the same path: the machines of a deployment share it), and
// its target is among targets (nil: any).
func checkJob(targets []string) func(jobs.Spec) error {
	return func(spec jobs.Spec) error {
		if targets != nil {
			need := []string{spec.Target}
			if spec.Target == jobs.TargetAll {
				need = []string{jobs.TargetSocial, jobs.TargetSearch}
			}
			for _, t := range need {
				if !slices.Contains(targets, t) {
					return fmt.Errorf("target %q cannot run here: this deployment runs %s jobs only", spec.Target, strings.Join(targets, " and "))
				}
			}
		}
		if spec.Learner != "" {
			usable := recommend.Learners()
			if l, ok := learners.Lookup(spec.Learner); !ok || !slices.Contains(usable, l.Name) {
				return fmt.Errorf("unknown learner %q: the recommenders can use %s", spec.Learner, strings.Join(usable, ", "))
			}
		}
		if spec.Social != "" {
			if err := readable(spec.Social); err != nil {
				return fmt.Errorf("social data %s: %w", spec.Social, err)
			}
		}
		return nil
	}
}

// readable reports why path, a file or a directory, cannot be read.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return errors.Unwrap(err) // the *PathError's cause: the caller names the path
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		_, err = f.ReadDir(1)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
	_, err = f.Read(make([]byte, 1))
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Follow polls job id, showing its progress, until it ends. When ctx ends
// first (Ctrl-C) it cancels the job.
func Follow(ctx context.Context, q jobs.Queue, id string, bar *ProgressBar) (jobs.Job, error) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	defer bar.done()
	for {
		if ctx.Err() != nil {
			return q.Cancel(context.WithoutCancel(ctx), id)
		}
		j, err := q.Get(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				continue
			}
			return j, err
		}
		bar.update(j)
		if j.Status.Final() {
			return j, nil
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// ProgressBar shows a job's progress on a terminal as one line redrawn in
// place, and elsewhere (a log, a pipe) as a line per stage or 10 %.
type ProgressBar struct {
	w     io.Writer
	tty   bool
	start time.Time
	last  string // the last plain line's key
}

// NewProgressBar returns the bar of a job followed on w.
func NewProgressBar(w io.Writer) *ProgressBar {
	b := &ProgressBar{w: w, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			b.tty = true
		}
	}
	return b
}

func (b *ProgressBar) update(j jobs.Job) {
	what := string(j.Status)
	if j.Status == jobs.Running && j.Stage != "" {
		what = j.Stage
		if j.Shards > 0 {
			what += fmt.Sprintf(": %d/%d shards", j.ShardsDone, j.Shards)
		}
	} else if j.Status == jobs.Queued && j.Error != "" {
		what = "queued to retry after: " + j.Error
	}
	pct := int(j.Fraction * 100)
	elapsed := time.Since(b.start).Round(time.Second)
	if b.tty {
		const width = 24
		filled := pct * width / 100
		fmt.Fprintf(b.w, "\r[%s%s] %3d%% %-48.48s %8s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), pct, what, elapsed)
		return
	}
	if key := fmt.Sprintf("%s %d", what, pct/10); key != b.last {
		b.last = key
		fmt.Fprintf(b.w, "%3d%% %s (%s)\n", pct, what, elapsed)
	}
}

func (b *ProgressBar) done() {
	if b.tty {
		fmt.Fprintln(b.w)
	}
}

// Lazy opens a facade on first use and keeps it; a failed open is tried
// again by the next job.
type Lazy[T any] struct {
	mu   sync.Mutex
	v    T
	ok   bool
	Open func(context.Context) (T, error)
}

// Get returns the value, opening it first when no open has succeeded yet.
func (l *Lazy[T]) Get(ctx context.Context) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ok {
		v, err := l.Open(ctx)
		if err != nil {
			return v, err
		}
		l.v, l.ok = v, true
	}
	return l.v, nil
}

// ErrNoSearchHere refuses a search job in a process whose cache no server
// reads.
var ErrNoSearchHere = errors.New("search jobs fill the servers' cache of rankings: " +
	"run them in a server (POST /v1/jobs) or through Redis (--redis), not in a process of their own")

// NeedWorker fails when no `kernelrank worker` takes the jobs of queue,
// saying how to start one.
func NeedWorker(ctx context.Context, redisURL, queue string) error {
	ro, err := cache.ParseRedisURL(redisURL)
	if err != nil {
		return err
	}
	n, err := jobs.Workers(ctx, ro, queue)
	if err != nil {
		return fmt.Errorf("retrain: looking for workers: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("retrain: no worker takes the jobs of queue %q on %s: start one with "+
			"`kernelrank worker --redis %s --queue %s` (on any machine), or queue the job for a later worker with --detach",
			queue, redisURL, redisURL, queue)
	}
	return nil
}

// PrintVersions prints each version a job published, named: "social model
// V" and "corpus V" (the corpus version its rankings were computed on).
func PrintVersions(w io.Writer, target, version string) {
	names := map[string][]string{jobs.TargetSocial: {"social model"}, jobs.TargetSearch: {"corpus"}, jobs.TargetAll: {"social model", "corpus"}}[target]
	versions := strings.Fields(version)
	for i, v := range versions {
		name := "version"
		if len(names) == len(versions) {
			name = names[i]
		}
		fmt.Fprintln(w, name, v)
	}
}
