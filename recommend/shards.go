package recommend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kernelrank/kernelrank/cache"
)

// A retraining job precomputes every user's lists in shards that any
// number of processes rank (Service.Stage, PrecomputeShard,
// PublishShards): the trained model is written without lists as a version
// of the staged model (StagedName) under the job's version, each shard
// writes its users' lists as a version of its own there, and the publish
// step assembles the model and every shard's lists into the version of
// the served model and publishes it. The staged model is a separate name,
// so its versions are never among the served model's, and a version whose
// shards are not all in cannot be assembled, hence never published.

// DefaultShardUsers is ServiceOptions.ShardUsers' default.
const DefaultShardUsers = 2048

// shardPlan is how a staged model's lists are precomputed: shards of
// Users users each (the last one the rest), K items a list.
type shardPlan struct {
	Users int `json:"users"`
	K     int `json:"k"`
}

// shards returns how many shards n users make.
func (p shardPlan) shards(n int) int { return max(1, (n+p.Users-1)/p.Users) }

// StagedName returns the store's name of the staged versions of the model
// name: trained models whose lists are being precomputed, and their
// shards' lists.
func StagedName(name string) string { return name + ".staged" }

// shardVersion names the staged version holding a shard's lists.
func shardVersion(version string, shard int) string {
	return fmt.Sprintf("%s.shard-%d", version, shard)
}

// staged is the trained model of the job being precomputed, kept by the
// process that trained or loaded it for its next shards.
type staged struct {
	mu      sync.Mutex // held while it loads
	version string
	model   *Model // ranking as the served model ranks (forRanking)
	plan    shardPlan
}

// forRanking returns m as it is served: above PrecomputeMaxUsers it ranks
// friends over their candidates, so that precomputed lists are the lists
// a request would rank on demand.
func (s *Service) forRanking(m *Model) *Model {
	if m.ds.N() > s.opts.PrecomputeMaxUsers && m.candidates == nil {
		return m.WithCandidates()
	}
	return m
}

// Stage re-reads the data, trains the learner's model and writes it,
// without lists, as version req.Version of the staged model; it returns
// how many shards its lists take (PrecomputeShard). progress (may be nil)
// gets the stage and the fraction of it done. Nothing is published.
func (s *Service) Stage(ctx context.Context, req RetrainRequest, progress func(stage string, fraction float64)) (shards int, err error) {
	if req.Version == "" {
		return 0, errors.New("recommend: a staged model needs a version")
	}
	sl, err := s.slot(req.Learner)
	if err != nil {
		return 0, err
	}
	if progress != nil {
		progress("loading data", 0)
	}
	d, err := s.jobData(ctx, req.DataPath)
	if err != nil {
		return 0, err
	}
	m, err := s.train(ctx, sl.learner, d, progress)
	if err != nil {
		return 0, err
	}
	plan := shardPlan{Users: s.opts.ShardUsers, K: s.opts.TopK}
	parts, err := m.encode(&plan)
	if err != nil {
		return 0, err
	}
	if err := s.store.Write(ctx, StagedName(sl.name), req.Version, parts); err != nil {
		return 0, fmt.Errorf("writing staged %s version %s: %w", sl.name, req.Version, err)
	}
	s.staged.mu.Lock()
	s.staged.version, s.staged.model, s.staged.plan = req.Version, s.forRanking(m), plan
	s.staged.mu.Unlock()
	return plan.shards(d.ds.N()), nil
}

// PrecomputeShard ranks the users of shard (of shards) of the staged
// version req.Version and writes their lists to the store. A process
// that did not train it loads it from the store (and req.DataPath's data)
// once, for all the shards it runs. Running a shard again is harmless.
func (s *Service) PrecomputeShard(ctx context.Context, req RetrainRequest, shard, shards int, progress func(fraction float64)) error {
	sl, err := s.slot(req.Learner)
	if err != nil {
		return err
	}
	m, plan, err := s.stagedModel(ctx, sl, req)
	if err != nil {
		return err
	}
	n := m.ds.N()
	if want := plan.shards(n); shards != want || shard < 0 || shard >= shards {
		return fmt.Errorf("recommend: shard %d of %d: the staged version %s has %d shards", shard, shards, req.Version, want)
	}
	lo := shard * plan.Users
	hi := min(n, lo+plan.Users)
	top, err := m.rankRange(ctx, lo, hi, plan.K, progress)
	if err != nil {
		return err
	}
	values := map[string]cache.Value{}
	top.values(values, hi-lo)
	parts, err := encodeValues(values)
	if err != nil {
		return err
	}
	return s.store.Write(ctx, StagedName(sl.name), shardVersion(req.Version, shard), parts)
}

// jobData returns the data a job trains on: path's, or, for a service
// fed by Apply and no path, the live data it serves (the store's
// snapshot). A worker that did not train a job on live data loads its
// staged model only while its live data has the version the model was
// trained on: a change in between fails the shard, and asynq's retry
// runs it again once the data has settled on some worker.
func (s *Service) jobData(ctx context.Context, path string) (*data, error) {
	if path == "" && s.applied.Load() {
		return s.data.Load(), nil
	}
	return s.loadData(ctx, path)
}

