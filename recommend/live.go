package recommend

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/social"
)

// ErrUnknownUser is returned for a user the served data does not have.
var ErrUnknownUser = errors.New("no such user")

// Apply makes ds the data served (the social store calls it after every
// change it applies, with the complete new data set and the ids of the
// users whose profile or relations changed, deleted users among them). It
// does not retrain: each learner's served model stays the one published,
// and the users it can no longer answer for from its own lists (stale:
// changed since its data, and their friends before and after the
// change, whose friends of friends changed) are folded into it on
// request (Model.FoldIn); deleted users leave every list at once. A
// retrain (Retrain: a job, or ServiceOptions.RetrainAfter) publishes a
// model of the new data.
func (s *Service) Apply(ctx context.Context, ds *social.Dataset, changed []string) error {
	if ds == nil {
		return fmt.Errorf("%w: no data set", learners.ErrInput)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.applyMu.Lock()
	nd := &data{ds: ds}
	var ok bool
	if nd.all, ok = relationsAfter(s.data.Load(), ds, changed); !ok {
		nd.all = datasetRelations(ds)
	}
	s.mu.Lock()
	slots := slices.Collect(maps.Values(s.slots))
	s.mu.Unlock()
	for _, sl := range slots {
		m := sl.model.Load()
		if m == nil {
			continue // serve computes its view when it comes
		}
		if v := sl.view.Load(); v != nil && v.model == m {
			sl.view.Store(v.extend(v.data, nd, changed))
		} else {
			sl.view.Store(newLiveView(m, nd))
		}
	}
	s.data.Store(nd)
	s.applied.Store(true)
	s.applyMu.Unlock()
	s.countChanges(len(changed))
	return nil
}

// datasetRelations is newRelations of a data set's own relations, which
// are sorted and unique: each user's lists are slices of one array,
// filled in order, so that a change applied costs two passes and few
// allocations.
func datasetRelations(ds *social.Dataset) relations {
	r := relations{friends: social.Adjacency(ds.N(), ds.Friends, true), groups: social.Adjacency(ds.N(), ds.Memberships, false)}
	inverse := make([][2]int, len(ds.Memberships))
	for i, m := range ds.Memberships {
		inverse[i] = [2]int{m[1], m[0]}
	}
	slices.SortFunc(inverse, func(a, b [2]int) int { return cmp.Or(a[0]-b[0], a[1]-b[1]) })
	r.members = social.Adjacency(len(ds.Groups), inverse, false)
	return r
}

// relationsAfter derives the relations of ds from those of prev, the data
// before a change of the users changed: the lists of the users changed
// are gathered in one read of ds's pairs, the others shared (their groups
// renumbered when groups came or went). It returns false when users came
// or went.
func relationsAfter(prev *data, ds *social.Dataset, changed []string) (relations, bool) {
	if prev == nil || prev.ds.N() != ds.N() {
		return relations{}, false
	}
	is := make([]bool, ds.N())
	users := make([]int, 0, len(changed))
	for _, id := range changed {
		i, ok := ds.UserIndex(id)
		if j, had := prev.ds.UserIndex(id); !ok || !had || i != j {
			return relations{}, false
		}
		if !is[i] {
			is[i] = true
			users = append(users, i)
		}
	}
	old := prev.all
	r := relations{friends: slices.Clone(old.friends), groups: slices.Clone(old.groups), members: slices.Clone(old.members)}
	if !slices.Equal(prev.ds.Groups, ds.Groups) && !renumberGroups(&r, old, prev.ds, ds, is) {
		return relations{}, false
	}
	groups := map[int]bool{} // whose members change
	for _, i := range users {
		r.friends[i], r.groups[i] = nil, nil
		for _, g := range old.groups[i] {
			if k, ok := ds.GroupIndex(prev.ds.Groups[g]); ok {
				groups[k] = true
			}
		}
	}
	// Pairs (i < j) sorted: a user's lower friends come before its higher.
	for _, p := range ds.Friends {
		if is[p[0]] {
			r.friends[p[0]] = append(r.friends[p[0]], p[1])
		}
		if is[p[1]] {
			r.friends[p[1]] = append(r.friends[p[1]], p[0])
		}
	}
	for _, m := range ds.Memberships {
		if is[m[0]] {
			r.groups[m[0]] = append(r.groups[m[0]], m[1])
			groups[m[1]] = true
		}
	}
	for g := range groups {
		var members []int
		for _, u := range r.members[g] {
			if !is[u] {
				members = append(members, u)
			}
		}
		for _, u := range users {
			if _, in := slices.BinarySearch(r.groups[u], g); in {
				members = append(members, u)
			}
		}
		slices.Sort(members)
		r.members[g] = members
	}
	return r, true
}

// renumberGroups maps the group indices of old, the relations of prev,
// to those of ds in r, for the users not changed (the others' lists are
// made anew): false when one of them is in a group gone.
func renumberGroups(r *relations, old relations, prev, ds *social.Dataset, changed []bool) bool {
	at := make([]int, len(prev.Groups))
	r.members = make([][]int, len(ds.Groups))
	for k, g := range prev.Groups {
		at[k] = -1
		if n, ok := ds.GroupIndex(g); ok {
			at[k], r.members[n] = n, old.members[k]
		}
	}
	flat := make([]int, 0, len(ds.Memberships))
	for u, gs := range old.groups {
		if changed[u] {
			continue
		}
		start := len(flat)
		for _, g := range gs {
			if at[g] < 0 {
				return false
			}
			flat = append(flat, at[g]) // increasing: the list stays sorted
		}
		r.groups[u] = flat[start:len(flat):len(flat)]
	}
	return true
}

// setView computes the live view of a model about to be served.
func (s *Service) setView(sl *slot, m *Model) {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	sl.view.Store(newLiveView(m, s.data.Load()))
}

// liveView is a served model against the live data: which users it must
// fold in and which of its users are gone. Immutable.
type liveView struct {
	model *Model
	data  *data // the live data
	// stale holds the ids of the users the model's lists no longer fit;
	// absent marks the model's users the live data lacks (nil: none),
	// deleted counts them.
	stale   map[string]bool
	absent  []bool
	deleted int
}

// newLiveView compares the model's data with the live data: a user is
// stale when it is new, or its profile, friends or groups differ (and
// then so are its friends, before and after).
func newLiveView(m *Model, d *data) *liveView {
	v := &liveView{model: m, data: d, stale: map[string]bool{}}
	if m.dataVersion == d.version() {
		return v
	}
	mine := newRelations(m.ds, m.ds.FullView())
	ids := func(ds *social.Dataset, users []int) []string {
		out := make([]string, len(users))
		for i, u := range users {
			out[i] = ds.Users[u].ID
		}
		return out
	}
	groups := func(ds *social.Dataset, gs []int) []string {
		out := make([]string, len(gs))
		for i, g := range gs {
			out[i] = ds.Groups[g]
		}
		return out
	}
	var changed []string
	for i := range d.ds.Users {
		u := &d.ds.Users[i]
		j, ok := m.ds.UserIndex(u.ID)
		if !ok || !reflect.DeepEqual(*u, m.ds.Users[j]) ||
			!slices.Equal(ids(d.ds, d.all.friends[i]), ids(m.ds, mine.friends[j])) ||
			!slices.Equal(groups(d.ds, d.all.groups[i]), groups(m.ds, mine.groups[j])) {
			changed = append(changed, u.ID)
		}
	}
	for j := range m.ds.Users {
		if _, ok := d.ds.UserIndex(m.ds.Users[j].ID); !ok {
			changed = append(changed, m.ds.Users[j].ID)
		}
	}
	model := &data{ds: m.ds, all: mine}
	return v.extend(model, d, changed)
}

// extend returns the view after the change from old to nd of the users
// changed.
func (v *liveView) extend(old, nd *data, changed []string) *liveView {
	out := &liveView{model: v.model, data: nd, stale: maps.Clone(v.stale), absent: v.absent, deleted: v.deleted}
	own := false // out.absent is not v's
	mark := func(d *data, id string) {
		if i, ok := d.ds.UserIndex(id); ok {
			for _, f := range d.all.friends[i] {
				out.stale[d.ds.Users[f].ID] = true
			}
		}
	}
	for _, id := range changed {
		out.stale[id] = true
		mark(old, id)
		mark(nd, id)
		j, inModel := v.model.ds.UserIndex(id)
		_, live := nd.ds.UserIndex(id)
		if inModel && live == (out.absent != nil && out.absent[j]) { // gone, or back
			if !own {
				out.absent, own = make([]bool, v.model.ds.N()), true
				copy(out.absent, v.absent)
			}
			out.absent[j] = !live
			if live {
				out.deleted--
			} else {
				out.deleted++
			}
		}
	}
	return out
}

// folded returns id folded into the view's model when the model's own
// lists do not fit it (nil when they do). Errors: ErrUnknownUser, or
// social.ErrNoFoldIn's.
func (v *liveView) folded(id string) (*Folded, error) {
	i, ok := v.data.ds.UserIndex(id)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownUser, id)
	}
	if _, known := v.model.ds.UserIndex(id); known && !v.stale[id] {
		return nil, nil
	}
	fu := v.data.ds.FoldUser(i, v.data.all.friends[i], v.data.all.groups[i], v.model.ds)
	return v.model.FoldIn(id, fu, v.absent)
}

