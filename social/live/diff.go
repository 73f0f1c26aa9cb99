package live

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// diff returns the operations that turn cur into next, deletions first.
func diff(cur, next *state) []Op {
	var ops []Op
	gone := func(id string) bool { return next.users[id] == nil }
	for _, id := range sortedKeys(cur.users) {
		if gone(id) {
			ops = append(ops, Op{Op: DeleteUser, User: id})
		}
	}
	ops = append(ops, pairDiff(cur.friends, next.friends, gone, DeleteFriend, true)...)
	ops = append(ops, pairDiff(cur.groupsOf, next.groupsOf, gone, DeleteMember, false)...)
	for _, g := range sortedKeys(cur.members) {
		if _, ok := next.members[g]; !ok {
			ops = append(ops, Op{Op: dropGroup, Group: g})
		}
	}
	for _, g := range sortedKeys(next.members) {
		if _, ok := cur.members[g]; !ok {
			ops = append(ops, Op{Op: declareGroup, Group: g})
		}
	}
	for _, id := range sortedKeys(next.users) {
		if u := next.users[id]; cur.users[id] == nil || !sameProfile(profileOf(cur.users[id]), profileOf(u)) {
			ops = append(ops, Op{Op: PutUser, User: id, Profile: profileOf(u)})
		}
	}
	none := func(string) bool { return false }
	ops = append(ops, pairDiff(next.friends, cur.friends, none, PutFriend, true)...)
	ops = append(ops, pairDiff(next.groupsOf, cur.groupsOf, none, PutMember, false)...)
	keys := slices.Collect(maps.Keys(next.comments))
	for k := range cur.comments {
		if _, ok := next.comments[k]; !ok && !gone(k[0]) && !gone(k[1]) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y [2]string) int { return compare(x[0]+"\x00"+x[1], y[0]+"\x00"+y[1]) })
	for _, k := range keys {
		have := cur.comments[k]
		if gone(k[0]) || gone(k[1]) {
			have = 0
		}
		if want := next.comments[k]; want != have {
			ops = append(ops, Op{Op: setComments, User: k[0], Friend: k[1], Count: want})
		}
	}
	if cur.format != next.format || cur.source != next.source {
		ops = append(ops, Op{Op: setSource, Format: next.format, Source: next.source})
	}
	return ops
}

// pairDiff returns an operation of kind for every pair (x, y) of a that b
// lacks, x not skipped (nor, for undirected pairs, y; each pair once).
func pairDiff(a, b map[string]set, skip func(string) bool, kind string, undirected bool) []Op {
	var ops []Op
	for _, x := range sortedKeys(a) {
		if skip(x) {
			continue
		}
		for _, y := range sortedKeys(a[x]) {
			if _, ok := b[x][y]; ok || undirected && (x > y || skip(y)) {
				continue
			}
			if undirected {
				ops = append(ops, Op{Op: kind, User: x, Friend: y})
			} else {
				ops = append(ops, Op{Op: kind, User: x, Group: y})
			}
		}
	}
	return ops
}

func sameProfile(a, b *Profile) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
