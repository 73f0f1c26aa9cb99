package social

import (
	"fmt"
	"iter"
	"slices"
)

// Change names what changed in the records of a data set: Update derives
// the data set of the records after it from the one before, in time
// proportional to the change (plus linear passes over the flat arrays),
// equal to Build of those records.
type Change struct {
	Format string
	// Users are the ids of the users whose profile, friendships,
	// memberships or comments changed, new and deleted ones included. A
	// friendship's change names both its users.
	Users []string
	// Groups are the groups declared or dropped (a superset will do).
	Groups []string
	// Comments are the (author, owner) pairs whose count was set.
	Comments [][2]string
	// Friends and Memberships say whether any friendship or membership
	// came or went; when not, those of the changed users are not looked
	// up again.
	Friends, Memberships bool
	// After gives the records after the change.
	After Lookup
}

// Lookup gives the records of a data set by id.
type Lookup interface {
	User(id string) (*User, bool)
	Friends(id string) iter.Seq[string]
	Groups(id string) iter.Seq[string] // the groups of user id
	HasGroup(name string) bool         // declared, with members or not
	Comments(author, owner string) int // 0: none
}

// Update returns the data set of ds's records changed by c. ds is not
// changed; the result shares what the change leaves alone. An After
// inconsistent with c (a friend that is no user, a relation of an unnamed
// user) is an error.
func (ds *Dataset) Update(c Change) (*Dataset, error) {
	next := &Dataset{Format: c.Format, userIndex: ds.userIndex, groupIndex: ds.groupIndex, Groups: ds.Groups}
	userAt, err := next.updateUsers(ds, c)
	if err != nil {
		return nil, err
	}
	groupAt := next.updateGroups(ds, c)
	changed := make([]bool, len(ds.Users)) // by old index
	for _, id := range c.Users {
		if i, ok := ds.userIndex[id]; ok {
			changed[i] = true
		}
	}
	idx := func(id string) (int, error) {
		if i, ok := next.userIndex[id]; ok {
			return i, nil
		}
		return 0, fmt.Errorf("social: update: unknown user %q", id)
	}

	// Relations of unchanged users stay, renumbered (an increasing map
	// keeps them sorted); those of the changed users are looked up and
	// merged in.
	var friends, members [][2]int
	// The changed users (new indices) with their friends and groups.
	type relationsOf struct {
		user            int
		friends, groups []int
	}
	var rels []relationsOf
	for _, id := range c.Users {
		u, ok := c.After.User(id)
		if !ok {
			continue
		}
		i := next.userIndex[u.ID]
		rel := relationsOf{user: i}
		for f := range c.After.Friends(id) {
			j, err := idx(f)
			if err != nil {
				return nil, err
			}
			if i == j {
				return nil, fmt.Errorf("social: update: user %q is its own friend", id)
			}
			friends = append(friends, [2]int{min(i, j), max(i, j)})
			rel.friends = append(rel.friends, j)
		}
		for g := range c.After.Groups(id) {
			k, ok := next.groupIndex[g]
			if !ok {
				return nil, fmt.Errorf("social: update: unknown group %q", g)
			}
			members = append(members, [2]int{i, k})
			rel.groups = append(rel.groups, k)
		}
		rels = append(rels, rel)
	}
	var keepFriend, keepMember func([2]int) bool // nil: all
	if c.Friends {
		keepFriend = func(p [2]int) bool { return !changed[p[0]] && !changed[p[1]] }
	} else {
		friends = nil // the same as before
	}
	if c.Memberships {
		keepMember = func(p [2]int) bool { return !changed[p[0]] }
	} else {
		members = nil
	}
	next.Friends = updatePairs(ds.Friends, keepFriend, userAt, userAt, friends)
	next.Memberships = updatePairs(ds.Memberships, keepMember, userAt, groupAt, members)
	if next.Comments, err = next.updateComments(ds, c, userAt, idx); err != nil {
		return nil, err
	}

	// The hashes of Version: the others' stay, as they hash ids.
	if len(ds.userHashes) != len(ds.Users) {
		return next, nil
	}
	if userAt == nil {
		next.userHashes = slices.Clone(ds.userHashes)
	} else {
		next.userHashes = make([]userHash, len(next.Users))
		for i, h := range ds.userHashes {
			if userAt[i] >= 0 {
				next.userHashes[userAt[i]] = h
			}
		}
	}
	e := versionEncoder{}
	for _, r := range rels {
		slices.Sort(r.friends)
		slices.Sort(r.groups)
		next.userHashes[r.user] = next.hashUser(&e, r.user, slices.Compact(r.friends), slices.Compact(r.groups))
	}
	return next, nil
}

