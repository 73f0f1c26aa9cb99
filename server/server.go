// Package server is the HTTP API of kernelrank: gin routes for search,
// images, learners, friend and group recommendations, health and metrics, with the middleware every request
// goes through (request ids, structured logs, limits, panics as JSON 500s).
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gin-contrib/cors"
	"github.com/gin-gonic/gin"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/index/blob"
	"github.com/kernelrank/kernelrank/index/replica"
	"github.com/kernelrank/kernelrank/internal/admission"
	"github.com/kernelrank/kernelrank/internal/feedback"
	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/search"
	"github.com/kernelrank/kernelrank/social/live"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config holds the server's limits and credentials. Zero values take the defaults.
type Config struct {
	AdminToken     string        // bearer token for admin endpoints; empty disables them
	MaxQueryLen    int           // characters (default 1000)
	MaxK           int           // results per page (default 1000)
	MaxWindow      int           // candidates re-ranked (default 1000)
	MaxBodyBytes   int64         // request body limit (default 32 MiB)
	RequestTimeout time.Duration // per-request deadline (default 30 s)
	ImageDir       string        // where uploaded images are written, when Images is nil; "" refuses uploads (501)
	// Images keeps the image bytes (a blob store every server reads); nil:
	// a directory store in ImageDir.
	Images *index.Images
	// Writer applies image changes: the index (nil) or, with Replica, the
	// corpus change log.
	Writer index.Writer
	// Replica is the follower of the corpus change log the index is a
	// replica of; nil: the index is the corpus.
	Replica *replica.Follower
	// MaxLagEntries and MaxLagSeconds: a replica further behind its log
	// reports "degraded" (0: no bound).
	MaxLagEntries int64
	MaxLagSeconds time.Duration
	// Social serves the /v1/users endpoints; nil answers them 404.
	Social *recommend.Service
	// SocialStore takes the social writes (/v1/users PUT and DELETE,
	// /v1/social/batch) and GET /v1/users/{id} reads it; nil: those
	// writes answer 501.
	SocialStore *live.Store
	// SocialData is the social data the server serves: a social job that
	// names none re-reads it, on whichever worker runs it.
	SocialData string
	// ModelWait is how long a recommendation request waits for a model
	// being trained before answering 503 (default 2 s).
	ModelWait time.Duration
	// Search runs the searches (with its default window and its cache);
	// nil: an engine over the index with the defaults and no cache.
	Search *search.Engine
	// Registry receives the server's metrics, beside those its caller
	// registered there (e.g. the cache's); nil: a new registry.
	Registry *prometheus.Registry
	Jobs     jobs.Queue // runs retraining jobs (/v1/jobs); nil answers them 404
	// Limiter rate-limits each client (by IP address) on /v1; nil: no limit.
	Limiter *admission.Limiter
	// MaxHeaderBytes bounds the request line and headers (default 64 KiB).
	MaxHeaderBytes int
	// TrustedProxies are the load balancers whose X-Forwarded-For names the
	// client (for the rate limit and the logs); none: the peer is the client.
	TrustedProxies []netip.Prefix
	// Events records impressions and clicks (POST /v1/events); nil
	// answers it 404.
	Events feedback.Log
	// CORSOrigins are the browser origins ("https://app.example.com", or
	// "*" for any) that may call the API from their pages; none: same
	// origin only. Validate checks them.
	CORSOrigins []string
}

// Validate reports a configuration New cannot serve.
func (c Config) Validate() error {
	if len(c.CORSOrigins) == 0 {
		return nil
	}
	if len(c.CORSOrigins) > 1 && slices.Contains(c.CORSOrigins, "*") {
		return fmt.Errorf("CORS origins %q: * (any origin) stands alone", c.CORSOrigins)
	}
	if err := corsConfig(c.CORSOrigins).Validate(); err != nil {
		return fmt.Errorf("CORS origins %q: %w", c.CORSOrigins, err)
	}
	return nil
}

