package social

// File names of BlogCatalog (Tang and Liu 2009): CSV without header.
const (
	blogNodes      = "nodes.csv"       // user id
	blogEdges      = "edges.csv"       // user,user
	blogGroups     = "groups.csv"      // group id
	blogGroupEdges = "group-edges.csv" // user,group
)

// loadBlogCatalog reads nodes.csv (the users), edges.csv (friendships),
// groups.csv (interest groups, named by their ids) and group-edges.csv
// (memberships).
func (b *builder) loadBlogCatalog() error {
	ids := map[string]struct{}{}
	err := b.eachLine(blogNodes, func(fr *FileReport, line int, text string) error {
		f, err := csvFields(text, 1)
		if err != nil {
			return b.problem(fr, line, "%v", err)
		}
		if _, dup := ids[f[0]]; dup {
			return b.problem(fr, line, "user %q listed twice", f[0])
		}
		ids[f[0]] = struct{}{}
		fr.Records++
		return nil
	})
	if err != nil {
		return err
	}
	b.setUsers(usersFromIDs(ids))
	err = b.eachLine(blogEdges, func(fr *FileReport, line int, text string) error {
		f, err := csvFields(text, 2)
		if err != nil {
			return b.problem(fr, line, "%v", err)
		}
		return b.addFriend(fr, line, f[0], f[1])
	})
	if err != nil {
		return err
	}
	err = b.eachLine(blogGroups, func(fr *FileReport, line int, text string) error {
		f, err := csvFields(text, 1)
		if err != nil {
			return b.problem(fr, line, "%v", err)
		}
		if ok, err := b.declareGroup(fr, line, f[0]); !ok {
			return err
		}
		fr.Records++
		return nil
	})
	if err != nil {
		return err
	}
	return b.eachLine(blogGroupEdges, func(fr *FileReport, line int, text string) error {
		f, err := csvFields(text, 2)
		if err != nil {
			return b.problem(fr, line, "%v", err)
		}
		i, ok, err := b.user(fr, line, "user", f[0])
		if !ok {
			return err
		}
		return b.addMembership(fr, line, i, f[1])
	})
}
