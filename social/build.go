package social

import (
	"fmt"
	"slices"
)

// Records are a data set's contents by id, what a store of the social data
// keeps: Build turns them into a Dataset.
type Records struct {
	Format string
	Users  []User // unique ids, any order
	// Groups are the group names, members or not; a membership's group
	// need not be listed.
	Groups      []string
	Friends     [][2]string // user ids, undirected, each pair once
	Memberships [][2]string // (user id, group name), each once
	Comments    []CommentByID
}

// CommentByID counts the comments Author wrote on photos of Owner.
type CommentByID struct {
	Author string `json:"author"`
	Owner  string `json:"owner"`
	Count  int    `json:"count"`
}

// Build returns the data set of r: users sorted by id in natural order,
// relations as sorted index pairs. The users are r's (not copied), and the
// data set must not be changed: it keeps the hashes of its version. Unknown
// ids, repeated users, self-loops and non-positive comment counts are
// errors.
func Build(r Records) (*Dataset, error) {
	b := newBuilder("", r.Format, ImportOptions{})
	b.setUsers(r.Users)
	if len(b.ds.userIndex) != len(r.Users) {
		return nil, fmt.Errorf("social: repeated user ids among %d users", len(r.Users))
	}
	idx := func(id string) (int, error) {
		if i, ok := b.ds.userIndex[id]; ok {
			return i, nil
		}
		return 0, fmt.Errorf("social: unknown user %q", id)
	}
	for _, g := range r.Groups {
		b.groups[g] = struct{}{}
	}
	// Friendships by their first user, then each user's sorted: the sorted
	// pairs for far less than a sort of them all.
	after := make([][]int, len(r.Users))
	i, last := 0, ""
	for k, f := range r.Friends {
		if k == 0 || f[0] != last { // a user's friendships often come together
			var err error
			if i, err = idx(f[0]); err != nil {
				return nil, err
			}
			last = f[0]
		}
		j, err := idx(f[1])
		if err != nil {
			return nil, err
		}
		if i == j {
			return nil, fmt.Errorf("social: user %q is its own friend", f[0])
		}
		after[min(i, j)] = append(after[min(i, j)], max(i, j))
	}
	friends := make([][2]int, 0, len(r.Friends))
	for i, js := range after {
		slices.Sort(js)
		for k, j := range js {
			if k == 0 || j != js[k-1] {
				friends = append(friends, [2]int{i, j})
			}
		}
	}
	for _, m := range r.Memberships {
		i, err := idx(m[0])
		if err != nil {
			return nil, err
		}
		b.groups[m[1]] = struct{}{}
		b.memberships[membership{i, m[1]}] = struct{}{}
	}
	for _, c := range r.Comments {
		a, err := idx(c.Author)
		if err != nil {
			return nil, err
		}
		o, err := idx(c.Owner)
		if err != nil {
			return nil, err
		}
		if c.Count <= 0 {
			return nil, fmt.Errorf("social: %d comments of %q on %q", c.Count, c.Author, c.Owner)
		}
		b.comments[[2]int{a, o}] += c.Count
	}
	ds := b.finish()
	ds.Friends = friends
	ds.userHashes = ds.hashUsers()
	return ds, nil
}
