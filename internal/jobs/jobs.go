// Package jobs runs kernelrank's retraining jobs: learning a new social
// recommender or precomputing the rankings of frequent queries, then
// publishing the result as a new model version. A job has an id, a status,
// progress, timings, and can be cancelled.
//
// Two queues implement one Queue interface: Local runs jobs inside the
// process, one at a time (a server without Redis); Asynq shares a Redis
// task queue (github.com/hibiken/asynq) with any number of Worker
// processes on any number of machines, whose leases hand a dead worker's
// job to another. The work itself is a Handler the caller plugs in; it
// publishes under the job's id, so a job retried after a crash republishes
// the same version rather than a second one. On Asynq workers a job may be
// split (Split): a first step, shards that any worker runs, and a last
// step once every shard is done.
package jobs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors callers map to HTTP statuses.
var (
	ErrSpec     = errors.New("bad job spec")         // 400
	ErrNotFound = errors.New("no such job")          // 404
	ErrFinished = errors.New("job already finished") // 409
	ErrClosed   = errors.New("job queue closed")     // 503
)

// Targets of a job.
const (
	TargetSocial = "social" // retrain the social recommender
	TargetSearch = "search" // precompute the rankings of the most frequent queries
	TargetAll    = "all"    // social, then search
)

// MaxQueries bounds Spec.Queries.
const MaxQueries = 100000

// Spec says what a job does.
type Spec struct {
	Target string `json:"target"`
	// Social is the social data a social job reads; empty: the data the
	// server was started with.
	Social string `json:"social,omitempty"`
	// Learner is the kernel-combination learner; empty: the default.
	Learner string `json:"learner,omitempty"`
	// Queries is how many of the most frequent queries a search job
	// precomputes; 0: the handler's default.
	Queries int `json:"queries,omitempty"`
}

// Validate checks a spec; its errors wrap ErrSpec.
func (s Spec) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, a...))
	}
	switch s.Target {
	case TargetSocial, TargetSearch, TargetAll:
	case "":
		return bad("target is required: social, search or all")
	default:
		return bad("unknown target %q: use social, search or all", s.Target)
	}
	if s.Social != "" && s.Target == TargetSearch {
		return bad("social names social data, which a search job does not read")
	}
	if s.Queries != 0 && s.Target == TargetSocial {
		return bad("queries is for search jobs")
	}
	if s.Queries < 0 || s.Queries > MaxQueries {
		return bad("queries must be between 1 and %d", MaxQueries)
	}
	if len(s.Learner) > 64 || strings.ContainsFunc(s.Learner, notNameRune) {
		return bad("learner %q is not a learner name", s.Learner)
	}
	return nil
}

func notNameRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
}

// ParseSpec decodes a JSON spec, rejecting unknown fields, and validates
// it. Its errors wrap ErrSpec.
func ParseSpec(data []byte) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("%w: body must be a JSON object such as {\"target\": \"social\"}: %v", ErrSpec, err)
	}
	if dec.More() {
		return s, fmt.Errorf("%w: one JSON object expected", ErrSpec)
	}
	return s, s.Validate()
}

// Status is where a job is in its life.
type Status string

// Statuses of a job.
const (
	Queued    Status = "queued" // waiting for a runner, also between attempts
	Running   Status = "running"
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
	Cancelled Status = "cancelled"
)

// Final reports whether a job in status s has ended for good.
func (s Status) Final() bool { return s == Succeeded || s == Failed || s == Cancelled }

// Job is a job's state as the queue reports it.
type Job struct {
	ID       string  `json:"id"`
	Spec     Spec    `json:"spec"`
	Status   Status  `json:"status"`
	Stage    string  `json:"stage,omitempty"`
	Fraction float64 `json:"fraction"` // of the work done, 0 to 1
	Attempts int     `json:"attempts"` // runs started, retries included
	// Shards and ShardsDone: of a job split into shards (Split), once they
	// are queued.
	Shards     int       `json:"shards,omitempty"`
	ShardsDone int       `json:"shards_done,omitempty"`
	EnqueuedAt time.Time `json:"enqueued_at"`
	StartedAt  time.Time `json:"started_at,omitzero"` // of the last attempt
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Version    string    `json:"version,omitempty"` // published, when succeeded
	Error      string    `json:"error,omitempty"`   // why it failed, or the last attempt's error
}

// Handler does a job's work and publishes its result as version id,
// returning the version published. It reports progress (stage, fraction
// of the whole from 0 to 1) as it goes, and stops without publishing when
// ctx is cancelled. A Handler may run again for the same id after a crash:
// publishing id again must be harmless (write the parts, then switch one
// pointer). An error wrapping ErrSpec means the spec cannot be run: it is
// not retried.
type Handler func(ctx context.Context, id string, spec Spec, progress func(stage string, fraction float64)) (version string, err error)

// Queue runs jobs.
type Queue interface {
	// Enqueue validates spec (errors wrap ErrSpec) and queues a job.
	Enqueue(ctx context.Context, spec Spec) (Job, error)
	// Get returns a job, or ErrNotFound.
	Get(ctx context.Context, id string) (Job, error)
	// List returns the n most recent jobs, most recent first.
	List(ctx context.Context, n int) ([]Job, error)
	// Cancel stops a job: a queued one never runs, a running one has its
	// context cancelled and publishes nothing. It waits a little for a
	// running job to stop and returns the job as it is then. A finished
	// job gives ErrFinished, an unknown one ErrNotFound.
	Cancel(ctx context.Context, id string) (Job, error)
	Close() error
}

// Checked returns q with Enqueue also running check after Validate: what
// only the deployment knows (its learners, the files it reads, the targets
// it runs) is refused at submission, with an error wrapping ErrSpec, rather
// than queued as a job that fails on every attempt.
func Checked(q Queue, check func(Spec) error) Queue { return checked{q, check} }

type checked struct {
	Queue
	check func(Spec) error
}

func (c checked) Enqueue(ctx context.Context, spec Spec) (Job, error) {
	if err := spec.Validate(); err != nil {
		return Job{}, err
	}
	if err := c.check(spec); err != nil {
		return Job{}, fmt.Errorf("%w: %w", ErrSpec, err)
	}
	return c.Queue.Enqueue(ctx, spec)
}

// cancelWait is how long Cancel waits for a running job to stop before it
// returns the job still running (its handler is slow to notice).
const cancelWait = 10 * time.Second

// newID returns a job id that sorts by time and is a valid version name
// (no slashes, no dots at the start).
func newID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// clamp keeps a reported fraction in [0, 1].
func clamp(f float64) float64 {
	if !(f > 0) { // also NaN
		return 0
	}
	return min(f, 1)
}

// ended returns the status a run ends in when its handler returned err:
// succeeded when it returned no error (it has published, even if a cancel
// arrived late), cancelled when a cancel was requested, and otherwise
// failed, or queued again when it has retries left.
func ended(err error, cancelRequested, retriesLeft bool) Status {
	switch {
	case err == nil:
		return Succeeded
	case cancelRequested:
		return Cancelled
	case retriesLeft && !errors.Is(err, ErrSpec):
		return Queued
	}
	return Failed
}
