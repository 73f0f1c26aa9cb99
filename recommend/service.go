package recommend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/kernelrank/kernelrank/social"
)

// ErrTraining is returned by Service.Model while the model is still being
// trained; retry later.
var ErrTraining = errors.New("the model is being trained")

// Service serves recommendations over one data set: it trains one Model
// per learner on all of the data set's relations, in the background, the
// first time the learner is asked for (or at Start), and keeps it.
type Service struct {
	ds   *social.Dataset
	opts Options
	life context.Context // ends the training jobs when the server stops
	log  *slog.Logger

	mu   sync.Mutex
	jobs map[string]*job

	all relations // every friendship and membership, for profiles
}

type job struct {
	done    chan struct{}
	started time.Time
	model   *Model
	err     error
}

// NewService prepares a service; no training starts until Start or Model.
// life bounds the training jobs; opts.Learner is the default learner.
func NewService(life context.Context, ds *social.Dataset, opts Options) *Service {
	opts.defaults()
	return &Service{ds: ds, opts: opts, life: life, log: opts.Log, jobs: map[string]*job{}, all: newRelations(ds, ds.FullView())}
}

// Dataset returns the data set served.
func (s *Service) Dataset() *social.Dataset { return s.ds }

// DefaultLearner returns the learner used when a request names none.
func (s *Service) DefaultLearner() string { return s.opts.Learner }

// Start begins training the model of learner ("" for the default) unless it
// is trained or training. Errors wrap ErrLearner for a learner that cannot
// be used.
func (s *Service) Start(learner string) error {
	_, err := s.job(learner)
	return err
}

func (s *Service) job(learner string) (*job, error) {
	if learner == "" {
		learner = s.opts.Learner
	}
	if _, err := usable(learner, s.opts.Target); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[learner]; ok {
		return j, nil
	}
	j := &job{done: make(chan struct{}), started: time.Now()}
	s.jobs[learner] = j
	opts := s.opts
	opts.Learner = learner
	go func() {
		defer close(j.done)
		s.log.Info("training the recommender", "learner", learner, "users", s.ds.N())
		j.model, j.err = Train(s.life, s.ds, s.ds.FullView(), opts)
		if j.err != nil {
			s.log.Error("training the recommender failed", "learner", learner, "err", j.err)
			return
		}
		st := j.model.Stats()
		s.log.Info("recommender trained", "learner", learner, "took", time.Since(j.started).Round(time.Millisecond),
			"imports", st.Imports, "warnings", len(st.Warnings))
	}()
	return j, nil
}

// Model returns the trained model of learner ("" for the default),
// starting its training when needed and waiting for it while ctx lasts.
// Errors: ErrLearner (unusable learner), ErrTraining (still training when
// ctx ended), or the training's own error, returned on every later call.
func (s *Service) Model(ctx context.Context, learner string) (*Model, error) {
	j, err := s.job(learner)
	if err != nil {
		return nil, err
	}
	select { // a trained model wins over an ended ctx
	case <-j.done:
		return j.model, j.err
	default:
	}
	select {
	case <-j.done:
		return j.model, j.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w (for %v so far)", ErrTraining, time.Since(j.started).Round(time.Second))
	}
}

// Status is the state of one learner's model.
type Status struct {
	Learner string  `json:"learner"`
	State   string  `json:"state"` // training, ready or failed
	Error   string  `json:"error,omitempty"`
	Seconds float64 `json:"seconds"` // training time so far, or in all
}

// Status reports every model started, by learner name.
func (s *Service) Status() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Status
	for name, j := range s.jobs {
		st := Status{Learner: name, State: "training", Seconds: time.Since(j.started).Seconds()}
		select {
		case <-j.done:
			st.State = "ready"
			if j.err != nil {
				st.State, st.Error = "failed", j.err.Error()
			} else {
				m := j.model.Stats()
				st.Seconds = (m.Kernels + m.Combine + m.Negatives + m.Strength).Seconds()
			}
		default:
		}
		out = append(out, st)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Learner < out[b].Learner })
	return out
}

// Profile is what the data set says of one user.
type Profile struct {
	ID      string   `json:"id"`
	Friends []string `json:"friends"`
	Groups  []string `json:"groups"`
	Tags    []string `json:"tags"`
	Places  []string `json:"places"`
	Photos  int      `json:"photos"`
	Faves   int      `json:"faves"`
}

// Profile returns the user with the given id.
func (s *Service) Profile(id string) (*Profile, bool) {
	u, ok := s.ds.UserIndex(id)
	if !ok {
		return nil, false
	}
	usr := &s.ds.Users[u]
	p := &Profile{ID: id, Friends: make([]string, len(s.all.friends[u])), Groups: make([]string, len(s.all.groups[u])),
		Tags: nonNil(usr.Tags), Places: nonNil(usr.Places), Photos: len(usr.Photos), Faves: len(usr.Faves)}
	for i, v := range s.all.friends[u] {
		p.Friends[i] = s.ds.Users[v].ID
	}
	for i, g := range s.all.groups[u] {
		p.Groups[i] = s.ds.Groups[g]
	}
	return p, true
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
