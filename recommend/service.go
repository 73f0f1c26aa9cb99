package recommend

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/social"
	"golang.org/x/sync/singleflight"
)

// ErrTraining is returned by Service.Model while the model is still being
// loaded or trained; retry later.
var ErrTraining = errors.New("the model is being trained")

// Source (re)loads the social data a Service serves.
type Source interface {
	// Load reads the data at path; "" is the data the server was started
	// with.
	Load(ctx context.Context, path string) (*social.Dataset, error)
}

// DirSource is a directory read by social.LoadDir (the import format,
// ego-Facebook or BlogCatalog as published). Lines with problems are
// skipped and logged.
type DirSource struct {
	Dir     string
	Options social.ImportOptions
	Log     *slog.Logger // nil: none
}

var _ Source = DirSource{}

// Load implements Source.
func (d DirSource) Load(_ context.Context, path string) (*social.Dataset, error) {
	dir := cmp.Or(path, d.Dir)
	ds, rep, err := social.LoadDir(dir, d.Options)
	if err != nil {
		return nil, fmt.Errorf("social data: %w", err)
	}
	if d.Log != nil {
		if n := rep.Skipped(); n > 0 {
			d.Log.Warn("social data: problem lines skipped", "skipped", n, "report", rep.String())
		}
		d.Log.Info("social data loaded", "dir", dir, "format", ds.Format, "users", ds.N(), "friendships", len(ds.Friends), "groups", len(ds.Groups))
	}
	return ds, nil
}

// DefaultPrecomputeMaxUsers is ServiceOptions.PrecomputeMaxUsers' default.
const DefaultPrecomputeMaxUsers = 20000

// ServiceOptions configures a Service. The zero value is the default.
type ServiceOptions struct {
	// Options configures training; Options.Learner is the default learner
	// and Options.Log receives the service's log too.
	Options
	// TopK is the length of the precomputed top-k lists a trained model
	// is stored with (default DefaultTopK).
	TopK int
	// PrecomputeMaxUsers is the most users whose top-k lists are all
	// precomputed after training (default 20,000: n rankings of n users
	// each, O(n^2)); above it, a model is ready once trained and ranks
	// each user on demand, friends over the user's candidates only
	// (Model.WithCandidates), keeping the first TopK friends and groups of
	// the users asked for in a cache of RankCacheBytes (default 128 MiB,
	// about 1.8 KB a user: 50 friends and 50 groups).
	PrecomputeMaxUsers int
	RankCacheBytes     int64
	// ShardUsers is how many users a shard of a retraining job's
	// precomputation ranks (default DefaultShardUsers).
	ShardUsers int
	// PollInterval is how often the store's published versions are
	// checked (default 2 s).
	PollInterval time.Duration
	// Keep is the number of versions of a model kept after a publish, the
	// current one among them (default 3).
	Keep int
	// Locks, when set (the deployment's shared cache: Redis), makes the
	// servers that start together over an empty store train a model once:
	// one trains and publishes under the lock, the others wait for its
	// version and load it (up to TrainLockTTL, then train themselves).
	Locks cache.Cache
	// TrainLockTTL bounds that wait (default 10 min).
	TrainLockTTL time.Duration
	// RetrainAfter (0: never) retrains the default learner on the live
	// data once this many user changes have been applied (Apply) since
	// the last retrain; RetrainEvery (0: never) retrains it this often
	// when any have. Until then new and changed users are folded in.
	RetrainAfter int
	RetrainEvery time.Duration
}

// Service serves recommendations over a social data source, one model per
// learner, through a cache.Store of versioned models: a model is loaded
// from the store when its published version fits the learner, its
// parameters and the data, and otherwise trained, written and published.
// A watcher follows the published versions, so a model another process
// publishes (a retraining job) is served within a few poll intervals; the
// old model serves until the new one is fully loaded.
type Service struct {
	life  context.Context // ends training and watching when the server stops
	src   Source
	store cache.Store
	opts  ServiceOptions
	log   *slog.Logger

	data  atomic.Pointer[data] // the data set served
	first singleflight.Group   // one bring-up per learner at a time
	watch sync.Once

	mu    sync.Mutex
	slots map[string]*slot

	// applyMu orders Apply and the live views of models being served
	// (live.go); retrains counts what Apply started (retrain.go).
	applyMu  sync.Mutex
	applied  atomic.Bool // Apply has given the data served
	retrains retrainState

	staged staged // the retraining job this process precomputes shards of

	trained, loaded, published, loadFailed atomic.Int64
}

