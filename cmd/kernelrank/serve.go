package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/admission"
	"github.com/kernelrank/kernelrank/internal/deploy"
	"github.com/kernelrank/kernelrank/internal/feedback"
	"github.com/kernelrank/kernelrank/internal/jobs"
	"github.com/kernelrank/kernelrank/internal/retrain"
	"github.com/kernelrank/kernelrank/recommend"
	"github.com/kernelrank/kernelrank/search"
	"github.com/kernelrank/kernelrank/server"
	"github.com/kernelrank/kernelrank/social/live"
	"github.com/prometheus/client_golang/prometheus"
)

type serveFlags struct {
	set                       *flag.FlagSet
	shared                    sharedFlags
	corpus                    corpusFlags
	addr, token               *string
	level, format             *string
	timeout, learnerTimeout   *time.Duration
	maxK, maxWindow           *int
	noSocial, noCache         *bool
	cacheBytes                *int64
	maxExpensive, maxFullRank *int
	fallbackRank, rateBurst   *int
	expensiveWait             *time.Duration
	rateLimit                 *float64
	readHeaderTimeout         *time.Duration
	readTimeout, idleTimeout  *time.Duration
	shutdownTimeout           *time.Duration
	trustedProxies            *string
	corsOrigins               *string
	eventsRetention           *string
	reselectEvery             *time.Duration
	retrainAfter              *int
	retrainEvery              *time.Duration
}

func newServeFlags(stderr io.Writer) serveFlags {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	return serveFlags{
		set:        fs,
		shared:     addSharedFlags(fs, "recommend-learner"),
		corpus:     addCorpusFlags(fs),
		addr:       fs.String("addr", "127.0.0.1:8080", "address to listen on"),
		token:      fs.String("admin-token", "", "bearer token for the admin endpoints (POST/DELETE /v1/images, /v1/jobs); empty disables them"),
		timeout:    fs.Duration("request-timeout", 30*time.Second, "per-request deadline"),
		maxK:       fs.Int("max-k", 1000, "largest k a search may ask for"),
		maxWindow:  fs.Int("max-window", 1000, "largest candidate window a search may ask for"),
		level:      fs.String("log-level", "info", "debug, info, warn or error"),
		format:     fs.String("log-format", "text", "text or json"),
		noSocial:   fs.Bool("no-social", false, "serve no recommendations (the /v1/users endpoints answer 404)"),
		cacheBytes: fs.Int64("cache-bytes", cache.DefaultBytes, "byte budget of the in-process cache of rankings and learned kernels (without --redis)"),
		noCache:    fs.Bool("no-cache", false, "cache no ranking or kernel: every search computes (its rerank.cache says \"off\")"),
		learnerTimeout: fs.Duration("learner-timeout", 10*time.Second,
			"deadline of every learner fit (within --request-timeout); a search whose learner runs out answers 503"),
		// All cores but one: the cheap requests keep a core however many
		// expensive ones arrive, or they wait for the scheduler behind them
		// (docs/evaluation.md, "Cheap searches under expensive load").
		maxExpensive: fs.Int("max-expensive", max(1, runtime.GOMAXPROCS(0)-1),
			"expensive re-rankings (a learned kernel of a large window, by the cost model) computed at once (default: all cores but one); cached and cheap ones never wait"),
		expensiveWait: fs.Duration("expensive-wait", 2*time.Second,
			"how long an expensive re-ranking waits for a slot before the answer is 503 with Retry-After"),
		maxFullRank: fs.Int("max-full-rank-window", search.DefaultMaxFullRank,
			"largest window a full-rank learner (npk, npk-fused) fits; a larger one gets its low-rank form (see --fallback-rank) and rerank.warning says so"),
		fallbackRank: fs.Int("fallback-rank", search.DefaultFallbackRank, "rank of the low-rank form used above --max-full-rank-window"),
		rateLimit:    fs.Float64("rate-limit", 50, "requests a second per client IP address on /v1 (token bucket; 0: no limit); over it: 429 with Retry-After"),
		rateBurst:    fs.Int("rate-burst", 200, "bucket size of --rate-limit: requests a client may send at once (a search page loads its thumbnails together)"),
		readHeaderTimeout: fs.Duration("read-header-timeout", 10*time.Second,
			"how long a client may take to send a request's line and headers"),
		readTimeout: fs.Duration("read-timeout", time.Minute,
			"how long a client may take to send a whole request, body included; a body unfinished by then gets 408 and the connection is closed"),
		idleTimeout: fs.Duration("idle-timeout", 2*time.Minute, "how long a kept-alive connection may wait for its next request"),
		shutdownTimeout: fs.Duration("shutdown-timeout", 10*time.Second,
			"on SIGINT or SIGTERM, how long requests in flight may finish before every connection is closed"),
		trustedProxies: fs.String("trusted-proxies", "",
			"comma-separated CIDR prefixes or addresses of load balancers whose X-Forwarded-For names the client (for --rate-limit and the logs); empty: the peer address is the client"),
		corsOrigins: fs.String("cors-origins", "",
			"comma-separated origins (https://app.example.com, or * for any) whose browser pages may call the API; empty: none"),
		eventsRetention: fs.String("events-retention", "1000000,720h",
			"the impressions and clicks kept (POST /v1/events; a Redis stream with --redis, else files under --cache-dir/events): "+
				"a count, an age, or both comma-separated (0: no bound)"),
		reselectEvery: fs.Duration("reselect-every", 0, "with --validation-from-clicks: choose the default re-ranker again, on the clicks logged by then, every this long (0: at start only)"),
		retrainAfter:  fs.Int("retrain-after", 0, "retrain the recommender on the live social data once this many user changes are applied (0: never); until then new and changed users are folded into the served model"),
		retrainEvery:  fs.Duration("retrain-every", 0, "retrain the recommender on the live social data this often when users changed (0: never)"),
	}
}

