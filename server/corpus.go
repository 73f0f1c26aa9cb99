package server

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/index/blob"
	"github.com/kernelrank/kernelrank/index/replica"
)

// corpusView is the corpus part of /readyz and /v1/status: its version, the
// replica's place in the change log (absent without one) and the blob store.
type corpusView struct {
	Version string          `json:"version"`
	Images  uint64          `json:"images"`
	Replica *replica.Status `json:"replica,omitempty"`
	// Degraded says why the replica is too far behind, or that the log
	// cannot be read; empty when it is not.
	Degraded string     `json:"degraded,omitempty"`
	Blobs    *blob.Info `json:"blobs,omitempty"`
}

// blobInfoTTL is how long a blob store's totals are reused: a directory's
// are counted file by file.
const blobInfoTTL = 10 * time.Second

// blobInfo caches the blob store's Info.
type blobInfo struct {
	mu   sync.Mutex
	at   time.Time
	info blob.Info
}

func (b *blobInfo) get(ctx context.Context, s blob.Store) *blob.Info {
	if s == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Since(b.at) > blobInfoTTL {
		info, err := s.Info(ctx)
		if err != nil {
			info = blob.Info{Backend: info.Backend, Count: -1, Bytes: -1}
		}
		b.info, b.at = info, time.Now()
	}
	info := b.info
	return &info
}

// corpus reports the corpus; the replica is degraded when it is more than
// Config.MaxLagEntries entries or MaxLagSeconds behind its log, or the log
// does not answer.
func (s *Server) corpus(ctx context.Context) corpusView {
	v := corpusView{Version: s.ix.Version(), Images: s.ix.Count(), Blobs: s.blobInfo.get(ctx, s.files.Blobs())}
	f := s.cfg.Replica
	if f == nil {
		return v
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := f.Status(ctx)
	v.Replica = &st
	switch {
	case err != nil:
		v.Degraded = "the corpus log does not answer: " + err.Error()
	case s.cfg.MaxLagEntries > 0 && st.LagEntries > s.cfg.MaxLagEntries:
		v.Degraded = "the replica is more entries behind the corpus log than --max-lag-entries"
	case s.cfg.MaxLagSeconds > 0 && st.LagSeconds > s.cfg.MaxLagSeconds.Seconds():
		v.Degraded = "the replica is further behind the corpus log than --max-lag-seconds"
	}
	return v
}

// status answers GET /v1/status: the corpus as /readyz shows it, for
// anyone (no token), always 200.
func (s *Server) status(c *gin.Context) {
	if !onlyParams(c) {
		return
	}
	v := s.corpus(c.Request.Context())
	st := "ok"
	if v.Degraded != "" {
		st = "degraded"
	}
	body := gin.H{"status": st, "corpus": v}
	if s.cfg.SocialStore != nil {
		ds := s.cfg.SocialStore.Dataset()
		body["social"] = gin.H{"users": ds.N(), "friendships": len(ds.Friends), "groups": len(ds.Groups), "data_version": ds.Version()}
	}
	c.JSON(http.StatusOK, body)
}