// data is one load of the social data.
type data struct {
	ds  *social.Dataset
	all relations // every friendship and membership, for profiles

	once sync.Once
	v    string
}

// version is the data's Version, computed on first use: O(data), which
// a change applied (Apply) need not pay before it is asked.
func (d *data) version() string {
	d.once.Do(func() { d.v = d.ds.Version() })
	return d.v
}

// slot is one learner's served model and state.
type slot struct {
	learner, name string // name: the store's model name (StoreName)
	model         atomic.Pointer[Model]
	view          atomic.Pointer[liveView] // the model against the live data (live.go)

	// Guarded by Service.mu.
	state string    // idle (not brought up), loading, training, ready or failed
	since time.Time // start of the state's work
	// stage and fraction: how far training has got (Options.Progress's
	// stage, or "precomputing top-k").
	stage    string
	fraction float64
	took     time.Duration
	source   string // store or trained: where the served model came from
	err      error  // why there is no model (failed)
	warning  string // the last problem while a model serves
	bad      string // a published version that failed to load: not retried
	// storeDown: the warning is the model store failing, which its next
	// answer clears.
	storeDown bool
}

// NewService loads the data from src ("" path) and prepares a service;
// nothing is loaded or trained until Start or Model. life bounds the
// background work.
func NewService(life context.Context, src Source, store cache.Store, opts ServiceOptions) (*Service, error) {
	opts.defaults()
	if opts.TopK <= 0 {
		opts.TopK = DefaultTopK
	}
	if opts.PrecomputeMaxUsers <= 0 {
		opts.PrecomputeMaxUsers = DefaultPrecomputeMaxUsers
	}
	if opts.RankCacheBytes <= 0 {
		opts.RankCacheBytes = 128 << 20
	}
	if opts.ShardUsers <= 0 {
		opts.ShardUsers = DefaultShardUsers
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 2 * time.Second
	}
	if opts.Keep <= 0 {
		opts.Keep = 3
	}
	if opts.TrainLockTTL <= 0 {
		opts.TrainLockTTL = 10 * time.Minute
	}
	s := &Service{life: life, src: src, store: store, opts: opts, log: opts.Log, slots: map[string]*slot{}}
	d, err := s.loadData(life, "")
	if err != nil {
		return nil, err
	}
	s.data.Store(d)
	return s, nil
}

func (s *Service) loadData(ctx context.Context, path string) (*data, error) {
	ds, err := s.src.Load(ctx, path)
	if err != nil {
		return nil, err
	}
	return &data{ds: ds, all: newRelations(ds, ds.FullView())}, nil
}

// Dataset returns the data set served (the last one loaded).
func (s *Service) Dataset() *social.Dataset { return s.data.Load().ds }

// DefaultLearner returns the learner used when a request names none.
func (s *Service) DefaultLearner() string { return s.opts.Learner }

// Start brings up the default learner's model in the background (from the
// store, or trained and published) and starts following the store's
// published versions. Errors wrap ErrLearner for an unusable default
// learner.
func (s *Service) Start() error {
	sl, err := s.slot(s.opts.Learner)
	if err != nil {
		return err
	}
	s.bringUpAsync(sl)
	s.watch.Do(func() {
		go s.follow()
		if s.opts.RetrainEvery > 0 {
			go s.retrainEvery()
		}
	})
	return nil
}

// bringUpAsync starts bringUp (unless running) and returns its result's
// channel. The slot says "loading" at once, so that readiness checks
// right after see it.
func (s *Service) bringUpAsync(sl *slot) <-chan singleflight.Result {
	s.mu.Lock()
	if sl.state == "idle" {
		sl.state, sl.since = "loading", time.Now()
	}
	s.mu.Unlock()
	return s.first.DoChan(sl.learner, func() (any, error) { return nil, s.bringUp(sl) })
}

// slot returns learner's slot ("" for the default), made on first use.
func (s *Service) slot(learner string) (*slot, error) {
	learner = cmp.Or(learner, s.opts.Learner)
	if _, err := usable(learner, s.opts.Target); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sl, ok := s.slots[learner]; ok {
		return sl, nil
	}
	name, err := StoreName(s.trainOptions(learner))
	if err != nil {
		return nil, err
	}
	sl := &slot{learner: learner, name: name, state: "idle", since: time.Now()}
	s.slots[learner] = sl
	return sl, nil
}

