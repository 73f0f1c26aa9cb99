package server

import (
	"bytes"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/social/live"
)

// The social write API: each request is one entry of the social store's
// log, applied all or nothing, answered once it is durable and applied
// here.

func (s *Server) putUser(c *gin.Context) {
	if !s.haveSocialStore(c) || !onlyParams(c) {
		return
	}
	body, err := readBody(c)
	if err != nil {
		return
	}
	op, err := live.DecodeProfile(c.Param("id"), body)
	if err != nil {
		badRequest(c, itemError(err, false))
		return
	}
	s.writeSocial(c, []live.Op{op}, false)
}

func (s *Server) deleteUser(c *gin.Context) {
	s.socialOp(c, live.Op{Op: live.DeleteUser, User: c.Param("id")})
}

func (s *Server) putFriend(c *gin.Context) {
	s.socialOp(c, live.Op{Op: live.PutFriend, User: c.Param("id"), Friend: c.Param("other")})
}

func (s *Server) deleteFriend(c *gin.Context) {
	s.socialOp(c, live.Op{Op: live.DeleteFriend, User: c.Param("id"), Friend: c.Param("other")})
}

func (s *Server) putMember(c *gin.Context) {
	s.socialOp(c, live.Op{Op: live.PutMember, User: c.Param("id"), Group: c.Param("group")})
}

func (s *Server) deleteMember(c *gin.Context) {
	s.socialOp(c, live.Op{Op: live.DeleteMember, User: c.Param("id"), Group: c.Param("group")})
}

// socialOp answers a write of one operation taken from the path.
func (s *Server) socialOp(c *gin.Context, op live.Op) {
	if !s.haveSocialStore(c) || !onlyParams(c) {
		return
	}
	ops := []live.Op{op}
	if err := live.Check(ops); err != nil {
		badRequest(c, itemError(err, false))
		return
	}
	s.writeSocial(c, ops, false)
}

func (s *Server) socialBatch(c *gin.Context) {
	if !s.haveSocialStore(c) || !onlyParams(c) {
		return
	}
	body, err := readBody(c)
	if err != nil {
		return
	}
	ops, err := live.DecodeBatch(bytes.NewReader(body))
	if err != nil {
		badRequest(c, err.Error())
		return
	}
	s.writeSocial(c, ops, true)
}

// writeSocial writes ops and answers: 200 with the users changed and the
// data's version; a refusal is 400, or 404 for the missing user,
// friendship or membership of a single operation; a store that did not
// take the change is 503.
func (s *Server) writeSocial(c *gin.Context, ops []live.Op, batch bool) {
	r, err := s.cfg.SocialStore.Write(c.Request.Context(), ops)
	switch {
	case err == nil:
		c.JSON(http.StatusOK, gin.H{"ops": len(ops), "changed": nonNilStrings(r.Changed), "data_version": r.Version})
	case errors.Is(err, live.ErrNotFound) && !batch:
		fail(c, http.StatusNotFound, "not_found", itemError(err, false))
	case errors.Is(err, live.ErrNotFound), errors.Is(err, live.ErrInvalid):
		badRequest(c, itemError(err, batch))
	default:
		s.log.Error("social write", "request_id", c.GetString("request_id"), "err", err)
		fail(c, http.StatusServiceUnavailable, "social_unavailable", "the social store did not take the change: retry shortly")
	}
}

// itemError is the message of a refusal: a batch's names the item
// (ops[i]), a single operation's needs not.
func itemError(err error, batch bool) string {
	var oe *live.OpError
	if !batch && errors.As(err, &oe) {
		return oe.Err.Error()
	}
	return err.Error()
}

func (s *Server) haveSocialStore(c *gin.Context) bool {
	if s.cfg.SocialStore == nil {
		fail(c, http.StatusNotImplemented, "social_read_only", "this server takes no social data writes (it serves no social store)")
		return false
	}
	return true
}

// liveProfile is the profile of id in the social store.
func (s *Server) liveProfile(id string) (*recommend.Profile, bool) {
	u, friends, groups, ok := s.cfg.SocialStore.User(id)
	if !ok {
		return nil, false
	}
	return &recommend.Profile{ID: id, Friends: friends, Groups: groups, Tags: nonNilStrings(u.Tags),
		Places: nonNilStrings(u.Places), Photos: len(u.Photos), Faves: len(u.Faves)}, true
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