// updateUsers sets next's users from ds's and c, and returns the new index
// of every old one (-1: deleted), nil when the indices stay.
func (next *Dataset) updateUsers(ds *Dataset, c Change) ([]int, error) {
	next.Users = slices.Clone(ds.Users)
	var added []User
	deleted := false
	for _, id := range c.Users {
		i, had := ds.userIndex[id]
		u, has := c.After.User(id)
		if has && u.ID != id {
			return nil, fmt.Errorf("social: update: user %q looked up as %q", u.ID, id)
		}
		switch {
		case had && has:
			next.Users[i] = *u
		case has:
			added = append(added, *u)
		case had:
			deleted = true
			next.Users[i].ID = "" // marks it for removal below
		}
	}
	if len(added) == 0 && !deleted {
		return nil, nil
	}
	slices.SortFunc(added, func(x, y User) int { return naturalOrder(x.ID, y.ID) })
	added = slices.CompactFunc(added, func(x, y User) bool { return x.ID == y.ID })
	old := next.Users
	next.Users = make([]User, 0, len(old)+len(added))
	at := make([]int, len(old))
	for i := range old {
		for len(added) > 0 && naturalOrder(added[0].ID, old[i].ID) < 0 {
			next.Users, added = append(next.Users, added[0]), added[1:]
		}
		at[i] = -1
		if old[i].ID != "" {
			at[i] = len(next.Users)
			next.Users = append(next.Users, old[i])
		}
	}
	next.Users = append(next.Users, added...)
	next.userIndex = make(map[string]int, len(next.Users))
	for i := range next.Users {
		next.userIndex[next.Users[i].ID] = i
	}
	return at, nil
}

// updateGroups sets next's groups from ds's and c, and returns the new
// index of every old one (-1: dropped), nil when the indices stay.
func (next *Dataset) updateGroups(ds *Dataset, c Change) []int {
	var added []string
	dropped := map[string]bool{}
	for _, g := range c.Groups {
		_, had := ds.groupIndex[g]
		switch has := c.After.HasGroup(g); {
		case has && !had:
			added = append(added, g)
		case had && !has:
			dropped[g] = true
		}
	}
	if len(added) == 0 && len(dropped) == 0 {
		return nil
	}
	slices.SortFunc(added, naturalOrder)
	added = slices.Compact(added)
	next.Groups = make([]string, 0, len(ds.Groups)+len(added))
	at := make([]int, len(ds.Groups))
	for k, g := range ds.Groups {
		for len(added) > 0 && naturalOrder(added[0], g) < 0 {
			next.Groups, added = append(next.Groups, added[0]), added[1:]
		}
		at[k] = -1
		if !dropped[g] {
			at[k] = len(next.Groups)
			next.Groups = append(next.Groups, g)
		}
	}
	next.Groups = append(next.Groups, added...)
	next.groupIndex = make(map[string]int, len(next.Groups))
	for k, g := range next.Groups {
		next.groupIndex[g] = k
	}
	return at
}

// updateComments returns the comments of ds with those c set replaced.
func (next *Dataset) updateComments(ds *Dataset, c Change, userAt []int, idx func(string) (int, error)) ([]Comment, error) {
	if len(c.Comments) == 0 && userAt == nil {
		return ds.Comments, nil
	}
	set := make(map[[2]string]bool, len(c.Comments))
	var fresh []Comment
	for _, k := range c.Comments {
		if set[k] {
			continue
		}
		set[k] = true
		n := c.After.Comments(k[0], k[1])
		if n == 0 {
			continue
		}
		a, err := idx(k[0])
		if err != nil {
			return nil, err
		}
		o, err := idx(k[1])
		if err != nil {
			return nil, err
		}
		fresh = append(fresh, Comment{Author: a, Owner: o, Count: n})
	}
	var out []Comment
	for _, cm := range ds.Comments {
		if set[[2]string{ds.Users[cm.Author].ID, ds.Users[cm.Owner].ID}] {
			continue
		}
		if userAt != nil {
			if cm.Author, cm.Owner = userAt[cm.Author], userAt[cm.Owner]; cm.Author < 0 || cm.Owner < 0 {
				return nil, fmt.Errorf("social: update: comments of a deleted user not named in the change")
			}
		}
		out = append(out, cm)
	}
	out = append(out, fresh...)
	slices.SortFunc(out, func(x, y Comment) int { return comparePairs([2]int{x.Author, x.Owner}, [2]int{y.Author, y.Owner}) })
	return out, nil
}

// updatePairs returns the pairs that keep accepts, their ends mapped by
// at0 and at1 (nil: unchanged; -1: dropped), merged with fresh (any order,
// repeats allowed): sorted and unique, in one pass. The pairs are returned
// as they are when nothing changes them.
func updatePairs(pairs [][2]int, keep func([2]int) bool, at0, at1 []int, fresh [][2]int) [][2]int {
	if keep == nil && at0 == nil && at1 == nil && len(fresh) == 0 {
		return pairs
	}
	slices.SortFunc(fresh, comparePairs)
	fresh = slices.Compact(fresh)
	out := make([][2]int, 0, len(pairs)+len(fresh))
	for _, p := range pairs {
		if keep != nil && !keep(p) {
			continue
		}
		if at0 != nil {
			p[0] = at0[p[0]]
		}
		if at1 != nil {
			p[1] = at1[p[1]]
		}
		if p[0] < 0 || p[1] < 0 {
			continue
		}
		for len(fresh) > 0 && comparePairs(fresh[0], p) < 0 {
			out, fresh = append(out, fresh[0]), fresh[1:]
		}
		if len(fresh) > 0 && fresh[0] == p {
			fresh = fresh[1:]
		}
		out = append(out, p)
	}
	return append(out, fresh...)
}
