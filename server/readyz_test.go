package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/redistest"
)

// /readyz's warning that the model store failed (Redis gone) clears once
// the store answers again (Redis back, empty).
func TestReadyzStoreWarningClears(t *testing.T) {
	srv := redistest.Start(t)
	s, r, _ := redisServer(t, srv.URL, "")
	svc := newSocialService(t, writeSocialDir(t), cache.NewRedisStore(r), 50*time.Millisecond)
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	s.cfg.Social = svc
	warning := func() string {
		rec, body := do(t, s, http.MethodGet, "/readyz", nil, "")
		if rec.Code != http.StatusOK {
			return "not ready"
		}
		var w []string
		for _, st := range body["recommenders"].([]any) {
			if msg, _ := st.(map[string]any)["warning"].(string); msg != "" {
				w = append(w, msg)
			}
		}
		return strings.Join(w, "; ")
	}
	waitFor(t, "the recommender ready, with no warning", func() bool { return warning() == "" })
	srv.Stop()
	waitFor(t, "the model store warning", func() bool { return strings.Contains(warning(), "the model store failed") })
	srv.Restart()
	waitFor(t, "the warning cleared", func() bool { return warning() == "" })
}
