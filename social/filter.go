package social

import "slices"

// Filter returns the data set with only the users keepUser accepts (by
// index; their order and the groups kept) and the friendships between
// them that keepFriend accepts (i < j, indices of ds); memberships and
// comments follow their users. It is how an evaluation hides users and
// their friendships and adds them back.
func (ds *Dataset) Filter(keepUser func(i int) bool, keepFriend func(i, j int) bool) *Dataset {
	out := &Dataset{Format: ds.Format, Groups: ds.Groups, userIndex: map[string]int{}, groupIndex: ds.groupIndex}
	index := make([]int, ds.N())
	for i := range ds.Users {
		index[i] = -1
		if keepUser(i) {
			index[i] = len(out.Users)
			out.userIndex[ds.Users[i].ID] = index[i]
			out.Users = append(out.Users, ds.Users[i])
		}
	}
	for _, e := range ds.Friends {
		if a, b := index[e[0]], index[e[1]]; a >= 0 && b >= 0 && keepFriend(e[0], e[1]) {
			out.Friends = append(out.Friends, [2]int{a, b})
		}
	}
	for _, m := range ds.Memberships {
		if a := index[m[0]]; a >= 0 {
			out.Memberships = append(out.Memberships, [2]int{a, m[1]})
		}
	}
	for _, c := range ds.Comments {
		if a, b := index[c.Author], index[c.Owner]; a >= 0 && b >= 0 {
			out.Comments = append(out.Comments, Comment{Author: a, Owner: b, Count: c.Count})
		}
	}
	return out
}

// Adjacency returns the friends and the groups of every user, sorted.
func (ds *Dataset) Adjacency() (friends, groups [][]int) {
	friends, groups = make([][]int, ds.N()), make([][]int, ds.N())
	for _, e := range ds.Friends {
		friends[e[0]] = append(friends[e[0]], e[1])
		friends[e[1]] = append(friends[e[1]], e[0])
	}
	for _, m := range ds.Memberships {
		groups[m[0]] = append(groups[m[0]], m[1])
	}
	for u := range friends {
		slices.Sort(friends[u])
	}
	return friends, groups
}