// allowOrigins answers the CORS requests of the given origins. The library
// refuses any other origin with a bare 403; such a request is served as
// without CORS instead (JSON as ever, and a browser keeps the answer from
// the other origin's page; its preflight gets a JSON 405).
func allowOrigins(origins []string) gin.HandlerFunc {
	apply := cors.New(corsConfig(origins))
	return func(c *gin.Context) {
		origin := c.GetHeader("Origin")
		// Browsers send origins in lower case, as the library keeps them.
		if origin == "" || slices.ContainsFunc(origins, func(o string) bool { return o == "*" || strings.ToLower(o) == origin }) {
			apply(c)
		}
	}
}

// corsConfig lets the given origins call every endpoint, sending the admin
// token, and read the headers a client acts on.
func corsConfig(origins []string) cors.Config {
	return cors.Config{
		AllowOrigins:  origins,
		AllowMethods:  []string{"GET", "HEAD", "POST", "PUT", "DELETE"},
		AllowHeaders:  []string{"Authorization", "Content-Type", requestIDHeader},
		ExposeHeaders: []string{requestIDHeader, "Retry-After", "Location", "ETag"},
		MaxAge:        time.Hour,
	}
}

func (c *Config) fill() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.MaxQueryLen, 1000)
	def(&c.MaxK, 1000)
	def(&c.MaxWindow, 1000)
	def(&c.MaxHeaderBytes, 64<<10)
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 32 << 20
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.ModelWait <= 0 {
		c.ModelWait = 2 * time.Second
	}
}

// Server serves one index.
type Server struct {
	ix       *index.Index
	files    *index.Images // the image bytes: uploads and thumbnails
	writer   index.Writer
	blobInfo blobInfo
	images   *search.Engine
	cfg      Config
	log      *slog.Logger
	engine   *gin.Engine
	metrics  *metrics
}

// New builds the server and its routes over an open index. A cfg that fails
// Validate is served without its CORS origins (logged as an error).
func New(ix *index.Index, cfg Config, log *slog.Logger) *Server {
	cfg.fill()
	gin.SetMode(gin.ReleaseMode)
	reg := cfg.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	images := cfg.Search
	if images == nil {
		images = search.New(ix, nil, search.Options{})
	}
	files := cfg.Images
	if files == nil {
		var store blob.Store
		if cfg.ImageDir != "" {
			store = blob.NewDir(cfg.ImageDir)
		}
		files = index.NewImages(store)
	}
	writer := cfg.Writer
	if writer == nil {
		writer = index.Local{Index: ix}
	}
	s := &Server{ix: ix, files: sweepImages(files, ix, log), writer: writer, images: images, cfg: cfg, log: log, engine: gin.New(), metrics: newMetrics(reg)}
	e := s.engine
	e.HandleMethodNotAllowed = true
	// gin's own redirect answers in HTML: NoRoute redirects in JSON.
	e.RedirectTrailingSlash = false
	// The client is the connection's peer unless that is a trusted proxy:
	// X-Forwarded-For, which anyone can send, must not choose whose rate
	// limit a request spends.
	proxies := make([]string, len(cfg.TrustedProxies))
	for i, p := range cfg.TrustedProxies {
		proxies[i] = p.String()
	}
	_ = e.SetTrustedProxies(proxies) // prefixes always parse
	e.Use(s.requestID, s.recover, s.observe)
	if err := cfg.Validate(); err != nil {
		log.Error("serving without CORS", "err", err)
	} else if len(cfg.CORSOrigins) > 0 {
		// Before the limits and the token check: a preflight carries no
		// token, and an error must reach the page's script.
		e.Use(allowOrigins(cfg.CORSOrigins))
	}
	e.Use(s.limitHeaders, s.singleParams, s.limitBody, s.timeout)
	e.NoRoute(s.noRoute)
	e.NoMethod(func(c *gin.Context) {
		fail(c, http.StatusMethodNotAllowed, "method_not_allowed", c.Request.Method+" is not allowed on "+c.Request.URL.Path)
	})
	healthy := func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) }
	// HEAD too: load balancers and probes use it.
	e.GET("/healthz", healthy)
	e.HEAD("/healthz", healthy)
	e.GET("/readyz", s.ready)
	e.HEAD("/readyz", s.ready)
	e.GET("/v1/status", s.status)
	e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	routePages(e)
	v1 := e.Group("/v1", s.rateLimit)
	v1.GET("/openapi.json", func(c *gin.Context) { c.Data(http.StatusOK, "application/json; charset=utf-8", openAPIDoc) })
	v1.GET("/learners", s.listLearners)
	v1.GET("/search", s.search)
	v1.GET("/images/:id", s.getImage)
	v1.GET("/images/:id/thumbnail", s.thumbnail)
	v1.GET("/users/:id", s.getUser)
	v1.GET("/users/:id/friends", s.friends)
	v1.GET("/users/:id/groups", s.groups)
	v1.POST("/events", s.postEvents)
	admin := v1.Group("", s.requireAdmin)
	admin.POST("/images", s.addImages)
	admin.DELETE("/images/:id", s.deleteImage)
	admin.PUT("/users/:id", s.putUser)
	admin.DELETE("/users/:id", s.deleteUser)
	admin.PUT("/users/:id/friends/:other", s.putFriend)
	admin.DELETE("/users/:id/friends/:other", s.deleteFriend)
	admin.PUT("/users/:id/groups/:group", s.putMember)
	admin.DELETE("/users/:id/groups/:group", s.deleteMember)
	admin.POST("/social/batch", s.socialBatch)
	jobsAPI := admin.Group("/jobs", s.haveJobs)
	jobsAPI.POST("", s.createJob)
	jobsAPI.GET("", s.listJobs)
	jobsAPI.GET("/:id", s.getJob)
	jobsAPI.DELETE("/:id", s.cancelJob)
	return s
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler { return s.engine }

