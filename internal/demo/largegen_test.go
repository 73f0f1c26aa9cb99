package demo

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/social"
)

func TestGenerateLargeShape(t *testing.T) {
	net, err := GenerateLarge(7, LargeOptions{Users: 20000})
	if err != nil {
		t.Fatal(err)
	}
	deg := make([]int, net.Users)
	for k, p := range net.Friends {
		if p[0] >= p[1] || p[0] < 0 || int(p[1]) >= net.Users {
			t.Fatalf("friendship %v: want 0 <= i < j < %d", p, net.Users)
		}
		if k > 0 && !(net.Friends[k-1][0] < p[0] || net.Friends[k-1][0] == p[0] && net.Friends[k-1][1] < p[1]) {
			t.Fatalf("friendships %v, %v not sorted and unique", net.Friends[k-1], p)
		}
		deg[p[0]]++
		deg[p[1]]++
	}
	mean := 2 * float64(len(net.Friends)) / float64(net.Users)
	if math.Abs(mean-10) > 2 {
		t.Errorf("mean degree %.2f, want about 10", mean)
	}
	if top := slices.Max(deg); top < 100 {
		t.Errorf("largest degree %d: no hubs", top)
	}
	groups := make([]int, net.Users)
	var sizes []int
	for _, members := range net.Groups {
		sizes = append(sizes, len(members))
		for k, u := range members {
			if k > 0 && members[k-1] >= u {
				t.Fatal("members not sorted and unique")
			}
			groups[u]++
		}
	}
	if len(net.Groups) != int(0.39*20000) {
		t.Errorf("%d groups, want %d", len(net.Groups), int(0.39*20000))
	}
	if slices.Min(groups) < 1 {
		t.Error("a user is in no group")
	}
	slices.Sort(sizes)
	if med := sizes[len(sizes)/2]; med < 2 || med > 3 {
		t.Errorf("median group size %d, want 2 or 3", med)
	}
	if top := sizes[len(sizes)-1]; top > int(0.08*20000) || top < 100 {
		t.Errorf("largest group %d, want 100 to %d", top, int(0.08*20000))
	}
	again, err := GenerateLarge(7, LargeOptions{Users: 20000})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(net, again) {
		t.Error("the same seed gave another network")
	}
}

func TestGenerateLargeLoads(t *testing.T) {
	net, err := GenerateLarge(1, LargeOptions{Users: 500})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := net.WriteBlogCatalog(dir); err != nil {
		t.Fatal(err)
	}
	ds, rep, err := social.LoadDir(dir, social.ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	memberships := 0
	for _, g := range net.Groups {
		memberships += len(g)
	}
	if ds.N() != 500 || len(ds.Friends) != len(net.Friends) || len(ds.Groups) != len(net.Groups) || len(ds.Memberships) != memberships || rep.Format != social.FormatBlogCatalog {
		t.Errorf("loaded %d users, %d friendships, %d groups, %d memberships (%s); want 500, %d, %d, %d",
			ds.N(), len(ds.Friends), len(ds.Groups), len(ds.Memberships), rep.Format, len(net.Friends), len(net.Groups), memberships)
	}
}

func TestGenerateLargeOptionErrors(t *testing.T) {
	for _, o := range []LargeOptions{{Users: 1}, {MeanDegree: -1}, {Users: 10, MeanDegree: 20}, {DegreeAlpha: 0.5}, {MaxSociability: -1}, {MaxGroupShare: 2}, {Community: 1}, {Local: 1.5}} {
		if _, err := GenerateLarge(1, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
