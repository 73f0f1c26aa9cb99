package demo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteDir writes the network into dir (created if needed) in the kernelrank
// import format of package social: users.jsonl, friends.csv,
// memberships.csv, comments.csv, and a README.md that labels the data as
// generated and gives the seed and the parameters. social.LoadDir(dir,
// social.ImportOptions{}) reads it back with no problem. The files depend only
// on the network: the same seed and options give the same bytes.
func (d *SocialDemo) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	files := []struct {
		name  string
		write func(w *bufio.Writer) error
	}{
		{"users.jsonl", d.writeUsers},
		{"friends.csv", func(w *bufio.Writer) error {
			for _, f := range d.Friends {
				fmt.Fprintf(w, "%s,%s\n", d.Users[f[0]].ID, d.Users[f[1]].ID)
			}
			return nil
		}},
		{"memberships.csv", func(w *bufio.Writer) error {
			for _, m := range d.Memberships {
				fmt.Fprintf(w, "%s,%s\n", d.Users[m[0]].ID, d.Groups[m[1]].Name)
			}
			return nil
		}},
		{"comments.csv", func(w *bufio.Writer) error {
			for _, c := range d.Comments {
				fmt.Fprintf(w, "%s,%s\n", d.Users[c.Author].ID, c.Photo)
			}
			return nil
		}},
		{"README.md", d.writeReadme},
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, write func(w *bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("demo: writing %s: %w", path, err)
	}
	return nil
}

func (d *SocialDemo) writeUsers(w *bufio.Writer) error {
	for _, u := range d.Users {
		b, err := json.Marshal(u)
		if err != nil {
			return err
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	return nil
}

// writeReadme labels the directory as generated.
func (d *SocialDemo) writeReadme(w *bufio.Writer) error {
	st := d.Stats()
	params, err := json.MarshalIndent(d.Model, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, `# kernelrank social demo (GENERATED DATA)

This network is generated, not collected: the users, friendships, groups,
comments and faves are random draws of the model documented in kernelrank's
internal/demo/SOCIAL.md (demo.GenerateSocial). No real person is described.
The photos are drawings of kernelrank's demo corpus (public-domain
openclipart): a photo's id is the drawing's id, its tags the drawing's
keywords, its visual vector the drawing's features (297-d, features.Visual,
6 significant digits).

Regenerate with: go run ./cmd/mksocial -seed %d -users %d -groups %d -out DIR

| | |
|---|---|
| seed | %d |
`, d.Seed, d.Options.Users, d.Options.Groups, d.Seed)
	writeStatsTable(w, st)
	fmt.Fprintf(w, "\nFormat: the kernelrank import format of package social (social/README.md):\n"+
		"users.jsonl (one social.User a line; attrs hold the latent city and interests),\n"+
		"friends.csv (user,user), memberships.csv (user,group), comments.csv (author,photo).\n\n"+
		"Model parameters (demo.SocialModel):\n\n```json\n%s\n```\n", params)
	return nil
}

// writeStatsTable writes the rows of a Markdown table of the statistics.
func writeStatsTable(w io.Writer, st SocialStats) {
	fmt.Fprintf(w, "| users | %d |\n| photos | %d (%s a user) |\n| groups | %d (members: %s) |\n",
		st.Users, st.Photos, st.PhotosPerUser, st.Groups, st.GroupSize)
	fmt.Fprintf(w, "| friendships | %d (degree: %s) |\n| memberships | %d |\n", st.Friendships, st.Degree, st.Memberships)
	fmt.Fprintf(w, "| comments | %d (%d author-owner pairs) |\n| faves | %d |\n", st.Comments, st.CommentPairs, st.Faves)
	fmt.Fprintf(w, "| clustering (transitivity) | %.3f |\n", st.Transitivity)
	for _, h := range st.Homophily {
		fmt.Fprintf(w, "| %s: friends / non-friends | %.3f / %.3f |\n", h.Name, h.Friends, h.NonFriends)
	}
}