// gone says whether the user named id is absent from the live data.
func (v *liveView) gone(id string) bool {
	_, ok := v.data.ds.UserIndex(id)
	return !ok
}

// view returns learner's live view of m, the model Model returned for it.
func (s *Service) view(learner string, m *Model) (*liveView, error) {
	sl, err := s.slot(learner)
	if err != nil {
		return nil, err
	}
	if v := sl.view.Load(); v != nil && v.model == m {
		return v, nil
	}
	s.applyMu.Lock() // a model switched since: its view, once
	defer s.applyMu.Unlock()
	if v := sl.view.Load(); v != nil && v.model == m {
		return v, nil
	}
	return newLiveView(m, s.data.Load()), nil
}

// FriendsFor answers the friends of the user id from m, the model Model
// returned for learner, against the live data (Apply): from the model's
// lists for a user whose data it was trained on, else folded in
// (folded). Deleted users and the user's friends are never listed.
// Errors: ErrUnknownUser, learners.ErrInput (bad k), ErrLearner.
func (s *Service) FriendsFor(learner string, m *Model, id string, k int) (out *Friends, folded bool, err error) {
	v, fo, err := s.foldFor(learner, m, id, k)
	switch {
	case err != nil:
		return nil, false, err
	case fo != nil:
		out, err = fo.RecommendFriends(k)
	default:
		u, known := m.ds.UserIndex(id)
		if !known {
			return v.notFoldable(id), false, nil
		}
		if out, err = m.RecommendFriends(u, k+v.deleted); err == nil {
			out.Items = slices.DeleteFunc(out.Items, func(r FriendRec) bool { return v.gone(r.User) || v.friends(id, r.User) })
			out.Items = out.Items[:min(k, len(out.Items))]
		}
	}
	if err != nil {
		return nil, false, err
	}
	for r := range out.Items {
		it := &out.Items[r]
		n := len(it.CommonFriends)
		it.CommonFriends = slices.DeleteFunc(it.CommonFriends, v.gone)
		it.CommonFriendCount -= n - len(it.CommonFriends)
	}
	return out, fo != nil, nil
}

