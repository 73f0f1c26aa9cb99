package recommend_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

// dataSource serves a data set held in memory.
type dataSource struct{ ds *social.Dataset }

func (d dataSource) Load(context.Context, string) (*social.Dataset, error) { return d.ds, nil }

func liveService(t *testing.T, ds *social.Dataset, opts recommend.ServiceOptions) *recommend.Service {
	t.Helper()
	life, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	store, err := cache.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts.Learner, opts.TopK, opts.PollInterval = "uniform", 10, poll
	s, err := recommend.NewService(life, dataSource{ds}, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// changedBy lists the users whose relations the given friendships touch,
// and the users themselves.
func changedBy(ds *social.Dataset, users ...int) []string {
	friends, _ := ds.Adjacency()
	var out []string
	for _, u := range users {
		out = append(out, ds.Users[u].ID)
		for _, f := range friends[u] {
			out = append(out, ds.Users[f].ID)
		}
	}
	return out
}

func friendIDs(t *testing.T, s *recommend.Service, m *recommend.Model, id string, k int) ([]string, bool) {
	t.Helper()
	r, folded, err := s.FriendsFor("", m, id, k)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range r.Items {
		out = append(out, it.User)
	}
	return out, folded
}

// A user added, a friendship made and a user deleted after training are
// answered at once, by the model trained before them: the new user
// folded in, the new friendship not recommended back, the deleted user
// gone from every list; nothing is retrained.
func TestServiceApplyFoldsIn(t *testing.T) {
	full := demoData(t)
	friends, _ := full.Adjacency()
	const added = 17
	a := 40
	b := friends[a][0]
	start := full.Filter(func(i int) bool { return i != added }, func(i, j int) bool { return [2]int{i, j} != [2]int{min(a, b), max(a, b)} })
	s := liveService(t, start, recommend.ServiceOptions{})
	m := model(t, s)
	idA, idB, idNew := full.Users[a].ID, full.Users[b].ID, full.Users[added].ID
	if _, _, err := s.FriendsFor("", m, idNew, 5); !errors.Is(err, recommend.ErrUnknownUser) {
		t.Fatalf("a user not yet added: %v", err)
	}
	before, folded := friendIDs(t, s, m, idA, 200)
	if folded || !slices.Contains(before, idB) {
		t.Fatalf("before: folded %v, %s not among %s's candidates", folded, idB, idA)
	}

	changed := append(changedBy(full, added), idA, idB)
	if err := s.Apply(context.Background(), full, changed); err != nil {
		t.Fatal(err)
	}
	got, folded := friendIDs(t, s, m, idNew, 10)
	if !folded || len(got) != 10 {
		t.Fatalf("the new user: folded %v, %d friends", folded, len(got))
	}
	for _, f := range friends[added] {
		if slices.Contains(got, full.Users[f].ID) {
			t.Errorf("the new user's friend %s recommended", full.Users[f].ID)
		}
	}
	after, folded := friendIDs(t, s, m, idA, 200)
	if !folded || slices.Contains(after, idB) {
		t.Errorf("after the friendship: folded %v, %s still recommended to %s", folded, idB, idA)
	}
	g, folded, err := s.GroupsFor("", m, idNew, 3)
	if err != nil || !folded || len(g.Items) != 3 {
		t.Errorf("the new user's groups: %v, folded %v, %v", g, folded, err)
	}

	// Delete the top candidate of a user far from the change.
	far := slices.IndexFunc(full.Users, func(u social.User) bool {
		i, _ := full.UserIndex(u.ID)
		for _, f := range append(friends[i], i) {
			if slices.Contains(changed, full.Users[f].ID) {
				return false
			}
		}
		return true
	})
	top, folded := friendIDs(t, s, m, full.Users[far].ID, 10)
	if folded {
		t.Fatalf("user %d, untouched, folded in", far)
	}
	gone, _ := full.UserIndex(top[0])
	live := full.Filter(func(i int) bool { return i != gone }, func(int, int) bool { return true })
	if err := s.Apply(context.Background(), live, changedBy(full, gone)); err != nil {
		t.Fatal(err)
	}
	for _, u := range live.Users {
		r, _, err := s.FriendsFor("", m, u.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range r.Items {
			if it.User == top[0] || slices.Contains(it.CommonFriends, top[0]) {
				t.Fatalf("deleted user %s listed for %s", top[0], u.ID)
			}
		}
		if len(r.Items) != 10 {
			t.Fatalf("%s gets %d friends", u.ID, len(r.Items))
		}
	}
	if _, _, err := s.FriendsFor("", m, top[0], 5); !errors.Is(err, recommend.ErrUnknownUser) {
		t.Errorf("the deleted user: %v", err)
	}
	if c := s.Counts(); c.Trained != 1 {
		t.Errorf("trained %d times, want once", c.Trained)
	}
	if n := s.PendingChanges(); n == 0 {
		t.Error("no changes pending")
	}
}

// RetrainAfter retrains on the live data once enough changes are
// pending, and the new model answers for the added user from its own
// lists.
func TestServiceRetrainAfter(t *testing.T) {
	full := demoData(t)
	const added = 17
	start := full.Filter(func(i int) bool { return i != added }, func(int, int) bool { return true })
	s := liveService(t, start, recommend.ServiceOptions{RetrainAfter: 2})
	model(t, s)
	if err := s.Apply(context.Background(), full, changedBy(full, added)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitPolls * poll)
	for s.PendingChanges() > 0 && time.Now().Before(deadline) {
		time.Sleep(poll)
	}
	m := model(t, s)
	if m.DataVersion() != full.Version() || s.Counts().Trained != 2 {
		t.Fatalf("after the retrain: data %s (want %s), trained %d", m.DataVersion(), full.Version(), s.Counts().Trained)
	}
	if _, folded := friendIDs(t, s, m, full.Users[added].ID, 5); folded {
		t.Error("the retrained model still folds the added user in")
	}
}

// snapshotSource serves ds and keeps earlier data sets by version.
type snapshotSource struct {
	dataSource
	kept map[string]*social.Dataset
}

func (s snapshotSource) Snapshot(_ context.Context, version string) (*social.Dataset, error) {
	if ds, ok := s.kept[version]; ok {
		return ds, nil
	}
	return nil, errors.New("not kept")
}

// A server starting on data that moved on since the published model
// loads that model on the snapshot it was trained on and folds the
// changes in, rather than training.
func TestServiceStartsOnSnapshot(t *testing.T) {
	full := demoData(t)
	const added = 17
	start := full.Filter(func(i int) bool { return i != added }, func(int, int) bool { return true })
	store, err := cache.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts := recommend.ServiceOptions{Options: recommend.Options{Learner: "uniform"}, TopK: 10, PollInterval: poll}
	first, err := recommend.NewService(context.Background(), dataSource{start}, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	published := model(t, first)
	src := snapshotSource{dataSource{full}, map[string]*social.Dataset{start.Version(): start}}
	second, err := recommend.NewService(context.Background(), src, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	m := model(t, second)
	if c := second.Counts(); c.Trained != 0 || c.Loaded != 1 || m.Version() != published.Version() {
		t.Fatalf("counts %+v, version %s (published %s)", c, m.Version(), published.Version())
	}
	if _, folded := friendIDs(t, second, m, full.Users[added].ID, 5); !folded {
		t.Error("the user added since the snapshot is not folded in")
	}
}