// stagedModel returns the staged model of req.Version and its plan,
// loading it when this process holds another.
func (s *Service) stagedModel(ctx context.Context, sl *slot, req RetrainRequest) (*Model, shardPlan, error) {
	s.staged.mu.Lock()
	defer s.staged.mu.Unlock()
	if s.staged.version == req.Version {
		return s.staged.model, s.staged.plan, nil
	}
	name := StagedName(sl.name)
	md, err := readMeta(ctx, s.store, name, req.Version)
	if err != nil {
		return nil, shardPlan{}, err
	}
	if md.Shards == nil || md.Shards.Users < 1 || md.Shards.K < 1 {
		return nil, shardPlan{}, fmt.Errorf("recommend: staged %s version %s has no shard plan", sl.name, req.Version)
	}
	d, err := s.jobData(ctx, req.DataPath)
	if err != nil {
		return nil, shardPlan{}, err
	}
	m, err := Load(ctx, s.store, name, req.Version, d.ds, d.version())
	if err != nil {
		return nil, shardPlan{}, err
	}
	s.staged.version, s.staged.model, s.staged.plan = req.Version, s.forRanking(m), *md.Shards
	return s.staged.model, s.staged.plan, nil
}

// PublishShards assembles the staged version req.Version and the lists of
// its shards (of shards) into version req.Version of the model, publishes
// it and removes the staged versions. It fails, publishing nothing, while
// a shard's lists are not in the store. A version already published is
// returned as it is. The process that staged the model serves it at once
// when it was trained on the data it serves.
func (s *Service) PublishShards(ctx context.Context, req RetrainRequest, shards int) (string, error) {
	start := time.Now()
	sl, err := s.slot(req.Learner)
	if err != nil {
		return "", err
	}
	if cur, err := s.store.Current(ctx, sl.name); err == nil && cur == req.Version {
		return cur, nil
	}
	name := StagedName(sl.name)
	md, err := readMeta(ctx, s.store, name, req.Version)
	if err != nil {
		return "", err
	}
	if md.Shards == nil {
		return "", fmt.Errorf("recommend: staged %s version %s has no shard plan", sl.name, req.Version)
	}
	plan := *md.Shards
	if want := plan.shards(md.Users); shards != want {
		return "", fmt.Errorf("recommend: %d shards given, the staged version %s has %d", shards, req.Version, want)
	}
	parts := map[string][]byte{}
	for _, part := range []string{partImports, partAlpha, partBaseWeights} {
		if parts[part], err = s.store.Read(ctx, name, req.Version, part); err != nil {
			return "", fmt.Errorf("recommend: staged %s version %s: part %s: %w", sl.name, req.Version, part, err)
		}
	}
	top, err := s.readShards(ctx, name, req.Version, plan, md.Users, min(plan.K, md.Groups), shards)
	if err != nil {
		return "", err
	}
	md.TopK, md.Shards = plan.K, nil
	values := map[string]cache.Value{}
	top.values(values, md.Users)
	if err := metaValue(values, md); err != nil {
		return "", err
	}
	encoded, err := encodeValues(values)
	if err != nil {
		return "", err
	}
	for part, b := range encoded {
		parts[part] = b
	}
	if err := s.writeAndPublish(ctx, sl, req.Version, parts); err != nil {
		return "", err
	}
	s.removeStaged(ctx, sl, req.Version, shards)
	s.staged.mu.Lock()
	m := s.staged.model
	if s.staged.version != req.Version {
		m = nil
	}
	s.staged.version, s.staged.model = "", nil
	s.staged.mu.Unlock()
	if m != nil && ((req.DataPath == "" && s.applied.Load()) || m.dataVersion == s.data.Load().version()) {
		// Live data: served with the changes since its training folded in.
		c := *m
		c.top, c.version = top, req.Version
		s.serve(sl, &c, "trained", "", time.Since(start))
	}
	return req.Version, nil
}

// readShards reads the lists of every shard of a staged version into
// lists of n users, k friends and kg groups each. A missing shard is an
// error that names it.
func (s *Service) readShards(ctx context.Context, name, version string, plan shardPlan, n, kg, shards int) (*precomputed, error) {
	top := &precomputed{friends: newTopList(n, plan.K), groups: newTopList(n, kg)}
	for shard := range shards {
		lo := shard * plan.Users
		rows := min(n, lo+plan.Users) - lo
		sv := shardVersion(version, shard)
		for _, l := range []struct {
			items, scores string
			dst           *topList
		}{{partTopFriends, partTopFriendScores, &top.friends}, {partTopGroups, partTopGroupScores, &top.groups}} {
			iv, err := readPart(ctx, s.store, name, sv, l.items, cache.Int32, rows, l.dst.k)
			if errors.Is(err, cache.ErrMiss) {
				return nil, fmt.Errorf("recommend: shard %d of %d of version %s is not in: %w", shard, shards, version, err)
			} else if err != nil {
				return nil, err
			}
			sc, err := readPart(ctx, s.store, name, sv, l.scores, cache.Float64, rows, l.dst.k)
			if err != nil {
				return nil, err
			}
			copy(l.dst.items[lo*l.dst.k:], iv.I32)
			copy(l.dst.scores[lo*l.dst.k:], sc.F64)
		}
	}
	return top, nil
}

// removeStaged removes a published job's staged versions; a failure only
// costs space, so it is logged.
func (s *Service) removeStaged(ctx context.Context, sl *slot, version string, shards int) {
	name := StagedName(sl.name)
	for shard := -1; shard < shards; shard++ {
		v := version
		if shard >= 0 {
			v = shardVersion(version, shard)
		}
		if err := s.store.Remove(ctx, name, v); err != nil {
			s.log.Warn("removing a staged version failed", "model", name, "version", v, "err", err)
		}
	}
}
