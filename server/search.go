package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/internal/admission"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/rerank"
	"github.com/kernelrank/kernelrank/search"
)

var searchParams = []string{"q", "k", "window", "rerank", "learner", "params", "prior", "affinity", "damping", "seed", "voters"}

func (s *Server) search(c *gin.Context) {
	req, ok := s.searchRequest(c)
	if !ok {
		return
	}
	res, err := s.images.Search(c.Request.Context(), req)
	if err != nil {
		s.searchError(c, err)
		return
	}
	if t := res.Trace; t.Text > 0 { // the stages ran in this request
		s.metrics.stage.WithLabelValues("text", "").Observe(t.Text.Seconds())
		s.metrics.stage.WithLabelValues("kernel", t.Strategy).Observe(t.Kernel.Seconds())
		s.metrics.stage.WithLabelValues("visualrank", t.Strategy).Observe(t.Rank.Seconds())
	}
	c.JSON(http.StatusOK, res)
}

// searchRequest parses and checks the parameters of a search; on bad input
// it answers 400 and returns false. Absent k and window are left 0 for the
// engine's defaults.
func (s *Server) searchRequest(c *gin.Context) (search.Request, bool) {
	var req search.Request
	if !onlyParams(c, searchParams...) {
		return req, false
	}
	qs := c.Request.URL.Query()
	req.Query = strings.TrimSpace(qs.Get("q"))
	if req.Query == "" {
		badRequest(c, "q is required: the text query, e.g. /v1/search?q=cat")
		return req, false
	}
	if utf8.RuneCountInString(req.Query) > s.cfg.MaxQueryLen {
		badRequest(c, "q is longer than "+strconv.Itoa(s.cfg.MaxQueryLen)+" characters")
		return req, false
	}
	var ok bool
	if req.K, ok = intParam(c, qs, "k", 0, 1, s.cfg.MaxK); !ok {
		return req, false
	}
	if req.Window, ok = intParam(c, qs, "window", 0, 1, s.cfg.MaxWindow); !ok {
		return req, false
	}
	if req.Window > 0 && req.Window < req.K {
		// A search returns at most its window: the candidates it re-ranks.
		badRequest(c, fmt.Sprintf("window %d is smaller than k %d: a search returns at most window results; "+
			"ask for window >= k, or leave window out (the default is widened to k)", req.Window, req.K))
		return req, false
	}
	seed, ok := intParam(c, qs, "seed", 0, 0, 1<<31-1)
	if !ok {
		return req, false
	}
	req.Seed = int64(seed)
	voters, ok := intParam(c, qs, "voters", search.DefaultVoters, 0, 20)
	if !ok {
		return req, false
	}
	req.Rerank = rerank.Options{
		Strategy: qs.Get("rerank"),
		Prior:    qs.Get("prior"),
		Affinity: qs.Get("affinity"),
		Voters:   voters,
	}
	if l := qs.Get("learner"); l != "" {
		if req.Rerank.Strategy != "" && req.Rerank.Strategy != l {
			badRequest(c, "give either rerank or learner, not both")
			return req, false
		}
		req.Rerank.Strategy = l
	}
	if p := qs.Get("params"); p != "" {
		var obj map[string]json.RawMessage // null and non-objects too: only an object names parameters
		if json.Unmarshal([]byte(p), &obj) != nil || obj == nil {
			badRequest(c, "params must be a JSON object, e.g. params={\"rank\":20}")
			return req, false
		}
		req.Rerank.Params = json.RawMessage(p)
	}
	if d := qs.Get("damping"); d != "" {
		// Checked here: the engine reads 0 as "the default".
		v, err := strconv.ParseFloat(d, 64)
		if err != nil || !(v > 0 && v < 1) {
			badRequest(c, "damping must be a number in the open interval (0, 1), got "+strconv.Quote(d))
			return req, false
		}
		req.Rerank.Damping = v
	}
	return req, true
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// searchError maps an error to its status: bad input is the client's; a
// full gate is 503 and a deadline 503 too; a learner's panic is ours,
// logged with its stack and counted; anything else is ours.
func (s *Server) searchError(c *gin.Context, err error) {
	var pe *rerank.PanicError
	switch {
	case search.IsBadInput(err):
		badRequest(c, err.Error())
	case errors.Is(err, admission.ErrBusy):
		c.Header("Retry-After", "1")
		fail(c, http.StatusServiceUnavailable, "busy", "too many expensive re-rankings are running: retry shortly, or ask for a cheaper one (a smaller window, a low rank, a fixed kernel such as poly)")
	case errors.Is(err, search.ErrLearnerDeadline):
		fail(c, http.StatusServiceUnavailable, "timeout", err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		fail(c, http.StatusServiceUnavailable, "timeout", "the request took longer than "+s.cfg.RequestTimeout.String())
	case errors.Is(err, context.Canceled):
		fail(c, 499, "cancelled", "the client went away")
	case errors.As(err, &pe):
		s.panicked(c, "learner", pe.Value, pe.Stack)
	default:
		s.log.Error("search failed", "request_id", c.GetString("request_id"), "err", err)
		internalError(c)
	}
}

// intParam reads an integer parameter from lo to hi (def when absent),
// written in canonical decimal: "+5" or "05" is refused, not read as 5, so
// that a client's mistake (a URL-decoded space, a padded number) shows.
func intParam(c *gin.Context, qs url.Values, name string, def, lo, hi int) (int, bool) {
	raw := qs.Get(name)
	if raw == "" {
		return def, true
	}
	v, err := strconv.Atoi(raw)
	if err != nil || strconv.Itoa(v) != raw || v < lo || v > hi {
		badRequest(c, name+" must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi)+", got "+strconv.Quote(raw))
		return 0, false
	}
	return v, true
}

// listLearners lists every plug-in of the registry (learners, the fixed
// re-rank strategies, pair scorers), each saying whether it can re-rank a
// search over this corpus (rerank, and rerank_reason when it cannot); the
// fixed strategies again under "strategies", and under "rerank" every name
// (aliases included) that rerank= takes here.
func (s *Server) listLearners(c *gin.Context) {
	if !onlyParams(c) {
		return
	}
	visual := s.ix.Dim() > 0
	specs := learners.Specs()
	list := make([]map[string]any, len(specs))
	type strategy struct {
		Name string `json:"name"`
		rerank.Applicability
	}
	var strategies []strategy
	var names []string
	for i, spec := range specs {
		b, err := json.Marshal(spec)
		if err == nil {
			err = json.Unmarshal(b, &list[i])
		}
		if err != nil {
			s.log.Error("learner spec", "learner", spec.Name, "err", err)
			internalError(c)
			return
		}
		a := rerank.LearnerApplicability(spec, visual)
		list[i]["rerank"] = a.Rerank
		if !a.Rerank {
			list[i]["rerank_reason"] = a.Reason
		}
		if spec.Fixed {
			strategies = append(strategies, strategy{spec.Name, a})
		}
		if a.Rerank {
			names = append(names, spec.Name)
			names = append(names, spec.Aliases...)
		}
	}
	sort.Strings(names)
	c.JSON(http.StatusOK, gin.H{
		"learners":       list,
		"rerank":         names,
		"strategies":     strategies,
		"default_rerank": s.images.DefaultStrategy(),
		// how the default was chosen on validation queries (null: built in)
		"default_rerank_selection": s.images.Selection(),
		// the per-query decision fitted beside it (null: none fitted)
		"default_rerank_decision": s.images.Decision(),
		"priors":                  rerank.Priors,
		"affinities":              rerank.Affinities,
		"default_prior":           rerank.DefaultPrior,
		"default_affinity":        rerank.DefaultAffinity,
		// the kernel-combination learners the recommenders can use
		"recommend":         recommend.Learners(),
		"default_recommend": recommend.DefaultLearner,
	})
}
