// Command mksocial writes kernelrank's generated social demo network (see
// internal/demo/SOCIAL.md) to a directory in the kernelrank import format of
// package social, and prints its statistics.
//
// Usage (from the module root):
//
//	go run ./cmd/mksocial -out DIR [-seed 20240601] [-users 600] [-groups 30]
//	go run ./cmd/mksocial -large -out DIR [-seed N] [-users 1000000]
//
// With -large it writes friendships and groups only, with YouTube's shape
// (demo.GenerateLarge), in the BlogCatalog layout, for any number of users.
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
	"slices"
	"time"

	"github.com/kernelrank/kernelrank/internal/demo"
	"github.com/kernelrank/kernelrank/social"
)

func main() {
	out := flag.String("out", "", "output directory (required)")
	seed := flag.Uint64("seed", demo.DefaultSocialSeed, "generator seed")
	users := flag.Int("users", 600, "number of users (20..1000)")
	groups := flag.Int("groups", 30, "number of groups")
	large := flag.Bool("large", false, "friendships and groups only, YouTube's shape, any number of users (BlogCatalog layout)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	log.SetFlags(0)
	start := time.Now()
	if *large {
		writeLarge(*out, *seed, *users, start)
		return
	}
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

// writeLarge writes a demo.GenerateLarge network and prints its shape.
func writeLarge(out string, seed uint64, users int, start time.Time) {
	net, err := demo.GenerateLarge(seed, demo.LargeOptions{Users: users})
	if err != nil {
		log.Fatal(err)
	}
	if err := net.WriteBlogCatalog(out); err != nil {
		log.Fatal(err)
	}
	deg := make([]int, net.Users)
	for _, p := range net.Friends {
		deg[p[0]]++
		deg[p[1]]++
	}
	var sizes []int
	memberships := 0
	for _, g := range net.Groups {
		sizes = append(sizes, len(g))
		memberships += len(g)
	}
	slices.Sort(deg)
	slices.Sort(sizes)
	fmt.Printf("%d users, %d friendships (degree: median %d, mean %.1f, largest %d), %d groups (size: median %d, largest %d), %d memberships; written to %s in %v\n",
		net.Users, len(net.Friends), deg[len(deg)/2], 2*float64(len(net.Friends))/float64(net.Users), deg[len(deg)-1],
		len(net.Groups), sizes[len(sizes)/2], sizes[len(sizes)-1], memberships, out, time.Since(start).Round(time.Millisecond))
}
