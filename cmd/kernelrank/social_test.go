package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/internal/redistest"
)

// writeSocialData writes a small network in the kernelrank format.
func writeSocialData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"users.jsonl": `{"id":"a","tags":["jazz"]}
{"id":"b","tags":["jazz","rock"]}
{"id":"c","tags":["rock"]}
{"id":"d","tags":["folk"]}
{"id":"e","tags":["folk","jazz"]}
{"id":"f","places":["paris"]}
`,
		"friends.csv":     "a,b\nb,c\nc,d\nd,e\ne,a\na,c\nf,a\nf,b\n",
		"memberships.csv": "a,g1\nb,g1\nc,g2\nf,g2\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// socialState is /v1/status's social part.
type socialState struct {
	Users       int
	DataVersion string `json:"data_version"`
}

func (d *deployment) social(n *node) socialState {
	d.t.Helper()
	_, body := d.get(n, "/v1/status")
	soc, _ := body["social"].(map[string]any)
	users, _ := soc["users"].(float64)
	v, _ := soc["data_version"].(string)
	return socialState{int(users), v}
}

// friendsOf returns GET /v1/users/{id}'s friends and groups on n, and its
// status.
func (d *deployment) friendsOf(n *node, id string) (int, []string, []string) {
	d.t.Helper()
	code, body := d.get(n, "/v1/users/"+id)
	strs := func(v any) []string {
		var out []string
		l, _ := v.([]any)
		for _, x := range l {
			out = append(out, x.(string))
		}
		return out
	}
	return code, strs(body["friends"]), strs(body["groups"])
}

// suggested returns the users (friends) or groups (groups) n suggests
// to id, with the groups' friends, the answer's status and folded_in.
func (d *deployment) suggested(n *node, id, what string) (code int, items, groupFriends []string, foldedIn bool) {
	d.t.Helper()
	code, body := d.get(n, "/v1/users/"+id+"/"+what)
	l, _ := body["items"].([]any)
	for _, x := range l {
		it, _ := x.(map[string]any)
		if what == "friends" {
			items = append(items, it["user"].(string))
			continue
		}
		items = append(items, it["group"].(string))
		fs, _ := it["friends"].([]any)
		for _, f := range fs {
			groupFriends = append(groupFriends, f.(string))
		}
	}
	folded, _ := body["folded_in"].(bool)
	return code, items, groupFriends, folded
}

// socialConverged waits until the servers serve one social data version.
func (d *deployment) socialConverged(ns ...*node) socialState {
	d.t.Helper()
	var last []socialState
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		last = last[:0]
		for _, n := range ns {
			last = append(last, d.social(n))
		}
		if !slices.ContainsFunc(last, func(s socialState) bool { return s != last[0] }) {
			return last[0]
		}
	}
	d.t.Fatalf("the servers serve different social data after 10 s: %+v", last)
	return socialState{}
}