func (s *Service) trainOptions(learner string) Options {
	o := s.opts.Options
	o.Learner = learner
	return o
}

// Model returns the served model of learner ("" for the default),
// bringing it up when needed and waiting for it while ctx lasts. Errors:
// ErrLearner (unusable learner), ErrTraining (not ready when ctx ended),
// or why it could not be trained, returned on every later call until a
// model is published for it.
func (s *Service) Model(ctx context.Context, learner string) (*Model, error) {
	sl, err := s.slot(learner)
	if err != nil {
		return nil, err
	}
	if m := sl.model.Load(); m != nil {
		return m, nil
	}
	ch := s.bringUpAsync(sl)
	select { // a ready model wins over an ended ctx
	case r := <-ch:
		return s.result(sl, r.Err)
	default:
	}
	select {
	case r := <-ch:
		return s.result(sl, r.Err)
	case <-ctx.Done():
		s.mu.Lock()
		since := sl.since
		s.mu.Unlock()
		return nil, fmt.Errorf("%w (for %v so far)", ErrTraining, time.Since(since).Round(time.Second))
	}
}

func (s *Service) result(sl *slot, err error) (*Model, error) {
	if m := sl.model.Load(); m != nil {
		return m, nil
	}
	return nil, err
}

// bringUp loads learner's published model when it fits the data, else
// trains, publishes and serves one. A failure is kept: later calls return
// it without training again.
func (s *Service) bringUp(sl *slot) error {
	start := time.Now()
	s.mu.Lock()
	done, failed := sl.model.Load() != nil, sl.err
	if !done && failed == nil {
		sl.state, sl.since = "loading", start
	}
	s.mu.Unlock()
	if done || failed != nil {
		return failed
	}
	d := s.data.Load()
	log := s.log.With("learner", sl.learner, "model", sl.name)
	version, err := s.store.Current(s.life, sl.name)
	switch {
	case err == nil:
		log.Info("loading the published recommender", "version", version)
		m, err := s.loadFitting(sl, version, d)
		if err == nil {
			s.loaded.Add(1)
			s.serve(sl, m, "store", "", time.Since(start))
			log.Info("recommender loaded", "version", version, "took", time.Since(start).Round(time.Millisecond))
			return nil
		}
		log.Warn("the published recommender cannot be served; training one", "version", version, "err", err)
	case !errors.Is(err, cache.ErrMiss):
		log.Warn("the model store failed; training", "err", err)
	default: // none published: train once across the servers starting now
		unlock, m := s.trainLock(sl, log)
		if m != nil {
			s.loaded.Add(1)
			s.serve(sl, m, "store", "", time.Since(start))
			return nil
		}
		defer unlock()
	}
	s.mu.Lock()
	sl.state, sl.since = "training", time.Now()
	s.mu.Unlock()
	m, err := s.build(s.life, sl.learner, d, func(stage string, f float64) {
		s.mu.Lock()
		sl.stage, sl.fraction = stage, f
		s.mu.Unlock()
	})
	if err != nil {
		log.Error("training the recommender failed", "err", err)
		s.mu.Lock()
		sl.state, sl.err = "failed", err
		s.mu.Unlock()
		return err
	}
	warning := ""
	if m.version, err = s.publish(s.life, sl, m, ""); err != nil {
		// Serve it all the same: the store failing must not keep the
		// recommender down; the next start trains again.
		warning = "the trained model was not stored: " + err.Error()
		log.Warn("storing the recommender failed; serving it unstored", "err", err)
		m.version = ""
	}
	s.serve(sl, m, "trained", warning, time.Since(start))
	return nil
}

// train trains learner's model on d; progress may be nil.
func (s *Service) train(ctx context.Context, learner string, d *data, progress func(string, float64)) (*Model, error) {
	log := s.log.With("learner", learner)
	start := time.Now()
	log.Info("training the recommender", "users", d.ds.N(), "data_version", d.version())
	opts := s.trainOptions(learner)
	opts.Progress = progress
	m, err := Train(ctx, d.ds, d.ds.FullView(), opts)
	if err != nil {
		return nil, err
	}
	st := m.Stats()
	log.Info("recommender trained", "took", time.Since(start).Round(time.Millisecond), "imports", st.Imports, "friend_scorer", st.Selection.Scorer, "group_scorer", st.GroupSelection.Scorer, "warnings", len(st.Warnings))
	s.trained.Add(1)
	return m, nil
}

