// Command mksocial writes kernelrank's generated social demo network (see
// internal/demo/SOCIAL.md) to a directory in the kernelrank import format of
// package social, and prints its statistics.
//
// Usage (from the module root):
//
//	go run ./cmd/mksocial -out DIR [-seed 20240601] [-users 600] [-groups 30]
//
// The output depends only on the flags: the same flags give the same bytes.
// It is checked by loading it back with social.LoadDir, which must report no
// problem.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/social"
)

func main() {
	out := flag.String("out", "", "output directory (required)")
	seed := flag.Uint64("seed", demo.DefaultSocialSeed, "generator seed")
	users := flag.Int("users", 600, "number of users (20..1000)")
	groups := flag.Int("groups", 30, "number of groups")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	log.SetFlags(0)
	start := time.Now()
	d, err := demo.GenerateSocial(*seed, demo.SocialOptions{Users: *users, Groups: *groups})
	if err != nil {
		log.Fatal(err)
	}
	gen := time.Since(start)
	if err := d.WriteDir(*out); err != nil {
		log.Fatal(err)
	}
	ds, rep, err := social.LoadDir(*out, social.ImportOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if n := len(rep.Problems) + rep.MoreProblems; n > 0 || rep.Format != social.FormatKernelrank {
		log.Fatalf("the written data does not load cleanly: %s", rep)
	}
	st := d.Stats()
	fmt.Printf("generated in %v (seed %d), written to %s, loaded back: %d users, %d groups, %d friendships\n",
		gen.Round(time.Millisecond), *seed, *out, ds.N(), len(ds.Groups), len(ds.Friends))
	fmt.Printf("photos %d (%s)\ngroups %d (members: %s)\nfriendships %d (degree: %s), transitivity %.3f\n",
		st.Photos, st.PhotosPerUser, st.Groups, st.GroupSize, st.Friendships, st.Degree, st.Transitivity)
	fmt.Printf("memberships %d, comments %d (%d author-owner pairs), faves %d\n", st.Memberships, st.Comments, st.CommentPairs, st.Faves)
	for _, h := range st.Homophily {
		fmt.Printf("%-18s friends %.3f  non-friends %.3f\n", h.Name, h.Friends, h.NonFriends)
	}
}
