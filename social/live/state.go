package live

import (
	"iter"
	"maps"
	"slices"

	"github.com/kernelrank/kernelrank/social"
)

// set is a set of ids.
type set = map[string]struct{}

// state is the social data by id, what the operations change. Users are
// replaced whole, never changed in place, so a Dataset built from the
// state shares their slices safely.
type state struct {
	format, source string
	users          map[string]*social.User
	friends        map[string]set // both directions
	members        map[string]set // group -> users; declared groups without members too
	groupsOf       map[string]set // user -> groups
	comments       map[[2]string]int
	// dim is the visual dimension of the stored photos, visual the number
	// of photos with one: a function of the users alone, so every replica
	// accepts and refuses the same photos.
	dim, visual int
	pending     pending
}

// pending is what changed since the last data set was made: a superset
// will do (a change undone is looked up again, as it was).
type pending struct {
	whole    bool // the state is new: no data set of it was made
	users    set
	groups   set
	comments map[[2]string]struct{}
	// friends and members: whether a friendship or membership changed.
	friends, members bool
}

func newState() *state {
	return &state{users: map[string]*social.User{}, friends: map[string]set{}, members: map[string]set{},
		groupsOf: map[string]set{}, comments: map[[2]string]int{}, pending: pending{whole: true}}
}

// applier applies the operations of one entry to a state, keeping what
// undoes them, and collects the users they change.
type applier struct {
	st      *state
	undo    []func()
	changed set
}

// apply applies ops, all or none: on an error the state is as before.
// It returns the ids of the users changed (deleted ones included), and
// the function that undoes the change.
func (st *state) apply(ops []Op) (changed []string, undo func(), err error) {
	a := &applier{st: st, changed: set{}}
	undo = func() {
		for k := len(a.undo) - 1; k >= 0; k-- {
			a.undo[k]()
		}
	}
	for i, op := range ops {
		if err := a.op(op); err != nil {
			undo()
			return nil, nil, &OpError{Item: i, Op: op.Op, Err: err}
		}
	}
	st.pending.users = addAll(st.pending.users, a.changed)
	return slices.Sorted(maps.Keys(a.changed)), undo, nil
}

func (a *applier) op(op Op) error {
	st := a.st
	switch op.Op {
	case PutUser:
		if op.User == "" || op.Profile == nil {
			return invalid("put_user needs user and profile")
		}
		return a.putUser(op.Profile.user(op.User))
	case DeleteUser:
		if st.users[op.User] == nil {
			return notFound("no user %q", op.User)
		}
		a.deleteUser(op.User)
	case PutFriend, DeleteFriend:
		if op.User == op.Friend {
			return invalid("user %q cannot be its own friend", op.User)
		}
		for _, id := range []string{op.User, op.Friend} {
			if st.users[id] == nil {
				return notFound("no user %q", id)
			}
		}
		_, are := st.friends[op.User][op.Friend]
		if op.Op == DeleteFriend && !are {
			return notFound("%q and %q are not friends", op.User, op.Friend)
		}
		if are != (op.Op == PutFriend) {
			st.pending.friends = true
			a.link(st.friends, op.User, op.Friend, op.Op == PutFriend)
			a.link(st.friends, op.Friend, op.User, op.Op == PutFriend)
			a.changed[op.User], a.changed[op.Friend] = struct{}{}, struct{}{}
		}
	case PutMember, DeleteMember:
		if st.users[op.User] == nil {
			return notFound("no user %q", op.User)
		}
		if op.Group == "" {
			return invalid("the group is missing")
		}
		_, is := st.groupsOf[op.User][op.Group]
		if op.Op == DeleteMember && !is {
			return notFound("user %q is not in group %q", op.User, op.Group)
		}
		if is != (op.Op == PutMember) {
			st.pending.members = true
			a.declare(op.Group)
			a.link(st.groupsOf, op.User, op.Group, op.Op == PutMember)
			a.link(st.members, op.Group, op.User, op.Op == PutMember)
			a.touchGroup(op.Group) // a group goes with its last member
			a.changed[op.User] = struct{}{}
		}
	case declareGroup:
		a.declare(op.Group)
	case dropGroup:
		st.pending.members = true
		a.touchGroup(op.Group)
		for u := range st.members[op.Group] {
			a.link(st.groupsOf, u, op.Group, false)
			a.changed[u] = struct{}{}
		}
		if m, ok := st.members[op.Group]; ok {
			delete(st.members, op.Group)
			a.undo = append(a.undo, func() { st.members[op.Group] = m })
		}
	case setComments:
		for _, id := range []string{op.User, op.Friend} {
			if st.users[id] == nil {
				return notFound("no user %q", id)
			}
		}
		if op.Count < 0 {
			return invalid("%d comments", op.Count)
		}
		a.setComments([2]string{op.User, op.Friend}, op.Count)
		a.changed[op.User], a.changed[op.Friend] = struct{}{}, struct{}{}
	case setSource:
		format, source := st.format, st.source
		st.format, st.source = op.Format, op.Source
		a.undo = append(a.undo, func() { st.format, st.source = format, source })
	default:
		return invalid("unknown op %q", op.Op)
	}
	return nil
}