// build trains learner's model on d and, up to PrecomputeMaxUsers users,
// precomputes its top-k lists.
func (s *Service) build(ctx context.Context, learner string, d *data, progress func(string, float64)) (*Model, error) {
	report := func(stage string, f float64) {
		if progress != nil {
			progress(stage, f)
		}
	}
	m, err := s.train(ctx, learner, d, report)
	if err != nil {
		return nil, err
	}
	log := s.log.With("learner", learner)
	if d.ds.N() > s.opts.PrecomputeMaxUsers {
		log.Info("top-k not precomputed: users are ranked on demand", "users", d.ds.N(), "precompute_max_users", s.opts.PrecomputeMaxUsers)
		return m, nil
	}
	start := time.Now()
	report("precomputing top-k", 0)
	m, err = m.WithTop(ctx, s.opts.TopK, func(f float64) { report("precomputing top-k", f) })
	if err != nil {
		return nil, err
	}
	log.Info("top-k precomputed", "k", s.opts.TopK, "took", time.Since(start).Round(time.Millisecond))
	return m, nil
}

// publish writes m as version ("" makes one up) of sl's model, publishes
// it and removes the versions beyond the last Keep. A cancelled ctx
// publishes nothing.
func (s *Service) publish(ctx context.Context, sl *slot, m *Model, version string) (string, error) {
	if version == "" {
		version = NewVersion()
	}
	parts, err := m.Encode()
	if err != nil {
		return "", err
	}
	return version, s.writeAndPublish(ctx, sl, version, parts)
}

// writeAndPublish writes parts as version of sl's model, publishes it and
// removes the versions beyond the last Keep. A cancelled ctx publishes
// nothing.
func (s *Service) writeAndPublish(ctx context.Context, sl *slot, version string, parts map[string][]byte) error {
	log := s.log.With("learner", sl.learner, "model", sl.name, "version", version)
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.store.Write(ctx, sl.name, version, parts); err != nil {
		return fmt.Errorf("writing %s version %s: %w", sl.name, version, err)
	}
	log.Info("recommender written", "parts", len(parts), "bytes", size)
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.store.Publish(ctx, sl.name, version); err != nil {
		return fmt.Errorf("publishing %s version %s: %w", sl.name, version, err)
	}
	s.published.Add(1)
	log.Info("recommender published")
	s.prune(ctx, sl.name, log)
	return nil
}

// prune removes the versions of model beyond the last Keep; a failure
// only costs space, so it is logged.
func (s *Service) prune(ctx context.Context, model string, log *slog.Logger) {
	versions, err := s.store.Versions(ctx, model)
	if err != nil {
		log.Warn("listing old versions failed", "err", err)
		return
	}
	cur, _ := s.store.Current(ctx, model)
	for _, v := range versions[:max(len(versions)-s.opts.Keep, 0)] {
		if v == cur {
			continue
		}
		if err := s.store.Remove(ctx, model, v); err != nil {
			log.Warn("removing an old version failed", "old", v, "err", err)
		}
	}
}

// NewVersion returns a unique version name that sorts by creation time.
func NewVersion() string {
	var b [4]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + hex.EncodeToString(b[:])
}

// serve makes m the served model of sl; took is how long its load or
// training took.
func (s *Service) serve(sl *slot, m *Model, source, warning string, took time.Duration) {
	if m.candidates == nil && m.TopK() > 0 && m.ds.N() > s.opts.PrecomputeMaxUsers {
		m = m.WithCandidates() // rankings beyond the lists, as on demand
	}
	if m.TopK() == 0 && m.cached == nil {
		m = m.WithCandidates()
		if groupNeedsStrength(m.groupScorer) {
			m.logLargeGroups(s.log)
		}
		if c, err := m.WithCache(s.opts.RankCacheBytes, s.opts.TopK); err == nil {
			m = c
		} else {
			s.log.Warn("rankings computed on demand are not cached", "err", err)
		}
	}
	m.kernelSums() // one product a kernel, here rather than in the first explanation
	s.setView(sl, m)
	s.mu.Lock()
	defer s.mu.Unlock()
	sl.model.Store(m)
	sl.state, sl.source, sl.err, sl.warning, sl.storeDown, sl.took = "ready", source, nil, warning, false, took
}

