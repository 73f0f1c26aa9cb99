package recommend_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

// TestServiceDirStore runs the store-level service tests on a directory
// store (redis_test.go runs them on Redis).
func TestServiceDirStore(t *testing.T) {
	testServiceStore(t, func(t *testing.T) cache.Store {
		s, err := cache.NewDirStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// poll is the poll interval of the tests; waitFor gives a change up to
// waitPolls intervals (a bound against hanging, not a speed test).
const (
	poll      = 20 * time.Millisecond
	waitPolls = 1500
)

// copyDemo copies the demo network into a directory of the test's own.
func copyDemo(t *testing.T) string {
	t.Helper()
	demoData(t)
	dir := t.TempDir()
	ents, err := os.ReadDir(demoDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(demoDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func newService(t *testing.T, dir string, store cache.Store) *recommend.Service {
	t.Helper()
	life, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := recommend.NewService(life, recommend.DirSource{Dir: dir, Options: social.ImportOptions{StopOnError: true}}, store,
		recommend.ServiceOptions{Options: recommend.Options{Learner: "uniform"}, TopK: 10, PollInterval: poll})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// model waits for the service's default model.
func model(t *testing.T, s *recommend.Service) *recommend.Model {
	t.Helper()
	m, err := s.Model(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitFor polls cond every poll interval, failing after waitPolls.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range waitPolls {
		if cond() {
			return
		}
		time.Sleep(poll)
	}
	t.Fatalf("%s: not after %d poll intervals", what, waitPolls)
}

func status(s *recommend.Service) recommend.Status { return s.Status()[0] }

func testServiceStore(t *testing.T, newStore func(t *testing.T) cache.Store) {
	t.Run("restart loads instead of training", func(t *testing.T) {
		store, dir := newStore(t), copyDemo(t)
		first := newService(t, dir, store)
		m1 := model(t, first)
		st := status(first)
		if c := first.Counts(); c.Trained != 1 || c.Published != 1 || c.Loaded != 0 || st.Source != "trained" || st.Version == "" || st.Version != m1.Version() || m1.TopK() != 10 {
			t.Fatalf("first start: counts %+v, status %+v, top %d", c, st, m1.TopK())
		}
		again := newService(t, dir, store)
		m2 := model(t, again)
		if c := again.Counts(); c.Trained != 0 || c.Loaded != 1 || c.Published != 0 || status(again).Source != "store" || m2.Version() != m1.Version() || m2.TopK() != 10 {
			t.Fatalf("restart: counts %+v, status %+v", c, status(again))
		}
		for u := 0; u < m1.Dataset().N(); u += 9 {
			sameAnswers(t, m1, m2, u, 10, 1e-12)
		}
	})

	t.Run("follow, retry, unpublished, corrupt", func(t *testing.T) {
		store, dir := newStore(t), copyDemo(t)
		a, b := newService(t, dir, store), newService(t, dir, store)
		v0 := model(t, a).Version()
		if model(t, b).Version() != v0 {
			// b started while a trained: it trained and published its own;
			// both end on the last published.
			waitFor(t, "one version", func() bool { return model(t, a).Version() == model(t, b).Version() })
			v0 = model(t, a).Version()
		}
		name := status(a).Model
		var stages []string
		v, err := a.Retrain(context.Background(), recommend.RetrainRequest{Version: "job-1"}, func(stage string, _ float64) {
			if len(stages) == 0 || stages[len(stages)-1] != stage {
				stages = append(stages, stage)
			}
		})
		if err != nil || v != "job-1" || model(t, a).Version() != "job-1" {
			t.Fatalf("retrain: %q, %v; a serves %q", v, err, model(t, a).Version())
		}
		if want := append(append([]string{"loading data"}, recommend.Stages...), "precomputing top-k", "publishing"); !slices.Equal(stages, want) {
			t.Errorf("stages %q, want %q", stages, want)
		}
		waitFor(t, "b serves job-1", func() bool { return model(t, b).Version() == "job-1" })
		if st := status(b); st.Source != "store" || st.Version != "job-1" {
			t.Errorf("b: %+v", st)
		}
		published := a.Counts().Published
		if v, err := a.Retrain(context.Background(), recommend.RetrainRequest{Version: "job-1"}, nil); v != "job-1" || err != nil || a.Counts().Published != published {
			t.Errorf("retried job: %q, %v, published %d times, want once", v, err, a.Counts().Published-published+1)
		}

		// A written version not published is never served, while b
		// follows the published ones.
		parts, err := model(t, a).Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Write(context.Background(), name, "hidden", parts); err != nil {
			t.Fatal(err)
		}
		// A corrupt and a truncated version published: b keeps job-1.
		for _, c := range []struct{ version, part, says string }{
			{"corrupt", "alpha", "checksum"},
			{"truncated", "top_friends", "part top_friends"},
		} {
			bad := map[string][]byte{}
			for k, p := range parts {
				bad[k] = p
			}
			bad[c.part] = slices.Clone(parts[c.part][:len(parts[c.part])/2])
			if c.version == "corrupt" {
				bad[c.part] = slices.Clone(parts[c.part])
				bad[c.part][len(bad[c.part])-5] ^= 0xff
			}
			if err := store.Write(context.Background(), name, c.version, bad); err != nil {
				t.Fatal(err)
			}
			failed := b.Counts().LoadFailed
			if err := store.Publish(context.Background(), name, c.version); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "b gives up on "+c.version, func() bool { return b.Counts().LoadFailed > failed })
			st := status(b)
			if st.Version != "job-1" || model(t, b).Version() != "job-1" || !strings.Contains(st.Warning, c.version) || !strings.Contains(st.Warning, c.says) {
				t.Errorf("%s published: b %+v, want job-1 served and a warning saying %q", c.version, st, c.says)
			}
			if _, err := model(t, b).RecommendFriends(3, 5); err != nil {
				t.Errorf("the old model stopped serving: %v", err)
			}
		}
		v2, err := a.Retrain(context.Background(), recommend.RetrainRequest{}, nil)
		if err != nil || v2 == "" || v2 == "job-1" {
			t.Fatalf("second retrain: %q, %v", v2, err)
		}
		var seen []string
		waitFor(t, "b serves "+v2, func() bool {
			v := model(t, b).Version()
			seen = append(seen, v)
			return v == v2
		})
		for _, v := range seen {
			if v == "hidden" {
				t.Fatal("an unpublished version was served")
			}
		}
		versions, err := store.Versions(context.Background(), name)
		if err != nil || len(versions) != 3 || versions[len(versions)-1] != v2 {
			t.Errorf("versions kept after the publish: %v (%v), want the last 3, %s the newest", versions, err, v2)
		}
	})

	t.Run("cancelled retrain publishes nothing", func(t *testing.T) {
		store, dir := newStore(t), copyDemo(t)
		s := newService(t, dir, store)
		v0 := model(t, s).Version()
		name := status(s).Model
		before, _ := store.Versions(context.Background(), name)
		ctx, cancel := context.WithCancel(context.Background())
		_, err := s.Retrain(ctx, recommend.RetrainRequest{Version: "job-cancelled"}, func(stage string, _ float64) {
			if stage == "precomputing top-k" {
				cancel()
			}
		})
		cur, _ := store.Current(context.Background(), name)
		after, _ := store.Versions(context.Background(), name)
		if !errors.Is(err, context.Canceled) || cur != v0 || len(after) != len(before) || model(t, s).Version() != v0 {
			t.Errorf("cancelled: %v; current %s (was %s), versions %v (were %v)", err, cur, v0, after, before)
		}
	})

	t.Run("changed data", func(t *testing.T) {
		store, dir := newStore(t), copyDemo(t)
		a, b := newService(t, dir, store), newService(t, dir, store)
		model(t, a)
		waitFor(t, "one version", func() bool { return model(t, a).Version() == model(t, b).Version() })
		old := model(t, b)
		friends, err := os.ReadFile(filepath.Join(dir, "friends.csv"))
		if err != nil {
			t.Fatal(err)
		}
		ds := old.Dataset()
		extra := ds.Users[0].ID + "," + ds.Users[ds.N()-1].ID + "\n"
		if _, ok := ds.UserIndex(ds.Users[0].ID); !ok || strings.Contains(string(friends), extra) {
			t.Fatalf("fixture: %q already there", extra)
		}
		// Another path: b's source still has the old data, so b keeps the
		// old model and says why.
		other := copyDemo(t)
		if err := os.WriteFile(filepath.Join(other, "friends.csv"), append(friends, extra...), 0o644); err != nil {
			t.Fatal(err)
		}
		v1, err := a.Retrain(context.Background(), recommend.RetrainRequest{DataPath: other}, nil)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "b gives up on "+v1, func() bool { return strings.Contains(status(b).Warning, v1) })
		if st := status(b); model(t, b) != old || !strings.Contains(st.Warning, "another version of the data") || model(t, a).Version() == v1 {
			t.Errorf("b: %+v; a serves %s", st, model(t, a).Version())
		}
		// The same change on disk: a retrain re-reads it, b follows with
		// the new data.
		if err := os.WriteFile(filepath.Join(dir, "friends.csv"), append(friends, extra...), 0o644); err != nil {
			t.Fatal(err)
		}
		v2, err := a.Retrain(context.Background(), recommend.RetrainRequest{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "b serves "+v2, func() bool { return model(t, b).Version() == v2 })
		m := model(t, b)
		if m.DataVersion() == old.DataVersion() || m.DataVersion() != m.Dataset().Version() || len(m.Dataset().Friends) != len(ds.Friends)+1 ||
			b.Dataset() != m.Dataset() || status(b).DataVersion != m.DataVersion() {
			t.Errorf("b after the change: data %s (was %s), %d friendships (were %d)", m.DataVersion(), old.DataVersion(), len(m.Dataset().Friends), len(ds.Friends))
		}
		if p, ok := b.Profile(ds.Users[0].ID); !ok || !strings.Contains(strings.Join(p.Friends, ","), ds.Users[ds.N()-1].ID) {
			t.Errorf("profile after the change: %+v", p)
		}
	})
}

func TestServiceErrors(t *testing.T) {
	dir := copyDemo(t)
	store, err := cache.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recommend.NewService(context.Background(), recommend.DirSource{Dir: t.TempDir()}, store, recommend.ServiceOptions{}); err == nil || !strings.Contains(err.Error(), "social data") {
		t.Errorf("no data: %v", err)
	}
	s, err := recommend.NewService(context.Background(), recommend.DirSource{Dir: dir}, store, recommend.ServiceOptions{Options: recommend.Options{Learner: "twolayer"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); !errors.Is(err, recommend.ErrLearner) {
		t.Errorf("Start with twolayer: %v, want ErrLearner", err)
	}
	if _, err := s.Model(context.Background(), "nope"); !errors.Is(err, recommend.ErrLearner) {
		t.Errorf("Model(nope): %v", err)
	}
	if _, err := s.Retrain(context.Background(), recommend.RetrainRequest{Learner: "uniform", DataPath: t.TempDir()}, nil); err == nil {
		t.Error("retrain on an empty directory")
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Model(ended, "uniform"); !errors.Is(err, recommend.ErrTraining) {
		t.Errorf("model asked for with an ended context while training: %v, want ErrTraining", err)
	}
	if st := s.Status(); len(st) != 1 || st[0].Learner != "uniform" || (st[0].State != "loading" && st[0].State != "training") {
		t.Errorf("status while training: %+v", st)
	}
	m, err := s.Model(context.Background(), "uniform")
	if err != nil || m.Stats().Learner != "uniform" {
		t.Fatalf("model: %v", err)
	}
	if again, _ := s.Model(context.Background(), "uniform"); again != m || s.Counts().Trained != 1 {
		t.Error("the model was trained twice")
	}
	ds := s.Dataset()
	p, ok := s.Profile(ds.Users[7].ID)
	if !ok || len(p.Friends) != len(m.FriendsOf(7)) || len(p.Groups) != len(m.GroupsOf(7)) || p.Photos != len(ds.Users[7].Photos) {
		t.Errorf("profile %+v", p)
	}
	if _, ok := s.Profile("no such user"); ok {
		t.Error("profile of an unknown user")
	}
}

// Above PrecomputeMaxUsers a trained model is served without precomputed
// lists. Its on-demand groups are those of the precomputed ones; its
// friends are ranked over their candidates: by the exact scores, and the
// precomputed answer whenever they hold the same users.
func TestServiceRanksLargeNetworksOnDemand(t *testing.T) {
	dir := copyDemo(t)
	store, err := cache.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	life, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := recommend.NewService(life, recommend.DirSource{Dir: dir, Options: social.ImportOptions{StopOnError: true}}, store,
		recommend.ServiceOptions{Options: recommend.Options{Learner: "uniform"}, TopK: 10, PollInterval: poll, PrecomputeMaxUsers: 10})
	if err != nil {
		t.Fatal(err)
	}
	m := model(t, s)
	if m.TopK() != 0 {
		t.Fatalf("%d users above PrecomputeMaxUsers 10, yet top-%d lists were precomputed", m.Dataset().N(), m.TopK())
	}
	pre, err := m.WithTop(context.Background(), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := m.Dataset().N()
	exact, same := make([]float64, n), 0
	for u := 0; u < n; u += 7 {
		m.FriendScores(u, exact)
		for range 2 { // computed, then cached
			got, err := m.RecommendFriends(u, 10)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := pre.RecommendFriends(u, 10)
			if len(got.Items) != len(want.Items) {
				t.Fatalf("user %d: %d friends on demand, %d precomputed", u, len(got.Items), len(want.Items))
			}
			equal := true
			for r, it := range got.Items {
				v := index(t, m.Dataset(), it.User)
				if math.Abs(it.Score-exact[v]) > 1e-12*math.Max(1, math.Abs(exact[v])) || r > 0 && it.Score > got.Items[r-1].Score {
					t.Fatalf("user %d: friend %d scored %v, exact %v (ranked after %v)", u, r, it.Score, exact[v], got.Items[max(r-1, 0)].Score)
				}
				it.Score = want.Items[r].Score // scored a pair at a time: equal to rounding
				equal = equal && reflect.DeepEqual(it, want.Items[r])
			}
			if equal {
				same++
			}
			gotG, _ := m.RecommendGroups(u, 10)
			wantG, _ := pre.RecommendGroups(u, 10)
			if !reflect.DeepEqual(gotG, wantG) {
				t.Fatalf("user %d: groups on demand %+v, precomputed %+v", u, gotG, wantG)
			}
		}
	}
	if users := 2 * ((n + 6) / 7); same < users/2 {
		t.Errorf("on-demand friends are the precomputed ones for only %d of %d answers", same, users)
	}
}