// httpConfig is what the HTTP flags give: the timeouts, and the trusted
// proxies and CORS origins of the server's configuration.
func (f serveFlags) httpConfig() (server.Timeouts, server.Config, error) {
	t := server.Timeouts{Request: *f.timeout, ReadHeader: *f.readHeaderTimeout, Read: *f.readTimeout, Idle: *f.idleTimeout, Shutdown: *f.shutdownTimeout}
	for name, d := range map[string]time.Duration{"request-timeout": t.Request, "read-header-timeout": t.ReadHeader,
		"read-timeout": t.Read, "idle-timeout": t.Idle, "shutdown-timeout": t.Shutdown} {
		if d <= 0 {
			return t, server.Config{}, fmt.Errorf("serve: --%s must be positive, got %v", name, d)
		}
	}
	proxies, err := admission.ParseNetworks(*f.trustedProxies)
	if err != nil {
		return t, server.Config{}, fmt.Errorf("serve: --trusted-proxies: %w", err)
	}
	cfg := server.Config{TrustedProxies: proxies}
	for o := range strings.SplitSeq(*f.corsOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.CORSOrigins = append(cfg.CORSOrigins, o)
		}
	}
	if err := cfg.Validate(); err != nil {
		return t, server.Config{}, fmt.Errorf("serve: --cors-origins: %w", err)
	}
	return t, cfg, nil
}

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	f := newServeFlags(stderr)
	if err := parse(f.set, args); err != nil {
		return err
	}
	if f.set.NArg() > 0 {
		return fmt.Errorf("serve: unexpected arguments %q", f.set.Args())
	}
	log, err := newLogger(stderr, *f.level, *f.format)
	if err != nil {
		return err
	}
	timeouts, web, err := f.httpConfig()
	if err != nil {
		return err
	}
	if _, err := feedback.ParseRetention(*f.eventsRetention); err != nil {
		return fmt.Errorf("serve: --events-retention: %w", err) // before the port is bound
	}
	// Bind first: a busy port fails now, not after the index is built, and
	// probes get 503s with the progress, not "connection refused".
	ln, err := net.Listen("tcp", *f.addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w (is another server running there? choose another with --addr)", *f.addr, err)
	}
	boot := server.NewBoot(timeouts, log)
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- boot.Serve(ctx, ln) }()
	log.Info("listening", "addr", ln.Addr().String())
	srv, closeAll, err := start(ctx, f, web, boot, log)
	if err != nil {
		cancel()
		<-errc
		return err
	}
	defer closeAll()
	boot.Ready(srv)
	err = <-errc
	cancel()
	return err
}