// trainLock takes the cross-process lock on training sl's model (a no-op
// without ServiceOptions.Locks) and returns its release. While another
// process holds it, it waits for that process's version, polling the
// store, and returns it loaded (unlock nil) when it fits this data; it
// gives up after TrainLockTTL, or when the version does not fit, and then
// the caller trains.
func (s *Service) trainLock(sl *slot, log *slog.Logger) (unlock func(), m *Model) {
	noop := func() {}
	if s.opts.Locks == nil {
		return noop, nil
	}
	name := "train:" + sl.name
	deadline := time.Now().Add(s.opts.TrainLockTTL)
	for time.Now().Before(deadline) {
		unlock, ok, err := s.opts.Locks.Lock(s.life, name, s.opts.TrainLockTTL)
		switch {
		case err != nil:
			log.Warn("the training lock failed; training", "err", err)
			return noop, nil
		case ok:
			// A version may have been published since we looked.
			if v, err := s.store.Current(s.life, sl.name); err == nil {
				if m, err := s.loadFitting(sl, v, s.data.Load()); err == nil {
					unlock()
					return nil, m
				}
			}
			return unlock, nil
		}
		if v, err := s.store.Current(s.life, sl.name); err == nil {
			d := s.data.Load()
			m, err := s.loadFitting(sl, v, d)
			if err != nil {
				log.Warn("the version another server trained cannot be served; training", "version", v, "err", err)
				return noop, nil
			}
			log.Info("loaded the recommender another server trained", "version", v)
			return nil, m
		}
		select {
		case <-s.life.Done():
			return noop, nil
		case <-time.After(s.opts.PollInterval):
		}
	}
	return noop, nil
}

// RetrainRequest is what a retraining job asks for.
type RetrainRequest struct {
	Learner string `json:"learner,omitempty"` // "" for the default
	// DataPath is the social data to train on; "" re-reads the service's
	// source.
	DataPath string `json:"data_path,omitempty"`
	// Version names the version published: the job's id, so that a retry
	// publishes the same version, never a second one; "" makes one up.
	Version string `json:"version,omitempty"`
}

// Retrain re-reads the data, trains the learner's model, precomputes
// every user's lists in this process, shard after shard (Stage,
// PrecomputeShard), and publishes it (PublishShards); it returns the
// version published. progress (may be nil) gets the stage and the fraction
// of it done. A cancelled ctx publishes nothing. A version already
// published is returned as it is. Servers following the store serve the
// new model within a few poll intervals (when it fits their data); this
// service serves it at once when it was trained on the data it serves.
func (s *Service) Retrain(ctx context.Context, req RetrainRequest, progress func(stage string, fraction float64)) (string, error) {
	sl, err := s.slot(req.Learner)
	if err != nil {
		return "", err
	}
	if req.Version != "" {
		if cur, err := s.store.Current(ctx, sl.name); err == nil && cur == req.Version {
			return cur, nil
		}
	} else {
		req.Version = NewVersion()
	}
	report := func(stage string, f float64) {
		if progress != nil {
			progress(stage, f)
		}
	}
	shards, err := s.Stage(ctx, req, report)
	if err != nil {
		return "", err
	}
	report("precomputing top-k", 0)
	for shard := range shards {
		err := s.PrecomputeShard(ctx, req, shard, shards, func(f float64) {
			report("precomputing top-k", (float64(shard)+f)/float64(shards))
		})
		if err != nil {
			return "", err
		}
	}
	report("publishing", 0)
	return s.PublishShards(ctx, req, shards)
}

// follow polls the published versions every PollInterval until the
// service's life ends.
func (s *Service) follow() { s.every(s.opts.PollInterval, s.poll) }

