package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/internal/jobs"
)

// maxListJobs bounds GET /v1/jobs?limit=.
const maxListJobs = 100

// haveJobs answers 404 when the server runs no retraining jobs.
func (s *Server) haveJobs(c *gin.Context) {
	if s.cfg.Jobs == nil {
		fail(c, http.StatusNotFound, "jobs_disabled",
			"this server runs no retraining jobs: start `kernelrank serve` with a job queue (in-process by default, shared with `kernelrank worker` processes with --redis URL)")
		return
	}
	c.Next()
}

// createJob queues a retraining job: {"target": "social"|"search"|"all", ...}.
func (s *Server) createJob(c *gin.Context) {
	if !onlyParams(c) {
		return
	}
	body, err := readBody(c)
	if err != nil {
		return
	}
	spec, err := jobs.ParseSpec(body)
	if err != nil {
		s.jobError(c, err)
		return
	}
	if spec.Social == "" && spec.Target != jobs.TargetSearch {
		spec.Social = s.cfg.SocialData // re-read what this server serves, wherever the job runs
	}
	j, err := s.cfg.Jobs.Enqueue(c.Request.Context(), spec)
	if err != nil {
		s.jobError(c, err)
		return
	}
	c.Header("Location", "/v1/jobs/"+j.ID)
	c.JSON(http.StatusAccepted, j)
}

func (s *Server) getJob(c *gin.Context) {
	if !onlyParams(c) {
		return
	}
	j, err := s.cfg.Jobs.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.jobError(c, err)
		return
	}
	c.JSON(http.StatusOK, j)
}

// listJobs lists the most recent jobs, most recent first (?limit=, default 20).
func (s *Server) listJobs(c *gin.Context) {
	if !onlyParams(c, "limit") {
		return
	}
	n, ok := intParam(c, c.Request.URL.Query(), "limit", 20, 1, maxListJobs)
	if !ok {
		return
	}
	list, err := s.cfg.Jobs.List(c.Request.Context(), n)
	if err != nil {
		s.jobError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"jobs": list})
}

func (s *Server) cancelJob(c *gin.Context) {
	if !onlyParams(c) {
		return
	}
	j, err := s.cfg.Jobs.Cancel(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.jobError(c, err)
		return
	}
	c.JSON(http.StatusOK, j)
}

// jobError maps a queue's errors to statuses; any other error is the
// queue's backend failing (Redis gone), which a retry later may not meet.
func (s *Server) jobError(c *gin.Context, err error) {
	switch {
	case errors.Is(err, jobs.ErrSpec):
		badRequest(c, err.Error())
	case errors.Is(err, jobs.ErrNotFound):
		fail(c, http.StatusNotFound, "unknown_job", fmt.Sprintf("no job with id %q", c.Param("id")))
	case errors.Is(err, jobs.ErrFinished):
		fail(c, http.StatusConflict, "job_finished", fmt.Sprintf("job %q has already finished", c.Param("id")))
	default:
		s.log.Error("job queue", "err", err)
		fail(c, http.StatusServiceUnavailable, "jobs_unavailable", "the job queue is unavailable: "+err.Error())
	}
}
