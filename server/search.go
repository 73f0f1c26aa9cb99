package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/rerank"
)

type searchHit struct {
	Rank      int      `json:"rank"`
	ID        string   `json:"id"`
	Title     string   `json:"title,omitempty"`
	Tags      []string `json:"tags"`
	Thumbnail string   `json:"thumbnail,omitempty"`
	rerank.Result
}

type searchResponse struct {
	Query   string      `json:"query"`
	Total   int         `json:"total"`
	Window  int         `json:"window"`
	Rerank  rerank.Info `json:"rerank"`
	TextMS  float64     `json:"text_ms"`
	TotalMS float64     `json:"total_ms"`
	Results []searchHit `json:"results"`
}

var searchParams = map[string]bool{
	"q": true, "k": true, "window": true, "rerank": true, "learner": true, "params": true,
	"prior": true, "affinity": true, "damping": true, "seed": true, "voters": true,
}

func (s *Server) search(c *gin.Context) {
	start := time.Now()
	qs := c.Request.URL.Query()
	for name := range qs {
		if !searchParams[name] {
			badRequest(c, "unknown query parameter "+strconv.Quote(name))
			return
		}
	}
	q := strings.TrimSpace(qs.Get("q"))
	if q == "" {
		badRequest(c, "q is required: the text query, e.g. /v1/search?q=cat")
		return
	}
	if utf8.RuneCountInString(q) > s.cfg.MaxQueryLen {
		badRequest(c, "q is longer than "+strconv.Itoa(s.cfg.MaxQueryLen)+" characters")
		return
	}
	k, ok := intParam(c, qs, "k", 20, 1, s.cfg.MaxK)
	if !ok {
		return
	}
	window, ok := intParam(c, qs, "window", max(s.cfg.DefaultWindow, k), 1, s.cfg.MaxWindow)
	if !ok {
		return
	}
	seed, ok := intParam(c, qs, "seed", 0, 0, 1<<31-1)
	if !ok {
		return
	}
	voters, ok := intParam(c, qs, "voters", 3, 0, 20)
	if !ok {
		return
	}
	opt := rerank.Options{
		Strategy: qs.Get("rerank"),
		Prior:    qs.Get("prior"),
		Affinity: qs.Get("affinity"),
		Voters:   voters,
	}
	if l := qs.Get("learner"); l != "" {
		if opt.Strategy != "" && opt.Strategy != l {
			badRequest(c, "give either rerank or learner, not both")
			return
		}
		opt.Strategy = l
	}
	if p := qs.Get("params"); p != "" {
		if !json.Valid([]byte(p)) {
			badRequest(c, "params must be a JSON object, e.g. params={\"rank\":20}")
			return
		}
		opt.Params = json.RawMessage(p)
	}
	if d := qs.Get("damping"); d != "" {
		v, err := strconv.ParseFloat(d, 64)
		if err != nil {
			badRequest(c, "damping must be a number in (0, 1)")
			return
		}
		opt.Damping = v
	}

	ctx := c.Request.Context()
	hits, total, err := s.ix.Search(ctx, q, window, int64(seed))
	if err != nil {
		s.searchError(c, err)
		return
	}
	textTime := time.Since(start)
	s.metrics.stage.WithLabelValues("text", "").Observe(textTime.Seconds())
	cands, docs, err := s.candidates(hits)
	if err != nil {
		s.searchError(c, err)
		return
	}
	results, info, err := rerank.Rerank(ctx, cands, opt)
	if err != nil {
		s.searchError(c, err)
		return
	}
	s.metrics.stage.WithLabelValues("kernel", info.Strategy).Observe(info.KernelTime.Seconds())
	s.metrics.stage.WithLabelValues("visualrank", info.Strategy).Observe(info.RankTime.Seconds())
	resp := searchResponse{Query: q, Total: total, Window: len(hits), Rerank: info, Results: []searchHit{}}
	for i, r := range results[:min(k, len(results))] {
		d := docs[r.ID]
		h := searchHit{Rank: i + 1, ID: r.ID, Title: d.Title, Tags: d.Tags, Result: r}
		if d.Image != "" {
			h.Thumbnail = "/v1/images/" + url.PathEscape(r.ID) + "/thumbnail"
		}
		resp.Results = append(resp.Results, h)
	}
	resp.TextMS = ms(textTime)
	resp.TotalMS = ms(time.Since(start))
	c.JSON(http.StatusOK, resp)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// candidates loads what the re-ranker needs for each hit.
func (s *Server) candidates(hits []index.Hit) ([]rerank.Candidate, map[string]index.Doc, error) {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	docs, err := s.ix.GetMany(ids)
	if err != nil {
		return nil, nil, err
	}
	feats, err := s.ix.Features(ids)
	if err != nil {
		return nil, nil, err
	}
	n := int(s.ix.Count())
	byID := make(map[string]index.Doc, len(docs))
	cands := make([]rerank.Candidate, len(hits))
	for i, h := range hits {
		d := docs[i]
		byID[h.ID] = d
		cands[i] = rerank.NewCandidate(h.ID, h.Score, d.Tags, feats[i], n, s.ix.DocFreq)
	}
	return cands, byID, nil
}

// searchError maps an error to its status: bad input is the client's, a
// deadline is 503, anything else is ours.
func (s *Server) searchError(c *gin.Context, err error) {
	switch {
	case errors.Is(err, index.ErrQuery), errors.Is(err, rerank.ErrOptions), errors.Is(err, learners.ErrInput):
		badRequest(c, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		fail(c, http.StatusServiceUnavailable, "timeout", "the request took longer than "+s.cfg.RequestTimeout.String())
	case errors.Is(err, context.Canceled):
		fail(c, 499, "cancelled", "the client went away")
	default:
		s.log.Error("search failed", "request_id", c.GetString("request_id"), "err", err)
		fail(c, http.StatusInternalServerError, "internal", err.Error())
	}
}

func intParam(c *gin.Context, qs url.Values, name string, def, lo, hi int) (int, bool) {
	raw := qs.Get(name)
	if raw == "" {
		return def, true
	}
	v, err := strconv.Atoi(raw)
	if err != nil || v < lo || v > hi {
		badRequest(c, name+" must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi)+", got "+strconv.Quote(raw))
		return 0, false
	}
	return v, true
}

func (s *Server) listLearners(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{
		"learners":         learners.Specs(),
		"rerank":           rerank.Strategies(),
		"default_rerank":   rerank.DefaultStrategy,
		"priors":           rerank.Priors,
		"affinities":       rerank.Affinities,
		"default_prior":    rerank.DefaultPrior,
		"default_affinity": rerank.DefaultAffinity,
		// the kernel-combination learners the recommenders can use
		"recommend":         recommend.Learners(),
		"default_recommend": recommend.DefaultLearner,
	})
}