// putUser creates or replaces u, whose visual vectors must have the
// store's dimension (any, while no photo has one).
func (a *applier) putUser(u social.User) error {
	st := a.st
	old := st.users[u.ID]
	had, _ := visualOf(old)
	others := st.visual - had // photos with a visual vector of the other users
	n, dim := visualOf(&u)
	if n > 0 && others > 0 && dim != st.dim {
		return invalid("photos have %d visual values, the stored photos %d", dim, st.dim)
	}
	if n == 0 {
		dim = st.dim
	}
	a.setVisual(others+n, dim)
	st.users[u.ID] = &u
	a.undo = append(a.undo, func() {
		if old == nil {
			delete(st.users, u.ID)
		} else {
			st.users[u.ID] = old
		}
	})
	a.changed[u.ID] = struct{}{}
	return nil
}

func (a *applier) deleteUser(id string) {
	st := a.st
	a.changed[id] = struct{}{}
	st.pending.friends, st.pending.members = true, true
	for f := range st.friends[id] {
		a.link(st.friends, f, id, false)
		a.link(st.friends, id, f, false)
		a.changed[f] = struct{}{}
	}
	for g := range st.groupsOf[id] {
		a.link(st.members, g, id, false)
		a.touchGroup(g)
		a.link(st.groupsOf, id, g, false)
	}
	for k := range st.comments {
		if k[0] == id || k[1] == id {
			a.setComments(k, 0)
			a.changed[k[0]], a.changed[k[1]] = struct{}{}, struct{}{}
		}
	}
	old := st.users[id]
	n, _ := visualOf(old)
	a.setVisual(st.visual-n, st.dim)
	delete(st.users, id)
	a.undo = append(a.undo, func() { st.users[id] = old })
}

// visualOf counts the photos of u with a visual vector, and gives their
// dimension.
func visualOf(u *social.User) (n, dim int) {
	if u == nil {
		return 0, 0
	}
	for _, p := range u.Photos {
		if len(p.Visual) > 0 {
			n, dim = n+1, len(p.Visual)
		}
	}
	return n, dim
}

func (a *applier) setVisual(n, dim int) {
	st := a.st
	if n == 0 {
		dim = 0
	}
	oldN, oldDim := st.visual, st.dim
	st.visual, st.dim = n, dim
	a.undo = append(a.undo, func() { st.visual, st.dim = oldN, oldDim })
}

// link adds (on) or removes y in m[x], a change undone on failure.
func (a *applier) link(m map[string]set, x, y string, on bool) {
	s := m[x]
	_, had := s[y]
	if had == on {
		return
	}
	if on {
		if s == nil {
			s = set{}
			m[x] = s
		}
		s[y] = struct{}{}
	} else {
		delete(s, y)
		if len(s) == 0 {
			delete(m, x)
		}
	}
	a.undo = append(a.undo, func() { a.relink(m, x, y, had) })
}

// relink sets y in m[x] to on, recording nothing.
func (a *applier) relink(m map[string]set, x, y string, on bool) {
	if on {
		if m[x] == nil {
			m[x] = set{}
		}
		m[x][y] = struct{}{}
		return
	}
	delete(m[x], y)
	if len(m[x]) == 0 {
		delete(m, x)
	}
}

// declare makes group g exist.
func (a *applier) declare(g string) {
	st := a.st
	if _, ok := st.members[g]; ok {
		return
	}
	st.members[g] = set{}
	a.touchGroup(g)
	a.undo = append(a.undo, func() { delete(st.members, g) })
}

// touchGroup records that group g may have come or gone.
func (a *applier) touchGroup(g string) {
	p := &a.st.pending
	if p.groups == nil {
		p.groups = set{}
	}
	p.groups[g] = struct{}{}
}

func (a *applier) setComments(k [2]string, n int) {
	st := a.st
	old, had := st.comments[k]
	if st.pending.comments == nil {
		st.pending.comments = map[[2]string]struct{}{}
	}
	st.pending.comments[k] = struct{}{}
	if n == 0 {
		delete(st.comments, k)
	} else {
		st.comments[k] = n
	}
	a.undo = append(a.undo, func() {
		if had {
			st.comments[k] = old
		} else {
			delete(st.comments, k)
		}
	})
}

// records are the state's contents for social.Build.
func (st *state) records() social.Records {
	friends, members := 0, 0
	for _, fs := range st.friends {
		friends += len(fs)
	}
	for _, gs := range st.groupsOf {
		members += len(gs)
	}
	r := social.Records{Format: st.format, Users: make([]social.User, 0, len(st.users)), Groups: make([]string, 0, len(st.members)),
		Friends: make([][2]string, 0, friends/2), Memberships: make([][2]string, 0, members)}
	for _, u := range st.users {
		r.Users = append(r.Users, *u)
	}
	for g := range st.members {
		r.Groups = append(r.Groups, g)
	}
	for u, fs := range st.friends {
		for f := range fs {
			if u < f {
				r.Friends = append(r.Friends, [2]string{u, f})
			}
		}
	}
	for u, gs := range st.groupsOf {
		for g := range gs {
			r.Memberships = append(r.Memberships, [2]string{u, g})
		}
	}
	for k, n := range st.comments {
		r.Comments = append(r.Comments, social.CommentByID{Author: k[0], Owner: k[1], Count: n})
	}
	return r
}