// start opens what the server serves, reporting its progress to boot, and
// returns the server (with the proxies and origins of web) and the function
// that closes it all.
func start(ctx context.Context, f serveFlags, web server.Config, boot *server.Boot, log *slog.Logger) (_ *server.Server, closeAll func(), err error) {
	var closers []func()
	closeEach := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeEach() // not closeAll: an error return has set it to nil
		}
	}()
	sh := f.shared
	reg := prometheus.NewRegistry()
	boot.SetProgress(server.Progress{Stage: "opening the cache"})
	b, err := deploy.OpenBackends(ctx, *sh.redis, *sh.cacheDir, *f.cacheBytes, *f.noCache, reg, log)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, b.Close)
	c, err := deploy.OpenCorpus(ctx, f.corpus.options(sh, filepath.Join(*sh.cacheDir, "replica")), b, reg, log, func(stage string, done, total int) {
		boot.SetProgress(server.Progress{Stage: stage, Done: done, Total: total})
	})
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, c.Close)
	ix := c.Ix
	ret, err := feedback.ParseRetention(*f.eventsRetention)
	if err != nil {
		return nil, nil, fmt.Errorf("--events-retention: %w", err)
	}
	events, err := deploy.OpenEvents(b, *sh.cacheDir, ret)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { events.Close() })
	var clicks feedback.Log
	if *sh.fromClicks {
		clicks = events
	}
	am := admission.NewMetrics(reg)
	engine, choose, err := deploy.NewEngine(ix, b, *sh.validation, clicks, *sh.data == "", search.Options{
		Window:         *sh.window,
		MaxFullRank:    *f.maxFullRank,
		FallbackRank:   *f.fallbackRank,
		Expensive:      admission.NewGate(*f.maxExpensive, *f.expensiveWait, am),
		LearnerTimeout: *f.learnerTimeout,
	}, log)
	if err != nil {
		return nil, nil, err
	}
	// The server answers with the built-in default until the choice is
	// made; on clicks, it is made again as they come.
	go func() {
		var tick <-chan time.Time
		if clicks != nil && *sh.validation == "" && *f.reselectEvery > 0 {
			t := time.NewTicker(*f.reselectEvery)
			defer t.Stop()
			tick = t.C
		}
		for {
			if err := choose(ctx); err != nil && ctx.Err() == nil {
				log.Error("the default re-ranker stays "+engine.DefaultStrategy(), "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick: // nil without re-selection: waits for the end
			}
		}
	}()
	deps := retrain.Deps{Social: *sh.social, Log: log, Search: func(context.Context) (*search.Engine, error) { return engine, nil }}
	var svc *recommend.Service
	var soc *deploy.Social
	if !*f.noSocial {
		boot.SetProgress(server.Progress{Stage: "loading the social network"})
		if soc, err = deploy.OpenSocial(ctx, *sh.social, *sh.learner, *sh.cacheDir, b, log); err != nil {
			return nil, nil, err
		}
		closers = append(closers, soc.Close)
		svc = soc.Service
		if *f.retrainAfter < 0 || *f.retrainEvery < 0 {
			return nil, nil, fmt.Errorf("serve: --retrain-after and --retrain-every must not be negative")
		}
		svc.RetrainOnChanges(*f.retrainAfter, *f.retrainEvery)
		if err := svc.Start(); err != nil {
			return nil, nil, fmt.Errorf("--recommend-learner: %w", err)
		}
		deps.Recommend = func(context.Context) (*recommend.Service, error) { return svc, nil }
	}
	// Without --redis jobs run here, one at a time; with it, in the
	// `kernelrank worker` processes that share the queue.
	targets := []string{jobs.TargetSearch}
	if svc != nil {
		targets = append(targets, jobs.TargetSocial)
	}
	queue, err := retrain.OpenQueue(ctx, *sh.redis, jobs.DefaultQueue, retrain.NewHandler(deps), targets, log)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { queue.Close() })
	log.Info("cache", "backend", b.BackendName(), "models", b.StoreName(*sh.cacheDir))
	return server.New(ix, server.Config{
		Jobs:           queue,
		Social:         svc,
		SocialStore:    socialStore(soc),
		AdminToken:     *f.token,
		MaxK:           *f.maxK,
		MaxWindow:      *f.maxWindow,
		RequestTimeout: *f.timeout,
		Images:         c.Images,
		Writer:         c.Writer(),
		Replica:        c.Follower,
		MaxLagEntries:  *f.corpus.maxLagEntries,
		MaxLagSeconds:  *f.corpus.maxLagSeconds,
		Search:         engine,
		Registry:       reg,
		Limiter:        admission.NewLimiter(*f.rateLimit, *f.rateBurst, am),
		TrustedProxies: web.TrustedProxies,
		CORSOrigins:    web.CORSOrigins,
		Events:         events,
	}, log), closeEach, nil
}

// socialStore is the store of soc (nil without social data).
func socialStore(soc *deploy.Social) *live.Store {
	if soc == nil {
		return nil
	}
	return soc.Store
}

func cacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return dir
	}
	return os.TempDir()
}
