package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/social"
)

// A user added after training (Service.Apply, the social store's call)
// gets friends and groups at once from the model trained before it,
// marked folded_in, and its new friends are not recommended back.
func TestUserEndpointsFoldIn(t *testing.T) {
	s := newSocialServer(t, time.Minute)
	rec, body := do(t, s, "GET", "/v1/users/a/friends", nil, "")
	if rec.Code != http.StatusOK || body["folded_in"] != nil {
		t.Fatalf("before: %d %v", rec.Code, body)
	}
	version := body["model_version"]
	dir := writeSocialDir(t)
	for name, line := range map[string]string{"users.jsonl": `{"id":"n","tags":["jazz"]}` + "\n", "friends.csv": "n,a\nn,b\n", "memberships.csv": "n,g1\n"} {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	ds, _, err := social.LoadDir(dir, social.ImportOptions{StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cfg.Social.Apply(context.Background(), ds, []string{"n", "a", "b"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		target string
		never  []string
	}{
		{"/v1/users/n/friends?k=20", []string{"n", "a", "b"}},
		{"/v1/users/a/friends?k=20", []string{"a", "n", "b", "c", "e", "f", "hub"}},
		{"/v1/users/n/groups", []string{"g1"}},
	} {
		rec, body = do(t, s, "GET", c.target, nil, "")
		items, _ := body["items"].([]any)
		if rec.Code != http.StatusOK || body["folded_in"] != true || body["model_version"] != version || len(items) == 0 {
			t.Fatalf("%s: %d %v", c.target, rec.Code, body)
		}
		for _, it := range items {
			m := it.(map[string]any)
			name, _ := m["user"].(string)
			if g, ok := m["group"].(string); ok {
				name = g
			}
			if slices.Contains(c.never, name) {
				t.Errorf("%s lists %v", c.target, m)
			}
		}
	}
	if rec, body = do(t, s, "GET", "/v1/users/n", nil, ""); rec.Code != http.StatusOK || !slices.Equal(toStrings(body["friends"]), []string{"a", "b"}) {
		t.Errorf("profile of n: %d %v", rec.Code, body)
	}
}