// Two servers on one Redis, both started with the same --social: one
// import, one data version; a user written on one is served by the other
// within 2 s, with its friends and groups folded into the served model; a
// deletion leaves no friendship, membership or suggestion anywhere; a
// refused write changes nothing; a restart keeps every write.
func TestSeveralServersOneSocialNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs server processes")
	}
	rs := redistest.Start(t)
	d := newDeployment(t, rs.URL)
	corpusDir, _ := demoCorpus(t, 5)
	d.run("ingest", "--redis", rs.URL, corpusDir)
	socialDir := writeSocialData(t)
	flags := []string{"--redis", rs.URL, "--social", socialDir}
	a, b := d.serveWith("a", flags...), d.serveWith("b", flags...)
	v := d.socialConverged(a, b)
	if v.Users != 6 {
		t.Fatalf("%d users served, want the 6 imported", v.Users)
	}
	if n := strings.Count(a.output()+b.output(), "social data imported into the store"); n != 1 {
		t.Fatalf("the directory was imported %d times, want once", n)
	}

	// A user created on a, with a friendship and a group, is served by b
	// within 2 s: its profile, and friends and groups suggested to it,
	// folded into the model b serves (nothing retrained).
	code, res := d.do(a, "POST", "/v1/social/batch", []byte(`{"ops":[{"op":"put_user","user":"new","profile":{"tags":["jazz"]}},`+
		`{"op":"put_friend","user":"new","friend":"b"},{"op":"put_member","user":"new","group":"g2"}]}`))
	if code != 200 {
		t.Fatalf("batch on a: %d %v", code, res)
	}
	start := time.Now()
	for {
		code, friends, groups := d.friendsOf(b, "new")
		fc, fs, _, ff := d.suggested(b, "new", "friends")
		gc, gs, _, gf := d.suggested(b, "new", "groups")
		if code == 200 && slices.Equal(friends, []string{"b"}) && slices.Equal(groups, []string{"g2"}) &&
			fc == 200 && ff && len(fs) > 0 && !slices.Contains(fs, "b") && !slices.Contains(fs, "new") &&
			gc == 200 && gf && slices.Equal(gs, []string{"g1"}) {
			break
		}
		if time.Since(start) > 2*time.Second {
			t.Fatalf("the user written on a is not served by b after 2 s: %d %v %v; friends suggested %d %v (folded in %v), groups %d %v (folded in %v)",
				code, friends, groups, fc, fs, ff, gc, gs, gf)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("a user written on a served by b after %v", time.Since(start).Round(time.Millisecond))

	// Deleting a on b removes it from every friendship and group, on
	// every server.
	if code, res := d.do(b, "DELETE", "/v1/users/a", nil); code != 200 {
		t.Fatalf("DELETE /v1/users/a on b: %d %v", code, res)
	}
	v = d.socialConverged(a, b)
	for _, n := range []*node{a, b} {
		if code, _, _ := d.friendsOf(n, "a"); code != 404 {
			t.Fatalf("%s serves the deleted user: %d", n.name, code)
		}
		suggestions := 0
		for _, id := range []string{"b", "c", "d", "e", "f", "new"} {
			if _, friends, _ := d.friendsOf(n, id); slices.Contains(friends, "a") {
				t.Fatalf("%s: %s keeps the deleted a among its friends %v", n.name, id, friends)
			}
			_, fs, _, _ := d.suggested(n, id, "friends")
			_, _, gfs, _ := d.suggested(n, id, "groups")
			if slices.Contains(fs, "a") || slices.Contains(gfs, "a") {
				t.Fatalf("%s: %s is still suggested the deleted a: friends %v, group friends %v", n.name, id, fs, gfs)
			}
			suggestions += len(fs)
		}
		if suggestions == 0 {
			t.Fatalf("%s suggests no friends to anyone after the deletion", n.name)
		}
	}

	// Bad input: 400 (or 404), and nothing changes anywhere.
	for _, bad := range []struct {
		method, path, body string
		want               int
	}{
		{"PUT", "/v1/users/b/friends/b", "", 400},
		{"PUT", "/v1/users/b/friends/ghost", "", 404},
		{"PUT", "/v1/users/x", `{"photos":[{"visual":[1,2]},{"visual":[1]}]}`, 400},
		{"POST", "/v1/social/batch", `{"ops":[{"op":"put_user","user":"y","profile":{}},{"op":"delete_user","user":"ghost"}]}`, 400},
	} {
		if code, res := d.do(a, bad.method, bad.path, []byte(bad.body)); code != bad.want {
			t.Fatalf("%s %s: %d %v, want %d", bad.method, bad.path, code, res, bad.want)
		}
	}
	if now := d.socialConverged(a, b); now != v {
		t.Fatalf("refused writes changed the data: %+v, was %+v", now, v)
	}

	// A restart with the same --social keeps every write: the directory,
	// imported already, is not imported again.
	a.stop(t)
	a = d.serveWith("a", flags...)
	if now := d.socialConverged(a, b); now != v {
		t.Fatalf("after a restart: %+v, want %+v", now, v)
	}
	if code, friends, _ := d.friendsOf(a, "new"); code != 200 || !slices.Equal(friends, []string{"b"}) {
		t.Fatalf("restarted a: new has %d %v", code, friends)
	}
}

// Without Redis the store is a file log under --cache-dir: a restart
// keeps every write, and the same --social again changes nothing.
func TestOneServerKeepsSocialWritesWithoutRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs server processes")
	}
	d := newDeployment(t, "")
	corpusDir, _ := demoCorpus(t, 5)
	index := filepath.Join(d.dir, "index")
	d.run("ingest", "--data", index, corpusDir)
	socialDir := writeSocialData(t)
	flags := []string{"--data", index, "--social", socialDir}
	a := d.serveWith("a", flags...)
	imported := d.social(a)
	for _, w := range []struct{ method, path, body string }{
		{"PUT", "/v1/users/new", `{"tags":["jazz"],"photos":[{"visual":[0.5,0.25],"geo":{"lat":48.85,"lon":2.35}}]}`},
		{"PUT", "/v1/users/new/friends/c", ""},
		{"PUT", "/v1/users/new/groups/g9", ""},
		{"DELETE", "/v1/users/d", ""},
		{"DELETE", "/v1/users/b/groups/g1", ""},
	} {
		if code, res := d.do(a, w.method, w.path, []byte(w.body)); code != 200 {
			t.Fatalf("%s %s: %d %v", w.method, w.path, code, res)
		}
	}
	written := d.social(a)
	if written.Users != 6 || written.DataVersion == imported.DataVersion {
		t.Fatalf("after the writes: %+v (imported %+v)", written, imported)
	}
	a.stop(t)
	a = d.serveWith("a", flags...)
	if now := d.social(a); now != written {
		t.Fatalf("after a restart: %+v, want %+v", now, written)
	}
	if code, friends, groups := d.friendsOf(a, "new"); code != 200 || !slices.Equal(friends, []string{"c"}) || !slices.Equal(groups, []string{"g9"}) {
		t.Fatalf("new after a restart: %d %v %v", code, friends, groups)
	}
	if code, _, _ := d.friendsOf(a, "d"); code != 404 {
		t.Fatalf("the deleted d is back after a restart: %d", code)
	}
}
