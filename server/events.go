package server

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/internal/feedback"
)

// postEvents records a batch of impressions and clicks, all or none: a bad
// event refuses the batch (400 naming it), a body over
// feedback.MaxBodyBytes gets 413, a log that fails 503. The events of
// accepted batches are counted, stored or failed; refused batches show in
// the request metric's 400s.
func (s *Server) postEvents(c *gin.Context) {
	if !onlyParams(c) {
		return
	}
	if s.cfg.Events == nil {
		fail(c, http.StatusNotFound, "not_found", "this server records no events")
		return
	}
	events, err := feedback.Decode(http.MaxBytesReader(c.Writer, c.Request.Body, feedback.MaxBodyBytes), time.Now())
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		fail(c, http.StatusRequestEntityTooLarge, "too_large", "an events body is at most "+strconv.Itoa(feedback.MaxBodyBytes)+" bytes")
		return
	case err != nil:
		badRequest(c, err.Error())
		return
	}
	if err := s.cfg.Events.Append(c.Request.Context(), events); err != nil {
		s.metrics.events.WithLabelValues("failed").Add(float64(len(events)))
		s.log.Error("events not stored", "request_id", c.GetString("request_id"), "err", err)
		fail(c, http.StatusServiceUnavailable, "events_unavailable", "the event log is unavailable: retry later")
		return
	}
	s.metrics.events.WithLabelValues("stored").Add(float64(len(events)))
	c.JSON(http.StatusOK, gin.H{"stored": len(events)})
}
