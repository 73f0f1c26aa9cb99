package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/learners/mklr"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social"
)

// newSocialServer serves a small real network: "hub" is everyone's friend
// but "lone"'s, who has no data at all.
func newSocialServer(t *testing.T, wait time.Duration) *Server {
	t.Helper()
	store, err := cache.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(t)
	s.cfg.Social, s.cfg.ModelWait = newSocialService(t, writeSocialDir(t), store, 0), wait
	return s
}

// writeSocialDir writes the small network of newSocialServer and returns
// its directory.
func writeSocialDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"users.jsonl": `{"id":"a","tags":["jazz"]}
{"id":"b","tags":["jazz","rock"]}
{"id":"c","tags":["rock"]}
{"id":"d","tags":["folk"]}
{"id":"e","tags":["folk","jazz"]}
{"id":"f","places":["paris"]}
{"id":"hub"}
{"id":"lone"}
`,
		"friends.csv":     "a,b\nb,c\nc,d\nd,e\ne,a\na,c\nhub,a\nhub,b\nhub,c\nhub,d\nhub,e\nhub,f\nf,a\n",
		"memberships.csv": "a,g1\nb,g1\nc,g2\nhub,g1\nhub,g2\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// newSocialService serves the network in dir with the models of store,
// following its published versions every poll (0: the default).
func newSocialService(t *testing.T, dir string, store cache.Store, poll time.Duration) *recommend.Service {
	t.Helper()
	svc, err := recommend.NewService(context.Background(), recommend.DirSource{Dir: dir, Options: social.ImportOptions{StopOnError: true}}, store,
		recommend.ServiceOptions{Options: recommend.Options{Negatives: mklr.NegativeOptions{Neighbours: 1, PerUser: 2}}, PollInterval: poll})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestUserEndpoints(t *testing.T) {
	s := newSocialServer(t, time.Minute)
	rec, body := do(t, s, "GET", "/v1/users/a", nil, "")
	if rec.Code != http.StatusOK || !slices.Equal(toStrings(body["friends"]), []string{"b", "c", "e", "f", "hub"}) ||
		!slices.Equal(toStrings(body["groups"]), []string{"g1"}) || !slices.Equal(toStrings(body["tags"]), []string{"jazz"}) {
		t.Errorf("profile: %d %v", rec.Code, body)
	}
	rec, body = do(t, s, "GET", "/v1/users/a/friends?k=5", nil, "")
	items, _ := body["items"].([]any)
	if rec.Code != http.StatusOK || body["learner"] != "alignf" || len(items) != 2 {
		t.Fatalf("friends of a: %d %v", rec.Code, body)
	}
	var got []string
	for _, it := range items {
		m := it.(map[string]any)
		got = append(got, m["user"].(string))
		if _, ok := m["contributions"].([]any); !ok {
			t.Errorf("no explanation in %v", m)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"d", "lone"}) {
		t.Errorf("a's candidates are d and lone, got %v", got)
	}
	rec, body = do(t, s, "GET", "/v1/users/c/groups?learner=uniform", nil, "")
	items, _ = body["items"].([]any)
	if rec.Code != http.StatusOK || body["learner"] != "uniform" || len(items) != 1 || items[0].(map[string]any)["group"] != "g1" {
		t.Errorf("groups of c: %d %v", rec.Code, body)
	}
	for target, want := range map[string]string{
		"/v1/users/lone/friends": "user lone has no friends, groups",
		"/v1/users/hub/groups":   "user hub is in every group",
	} {
		rec, body = do(t, s, "GET", target, nil, "")
		if items, ok := body["items"].([]any); rec.Code != http.StatusOK || !ok || len(items) != 0 || !strings.Contains(body["reason"].(string), want) {
			t.Errorf("%s: %d %v, want no items and the reason %q", target, rec.Code, body, want)
		}
	}
}

func TestUserEndpointErrors(t *testing.T) {
	s := newSocialServer(t, time.Minute)
	for _, c := range []struct {
		target string
		status int
		want   string
	}{
		{"/v1/users/nobody", 404, `no user "nobody"`},
		{"/v1/users/nobody/friends", 404, `no user "nobody"`},
		{"/v1/users/nobody/groups?k=0", 404, `no user "nobody"`},
		{"/v1/users/a/friends?k=0", 400, "k must be an integer from 1 to 1000"},
		{"/v1/users/a/friends?k=1001", 400, "k must be an integer from 1 to 1000"},
		{"/v1/users/a/groups?k=x", 400, "k must be an integer"},
		{"/v1/users/a/friends?learner=twolayer", 400, "twolayer needs labels"},
		{"/v1/users/a/friends?learner=hsicnpk", 400, "not kernel weights"},
		{"/v1/users/a/groups?learner=nope", 400, `unknown learner "nope" (usable: ` + strings.Join(recommend.Learners(), ", ") + ")"},
		{"/v1/users/a/friends?q=1", 400, `unknown query parameter "q"`},
	} {
		rec, body := do(t, s, "GET", c.target, nil, "")
		if rec.Code != c.status || !strings.Contains(errorMessage(body), c.want) {
			t.Errorf("%s: %d %v, want %d saying %q", c.target, rec.Code, body, c.status, c.want)
		}
	}
	plain, _ := newTestServer(t)
	if rec, body := do(t, plain, "GET", "/v1/users/a/friends", nil, ""); rec.Code != 404 || !strings.Contains(errorMessage(body), "no social data") {
		t.Errorf("server without social data: %d %v", rec.Code, body)
	}
}

// A request that finds its model training gets 503 with Retry-After, and
// readiness follows the default model.
func TestUserEndpointsWhileTraining(t *testing.T) {
	s := newSocialServer(t, time.Nanosecond)
	rec, body := do(t, s, "GET", "/v1/users/a/friends", nil, "")
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" || !strings.Contains(errorMessage(body), "being trained") {
		t.Fatalf("first request: %d %v (Retry-After %q)", rec.Code, body, rec.Header().Get("Retry-After"))
	}
	if _, err := s.cfg.Social.Model(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	rec, body = do(t, s, "GET", "/readyz", nil, "")
	states, _ := body["recommenders"].([]any)
	if rec.Code != http.StatusOK || len(states) != 1 || states[0].(map[string]any)["state"] != "ready" {
		t.Fatalf("readyz after training: %d %v", rec.Code, body)
	}
	version, _ := states[0].(map[string]any)["version"].(string)
	for _, target := range []string{"/v1/users/a/friends", "/v1/users/a/groups"} {
		if rec, body := do(t, s, "GET", target, nil, ""); rec.Code != http.StatusOK || version == "" || body["model_version"] != version {
			t.Errorf("%s after training: %d, model_version %v, want %q as /readyz says", target, rec.Code, body["model_version"], version)
		}
	}
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, x := range l {
		out[i], _ = x.(string)
	}
	return out
}

func errorMessage(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}
