package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/recommend"
)

func (s *Server) getUser(c *gin.Context) {
	if !s.haveSocial(c) || !onlyParams(c) {
		return
	}
	profile := s.cfg.Social.Profile
	if s.cfg.SocialStore != nil {
		profile = s.liveProfile
	}
	p, ok := profile(c.Param("id"))
	if !ok {
		fail(c, http.StatusNotFound, "not_found", "no user "+strconv.Quote(c.Param("id")))
		return
	}
	c.JSON(http.StatusOK, p)
}

func (s *Server) friends(c *gin.Context) {
	s.recommend(c, func(learner string, m *recommend.Model, id string, k int) (any, string, bool, error) {
		r, folded, err := s.cfg.Social.FriendsFor(learner, m, id, k)
		if err != nil {
			return nil, "", false, err
		}
		return r.Items, r.Reason, folded, nil
	})
}

func (s *Server) groups(c *gin.Context) {
	s.recommend(c, func(learner string, m *recommend.Model, id string, k int) (any, string, bool, error) {
		r, folded, err := s.cfg.Social.GroupsFor(learner, m, id, k)
		if err != nil {
			return nil, "", false, err
		}
		return r.Items, r.Reason, folded, nil
	})
}

// recommend answers a friend or group request: it checks the parameters,
// waits up to ModelWait for the learner's model and asks it (folded: the
// user was added or changed since the model's data and is folded in).
func (s *Server) recommend(c *gin.Context, ask func(learner string, m *recommend.Model, id string, k int) (items any, reason string, folded bool, err error)) {
	if !s.haveSocial(c) || !onlyParams(c, "k", "learner") {
		return
	}
	start := time.Now()
	qs := c.Request.URL.Query()
	id := c.Param("id")
	if _, ok := s.cfg.Social.Dataset().UserIndex(id); !ok {
		fail(c, http.StatusNotFound, "not_found", "no user "+strconv.Quote(id))
		return
	}
	k, ok := intParam(c, qs, "k", 10, 1, s.cfg.MaxK)
	if !ok {
		return
	}
	learner := qs.Get("learner")
	if learner == "" {
		learner = s.cfg.Social.DefaultLearner()
	}
	wait, cancel := context.WithTimeout(c.Request.Context(), s.cfg.ModelWait)
	defer cancel()
	m, err := s.cfg.Social.Model(wait, learner)
	switch {
	case errors.Is(err, recommend.ErrLearner):
		badRequest(c, err.Error())
		return
	case errors.Is(err, recommend.ErrTraining):
		c.Header("Retry-After", "5")
		fail(c, http.StatusServiceUnavailable, "training", "the "+learner+" recommender is being trained: "+err.Error()+"; retry shortly")
		return
	case err != nil:
		fail(c, http.StatusServiceUnavailable, "model_unavailable", "the "+learner+" recommender could not be trained: "+err.Error())
		return
	}
	items, reason, folded, err := ask(learner, m, id, k)
	if errors.Is(err, recommend.ErrUnknownUser) { // deleted since the check above
		fail(c, http.StatusNotFound, "not_found", "no user "+strconv.Quote(id))
		return
	} else if errors.Is(err, learners.ErrInput) {
		badRequest(c, err.Error())
		return
	} else if err != nil {
		s.log.Error("recommendation failed", "request_id", c.GetString("request_id"), "err", err)
		internalError(c)
		return
	}
	body := gin.H{"user": id, "learner": learner, "model_version": m.Version(), "k": k, "items": items, "took_ms": ms(time.Since(start))}
	if folded {
		body["folded_in"] = true
	}
	if reason != "" {
		body["reason"] = reason
	}
	c.JSON(http.StatusOK, body)
}

func (s *Server) haveSocial(c *gin.Context) bool {
	if s.cfg.Social == nil {
		fail(c, http.StatusNotFound, "not_found", "this server has no social data (start it with --social DIR, or without --no-social for the demo network)")
		return false
	}
	return true
}