// every calls fn every d until the service's life ends.
func (s *Service) every(d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-s.life.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

// poll serves the published version of every learner not being brought
// up whose served model differs from it.
func (s *Service) poll() {
	s.mu.Lock()
	var check []*slot
	for _, sl := range s.slots {
		if sl.state != "loading" && sl.state != "training" {
			check = append(check, sl)
		}
	}
	s.mu.Unlock()
	for _, sl := range check {
		version, err := s.store.Current(s.life, sl.name)
		if err != nil && !errors.Is(err, cache.ErrMiss) {
			s.mu.Lock()
			sl.warning, sl.storeDown = fmt.Sprintf("the model store failed: %v", err), true
			s.mu.Unlock()
			continue
		}
		s.mu.Lock()
		if sl.storeDown { // it answers again
			sl.warning, sl.storeDown = "", false
		}
		s.mu.Unlock()
		if err != nil {
			continue
		}
		s.mu.Lock()
		skip := version == sl.bad
		s.mu.Unlock()
		if m := sl.model.Load(); skip || (m != nil && m.version == version) {
			continue
		}
		s.switchTo(sl, version)
	}
}

// switchTo loads version of sl's model and serves it; the old model
// serves meanwhile, and on failure. A model of other data re-reads the
// source first.
func (s *Service) switchTo(sl *slot, version string) {
	log := s.log.With("learner", sl.learner, "model", sl.name, "version", version)
	log.Info("a new recommender version is published; loading it")
	start := time.Now()
	d := s.data.Load()
	m, err := s.loadFitting(sl, version, d)
	if errors.Is(err, ErrDataVersion) && !s.applied.Load() { // data served from files: re-read them
		log.Info("the new version was trained on other data; re-reading the data source")
		var nd *data
		if nd, err = s.loadData(s.life, ""); err == nil {
			if m, err = Load(s.life, s.store, sl.name, version, nd.ds, nd.version()); err == nil {
				s.data.Store(nd)
			}
		}
	}
	if err != nil {
		s.loadFailed.Add(1)
		log.Warn("the new recommender version cannot be served; keeping the old one", "err", err)
		s.warn(sl, version, fmt.Sprintf("version %s not served: %v", version, err))
		return
	}
	s.loaded.Add(1)
	s.serve(sl, m, "store", "", time.Since(start))
	log.Info("recommender version switched", "took", time.Since(start).Round(time.Millisecond))
}

// warn records a problem of sl; bad, when not "", is a version not to
// load again.
func (s *Service) warn(sl *slot, bad, warning string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl.warning, sl.storeDown = warning, false
	if bad != "" {
		sl.bad = bad
	}
}

// Status is the state of one learner's model.
type Status struct {
	Learner string `json:"learner"`
	State   string `json:"state"` // idle, loading, training, ready or failed
	Error   string `json:"error,omitempty"`
	// Warning is the last problem while a model serves: a published
	// version that could not be loaded, a store that failed.
	Warning string `json:"warning,omitempty"`
	// Stage and Fraction say how far training has got: the stage
	// (Stages, then "precomputing top-k") and the fraction of it done.
	Stage    string  `json:"stage,omitempty"`
	Fraction float64 `json:"fraction,omitempty"`
	// Seconds is the time spent so far, or taken by the served model's
	// load or training.
	Seconds float64 `json:"seconds"`
	// Model is the store's name of the learner's models; Version the
	// served one ("" for a model not stored), Source where it came from
	// (store or trained), DataVersion the data it was trained on.
	Model       string `json:"model"`
	Version     string `json:"version,omitempty"`
	Source      string `json:"source,omitempty"`
	DataVersion string `json:"data_version,omitempty"`
}

// Status reports every learner asked for, by name.
func (s *Service) Status() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Status
	for _, sl := range s.slots {
		st := Status{Learner: sl.learner, State: sl.state, Warning: sl.warning, Model: sl.name, Source: sl.source, Seconds: sl.took.Seconds()}
		if sl.state == "loading" || sl.state == "training" {
			st.Seconds = time.Since(sl.since).Seconds()
		}
		if sl.state == "training" {
			st.Stage, st.Fraction = sl.stage, sl.fraction
		}
		if sl.err != nil {
			st.Error = sl.err.Error()
		}
		if m := sl.model.Load(); m != nil {
			st.Version, st.DataVersion = m.version, m.dataVersion
		}
		out = append(out, st)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Learner < out[b].Learner })
	return out
}

// Counts says how often the service trained, loaded and published models
// and how many published versions it could not load.
type Counts struct {
	Trained, Loaded, Published, LoadFailed int64
}

// Counts returns the counts so far.
func (s *Service) Counts() Counts {
	return Counts{s.trained.Load(), s.loaded.Load(), s.published.Load(), s.loadFailed.Load()}
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
	d := s.data.Load()
	u, ok := d.ds.UserIndex(id)
	if !ok {
		return nil, false
	}
	usr := &d.ds.Users[u]
	p := &Profile{ID: id, Friends: make([]string, len(d.all.friends[u])), Groups: make([]string, len(d.all.groups[u])),
		Tags: nonNil(usr.Tags), Places: nonNil(usr.Places), Photos: len(usr.Photos), Faves: len(usr.Faves)}
	for i, v := range d.all.friends[u] {
		p.Friends[i] = d.ds.Users[v].ID
	}
	for i, g := range d.all.groups[u] {
		p.Groups[i] = d.ds.Groups[g]
	}
	return p, true
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