// noRoute answers 404, or a JSON 301 to the path without its trailing
// slash when that is a route.
func (s *Server) noRoute(c *gin.Context) {
	path := c.Request.URL.Path
	if trimmed := strings.TrimRight(path, "/"); trimmed != path && trimmed != "" && s.isRoute(c.Request.Method, trimmed) {
		u := *c.Request.URL
		u.Path = trimmed
		c.Header("Location", u.RequestURI())
		fail(c, http.StatusMovedPermanently, "moved_permanently", "this endpoint is "+trimmed+" (without the trailing slash)")
		return
	}
	fail(c, http.StatusNotFound, "not_found", "no such endpoint: "+path)
}

// isRoute reports whether method and path match a route, a :param
// matching any one segment.
func (s *Server) isRoute(method, path string) bool {
	segs := strings.Split(path, "/")
	for _, r := range s.engine.Routes() {
		if r.Method == method && matches(strings.Split(r.Path, "/"), segs) {
			return true
		}
	}
	return false
}

func matches(pattern, segs []string) bool {
	if len(pattern) != len(segs) {
		return false
	}
	for i, p := range pattern {
		if !strings.HasPrefix(p, ":") && p != segs[i] {
			return false
		}
	}
	return true
}

// ready answers 503 while the default recommender is being loaded or
// trained (its requests would be 503s too), 200 otherwise, with every
// model's state. A cache backend that does not answer (Redis gone) makes
// the status "degraded" but stays 200: the server answers every request,
// computing what it would have read, and taking every server of a
// deployment out of rotation because their shared Redis is down would
// turn a slowdown into an outage. A replica too far behind the corpus
// log (Config.MaxLagEntries, MaxLagSeconds) is "degraded" too.
func (s *Server) ready(c *gin.Context) {
	cv := s.corpus(c.Request.Context())
	body := gin.H{"status": "ready", "images": cv.Images, "corpus_version": cv.Version, "corpus": cv}
	if cv.Degraded != "" {
		body["status"] = "degraded"
	}
	status := http.StatusOK
	if ld := s.images.Loader(); ld != nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), time.Second)
		defer cancel()
		st := gin.H{"backend": ld.Cache().Backend(), "ok": true}
		if err := ld.Health(ctx); err != nil {
			st["ok"], st["error"] = false, err.Error()
			body["status"] = "degraded"
		}
		body["cache"] = st
	} else {
		body["cache"] = gin.H{"backend": "off"}
	}
	if s.cfg.Social != nil {
		states := s.cfg.Social.Status()
		body["recommenders"] = states
		for _, st := range states {
			if st.Learner == s.cfg.Social.DefaultLearner() && (st.State == "loading" || st.State == "training") {
				body["status"], status = "training", http.StatusServiceUnavailable
			}
		}
	}
	c.JSON(status, body)
}
