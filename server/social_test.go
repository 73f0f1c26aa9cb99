package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/social"
	"github.com/kernelrank/kernelrank/social/live"
)

// newLiveServer is newSocialServer with its network in a social store
// (a file log in a temporary directory) that takes writes.
func newLiveServer(t *testing.T) *Server {
	t.Helper()
	s := newSocialServer(t, 30*time.Second)
	store, err := live.OpenDir(t.TempDir(), live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	ds, _, err := social.LoadDir(writeSocialDir(t), social.ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Import(t.Context(), ds); err != nil {
		t.Fatal(err)
	}
	store.SetOnChange(s.cfg.Social.Apply)
	s.cfg.SocialStore = store
	return s
}

// profile returns GET /v1/users/{id}'s friends and groups, nil when 404.
func profile(t *testing.T, s *Server, id string) (friends, groups []string) {
	t.Helper()
	rec, body := do(t, s, "GET", "/v1/users/"+id, nil, "")
	if rec.Code == 404 {
		return nil, nil
	}
	if rec.Code != 200 {
		t.Fatalf("GET /v1/users/%s: %d %s", id, rec.Code, rec.Body)
	}
	strs := func(v any) []string {
		out := []string{}
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return out
	}
	return strs(body["friends"]), strs(body["groups"])
}

func TestSocialWrites(t *testing.T) {
	s := newLiveServer(t)
	version := func() string { return s.cfg.SocialStore.Dataset().Version() }
	steps := []struct {
		method, path, body string
		want               int
		msg                string
	}{
		{"PUT", "/v1/users/new", `{"tags":["jazz"],"photos":[{"tags":["sea"],"geo":{"lat":1,"lon":2}}]}`, 200, ""},
		{"PUT", "/v1/users/new/friends/a", "", 200, ""},
		{"PUT", "/v1/users/new/friends/a", "", 200, ""}, // friends already: nothing changes
		{"PUT", "/v1/users/new/groups/g9", "", 200, ""},
		{"PUT", "/v1/users/new/friends/new", "", 400, `user "new" cannot be its own friend`},
		{"PUT", "/v1/users/new/friends/ghost", "", 404, `no user "ghost"`},
		{"DELETE", "/v1/users/new/friends/b", "", 404, `"new" and "b" are not friends`},
		{"DELETE", "/v1/users/new/groups/g1", "", 404, `user "new" is not in group "g1"`},
		{"DELETE", "/v1/users/ghost", "", 404, `no user "ghost"`},
		{"PUT", "/v1/users/x", `{"tags":["a","a"]}`, 400, `tags[1] "a" repeats tags[0]`},
		{"PUT", "/v1/users/x", `{"photos":[{"visual":[1e999]}]}`, 400, "profile"},
		{"PUT", "/v1/users/x", `{"colour":"red"}`, 400, `unknown field "colour"`},
		{"PUT", "/v1/users/a%2Cb", `{}`, 400, "no commas"},
		{"PUT", "/v1/users/" + strings.Repeat("x", 300), `{}`, 400, "300 bytes long"},
		{"POST", "/v1/social/batch", `{"ops":[{"op":"put_user","user":"n2","profile":{}},{"op":"put_friend","user":"n2","friend":"ghost"}]}`, 400, `ops[1] (put_friend): not found: no user "ghost"`},
		{"POST", "/v1/social/batch", `{"ops":[{"op":"put_member","user":"a","group":"g5"},{"op":"put_member","user":"a","group":"g5"}]}`, 400, "ops[1] (put_member): invalid: repeats ops[0]"},
		{"POST", "/v1/social/batch", `{"ops":[{"op":"put_user","user":"n2","profile":{}},{"op":"put_friend","user":"n2","friend":"b"},{"op":"put_member","user":"n2","group":"g1"}]}`, 200, ""},
		{"PUT", "/v1/users/a?x=1", `{}`, 400, "unknown query parameter"},
	}
	for _, st := range steps {
		before := version()
		var body []byte
		if st.body != "" {
			body = []byte(st.body)
		}
		rec, out := do(t, s, st.method, st.path, body, token)
		msg := ""
		if e, ok := out["error"].(map[string]any); ok {
			msg = e["message"].(string)
		}
		if rec.Code != st.want || !strings.Contains(msg, st.msg) {
			t.Fatalf("%s %s %s: %d %s, want %d with %q", st.method, st.path, st.body, rec.Code, rec.Body, st.want, st.msg)
		}
		if st.want != 200 && version() != before {
			t.Fatalf("%s %s: refused, but the data changed", st.method, st.path)
		}
		if st.want == 200 && out["data_version"] != version() {
			t.Fatalf("%s %s: data_version %v, the store's %s", st.method, st.path, out["data_version"], version())
		}
	}
	if f, g := profile(t, s, "new"); !slices.Equal(f, []string{"a"}) || !slices.Equal(g, []string{"g9"}) {
		t.Fatalf("new: friends %v, groups %v", f, g)
	}
	if f, g := profile(t, s, "n2"); !slices.Equal(f, []string{"b"}) || !slices.Equal(g, []string{"g1"}) {
		t.Fatalf("n2: friends %v, groups %v", f, g)
	}
	// The recommender got the data: the user is known to it.
	if _, ok := s.cfg.Social.Dataset().UserIndex("n2"); !ok {
		t.Fatal("the recommender's data lacks a user written")
	}
	// Deleting a user removes it from every friendship and group.
	if rec, _ := do(t, s, "DELETE", "/v1/users/a", nil, token); rec.Code != 200 {
		t.Fatalf("DELETE a: %d %s", rec.Code, rec.Body)
	}
	for _, id := range []string{"b", "c", "e", "f", "hub", "new"} {
		if f, _ := profile(t, s, id); slices.Contains(f, "a") {
			t.Fatalf("%s keeps the deleted a among its friends %v", id, f)
		}
	}
	if f, _ := profile(t, s, "a"); f != nil {
		t.Fatal("GET of the deleted user is not 404")
	}
	ds := s.cfg.SocialStore.Dataset()
	g1, _ := ds.GroupIndex("g1")
	members := 0
	for _, m := range ds.Memberships {
		if m[1] == g1 {
			members++
		}
	}
	if members != 3 { // b, hub, n2
		t.Fatalf("g1 has %d members after a's deletion, want 3", members)
	}
	// No token, no store.
	if rec, _ := do(t, s, "PUT", "/v1/users/z", []byte(`{}`), ""); rec.Code != 401 {
		t.Fatalf("no token: %d", rec.Code)
	}
	plain := newSocialServer(t, time.Second)
	if rec, _ := do(t, plain, "PUT", "/v1/users/z", []byte(`{}`), token); rec.Code != 501 {
		t.Fatalf("no store: %d", rec.Code)
	}
}

func TestSocialBatchLimits(t *testing.T) {
	s := newLiveServer(t)
	var b strings.Builder
	b.WriteString(`{"ops":[`)
	for i := range live.MaxOps + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"op":"put_user","user":"u%d","profile":{}}`, i)
	}
	b.WriteString("]}")
	rec, _ := do(t, s, "POST", "/v1/social/batch", []byte(b.String()), token)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "10001 operations, the limit is 10000") {
		t.Fatalf("an over-long batch: %d %s", rec.Code, rec.Body)
	}
}