// dataset builds the data set of the state.
func (st *state) dataset() (*social.Dataset, error) {
	return social.Build(st.records())
}

// next makes the data set of the state from prev, the one made last, by
// the changes pending since: in time proportional to them rather than to
// the data, unless they touch a large part of it (an import).
func (st *state) next(prev *social.Dataset) (*social.Dataset, error) {
	p := st.pending
	var ds *social.Dataset
	var err error
	if prev == nil || p.whole || 4*len(p.users) > len(st.users) {
		ds, err = st.dataset()
	} else {
		ds, err = prev.Update(social.Change{Format: st.format, Users: slices.Collect(maps.Keys(p.users)),
			Groups: slices.Collect(maps.Keys(p.groups)), Comments: slices.Collect(maps.Keys(p.comments)),
			Friends: p.friends, Memberships: p.members, After: st})
	}
	if err == nil {
		st.pending = pending{}
	}
	return ds, err
}

// The state is the social.Lookup of the changes it makes.
var _ social.Lookup = (*state)(nil)

func (st *state) User(id string) (*social.User, bool) {
	u := st.users[id]
	return u, u != nil
}

func (st *state) Friends(id string) iter.Seq[string] { return maps.Keys(st.friends[id]) }
func (st *state) Groups(id string) iter.Seq[string]  { return maps.Keys(st.groupsOf[id]) }

func (st *state) HasGroup(name string) bool {
	_, ok := st.members[name]
	return ok
}

func (st *state) Comments(author, owner string) int { return st.comments[[2]string{author, owner}] }

// addAll adds the ids of from to to, made when nil.
func addAll(to, from set) set {
	if to == nil {
		to = make(set, len(from))
	}
	for id := range from {
		to[id] = struct{}{}
	}
	return to
}

// ops are the operations that make the state from an empty one, in a
// fixed order: source, groups, users, friendships, memberships, comments.
func (st *state) ops() []Op {
	var ops []Op
	if st.format != "" || st.source != "" {
		ops = append(ops, Op{Op: setSource, Format: st.format, Source: st.source})
	}
	for _, g := range sortedKeys(st.members) {
		ops = append(ops, Op{Op: declareGroup, Group: g})
	}
	ids := sortedKeys(st.users)
	for _, id := range ids {
		ops = append(ops, Op{Op: PutUser, User: id, Profile: profileOf(st.users[id])})
	}
	for _, id := range ids {
		for _, f := range sortedKeys(st.friends[id]) {
			if id < f {
				ops = append(ops, Op{Op: PutFriend, User: id, Friend: f})
			}
		}
	}
	for _, id := range ids {
		for _, g := range sortedKeys(st.groupsOf[id]) {
			ops = append(ops, Op{Op: PutMember, User: id, Group: g})
		}
	}
	keys := slices.SortedFunc(maps.Keys(st.comments), func(x, y [2]string) int {
		if x[0] != y[0] {
			return compare(x[0], y[0])
		}
		return compare(x[1], y[1])
	})
	for _, k := range keys {
		ops = append(ops, Op{Op: setComments, User: k[0], Friend: k[1], Count: st.comments[k]})
	}
	return ops
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// fromDataset is the state of a data set (read from a directory), whose
// source is version.
func fromDataset(ds *social.Dataset, version string) (*state, error) {
	st := newState()
	if _, _, err := st.apply(ds2ops(ds, version)); err != nil {
		return nil, err
	}
	return st, nil
}

// ds2ops are the operations that make ds from an empty state.
func ds2ops(ds *social.Dataset, version string) []Op {
	ops := []Op{{Op: setSource, Format: ds.Format, Source: version}}
	for _, g := range ds.Groups {
		ops = append(ops, Op{Op: declareGroup, Group: g})
	}
	for i := range ds.Users {
		u := &ds.Users[i]
		ops = append(ops, Op{Op: PutUser, User: u.ID, Profile: profileOf(u)})
	}
	id := func(i int) string { return ds.Users[i].ID }
	for _, f := range ds.Friends {
		ops = append(ops, Op{Op: PutFriend, User: id(f[0]), Friend: id(f[1])})
	}
	for _, m := range ds.Memberships {
		ops = append(ops, Op{Op: PutMember, User: id(m[0]), Group: ds.Groups[m[1]]})
	}
	for _, c := range ds.Comments {
		ops = append(ops, Op{Op: setComments, User: id(c.Author), Friend: id(c.Owner), Count: c.Count})
	}
	return ops
}