// GroupsFor is FriendsFor for groups.
func (s *Service) GroupsFor(learner string, m *Model, id string, k int) (out *Groups, folded bool, err error) {
	v, fo, err := s.foldFor(learner, m, id, k)
	switch {
	case err != nil:
		return nil, false, err
	case fo != nil:
		out, err = fo.RecommendGroups(k)
	default:
		u, known := m.ds.UserIndex(id)
		if !known {
			f := v.notFoldable(id)
			return &Groups{Items: []GroupRec{}, Reason: f.Reason}, false, nil
		}
		out, err = m.RecommendGroups(u, k)
	}
	if err != nil {
		return nil, false, err
	}
	for r := range out.Items {
		it := &out.Items[r]
		n := len(it.Friends)
		it.Friends = slices.DeleteFunc(it.Friends, v.gone)
		it.FriendCount -= n - len(it.Friends)
	}
	return out, fo != nil, nil
}

// foldFor returns the live view of m and, when m's lists do not fit id,
// id folded in; a model whose kernels cannot fold users in (thesis mode)
// answers from its lists.
func (s *Service) foldFor(learner string, m *Model, id string, k int) (*liveView, *Folded, error) {
	if k < 1 {
		return nil, nil, fmt.Errorf("%w: k must be at least 1, got %d", learners.ErrInput, k)
	}
	v, err := s.view(learner, m)
	if err != nil {
		return nil, nil, err
	}
	fo, err := v.folded(id)
	if errors.Is(err, social.ErrNoFoldIn) {
		return v, nil, nil
	}
	return v, fo, err
}

// friends says whether the users named a and b are friends in the live
// data.
func (v *liveView) friends(a, b string) bool {
	i, ok := v.data.ds.UserIndex(a)
	j, ok2 := v.data.ds.UserIndex(b)
	return ok && ok2 && contains(v.data.all.friends[i], j)
}

// notFoldable is the answer for a user added after the model was trained
// when its kernels cannot fold users in.
func (v *liveView) notFoldable(id string) *Friends {
	return &Friends{Items: []FriendRec{}, Reason: fmt.Sprintf("user %s was added after model version %s was trained, and its kernels (thesis mode) cannot fold new users in: it gets recommendations once a retrain includes it", id, v.model.version)}
}

// SnapshotSource is a Source that also gives earlier versions of its data
// (the social store keeps the snapshots models were trained on). With
// one, a service whose data moved on since the published model's loads
// that model on its own data and folds the changes in, rather than
// training: at start, and when another process publishes.
type SnapshotSource interface {
	Source
	// Snapshot returns the data set whose Version is version, or an error
	// when it is not kept.
	Snapshot(ctx context.Context, version string) (*social.Dataset, error)
}

// loadFitting loads version of sl's model for the data d: on d itself,
// or, for a model of other data and a SnapshotSource, on the snapshot
// it was trained on (serve then folds the changes since in). Errors are
// Load's.
func (s *Service) loadFitting(sl *slot, version string, d *data) (*Model, error) {
	m, err := Load(s.life, s.store, sl.name, version, d.ds, d.version())
	src, ok := s.src.(SnapshotSource)
	if !errors.Is(err, ErrDataVersion) || !ok {
		return m, err
	}
	b, rerr := s.store.Read(s.life, sl.name, version, partMeta)
	if rerr != nil {
		return nil, err
	}
	v, rerr := cache.Decode(b)
	var md meta
	if rerr != nil || json.Unmarshal(v.Bytes, &md) != nil {
		return nil, err
	}
	snap, serr := src.Snapshot(s.life, md.DataVersion)
	if serr != nil {
		return nil, fmt.Errorf("%w; its data is not kept: %v", err, serr)
	}
	return Load(s.life, s.store, sl.name, version, snap, md.DataVersion)
}
