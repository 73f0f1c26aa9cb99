package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// defaultBenchQueries are frequent tags of the demo corpus.
const defaultBenchQueries = "computer,food,shape,symbol,people,sign,geometry,stars,animal,flag,card,icon," +
	"menu,mammal,transport,recreation,fruit,office,pattern,arrow,tool,map,plant,building"

func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && args[0] == "http":
		return benchHTTP(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "corpus":
		return benchCorpus(ctx, args[1:], stdout, stderr)
	}
	return errors.New("bench: usage: kernelrank bench http|corpus [flags] (see kernelrank bench http -h, kernelrank bench corpus -h)")
}

// benchRequest is one kind of request: url gives the next one's URL.
type benchRequest struct {
	name   string
	search bool
	url    func() string
}

// benchRow is what one request kind at one concurrency measured.
type benchRow struct {
	name                   string
	clients                int
	requests, errors, hits int
	limited                int // of the errors, 429s
	perSecond              float64
	p50, p99               time.Duration
	firstError             string
}

func benchHTTP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench http", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("url", "", "base URL of a running server to measure; empty: start one in-process on 127.0.0.1 with its caches and rate limit off (--no-cache --rate-limit 0)")
	duration := fs.Duration("duration", 5*time.Second, "time spent on each row")
	maxRequests := fs.Int("requests", 10000, "most requests of each row")
	concurrency := fs.String("concurrency", "1,8", "comma-separated numbers of concurrent clients; each gives a row per request kind")
	queries := fs.String("queries", defaultBenchQueries, "comma-separated queries the searches cycle through (frequent demo tags)")
	user := fs.String("user", "u001", "the user whose friends are asked for")
	ready := fs.Duration("ready-timeout", 10*time.Minute, "how long to wait for /readyz (the first start on the demo builds its index)")
	data := fs.String("data", "", "in-process server: index directory (empty: the demo corpus)")
	social := fs.String("social", "", "in-process server: social data (empty: the demo network)")
	cacheRoot := fs.String("cache-dir", "", "in-process server: its --cache-dir (empty: serve's default, where the demo is kept)")
	if err := parse(fs, args); err != nil {
		return err
	}
	clients, err := parseCounts(*concurrency)
	if err != nil {
		return fmt.Errorf("bench http: --concurrency: %w", err)
	}
	qs := strings.Split(*queries, ",")
	if *duration <= 0 || *maxRequests <= 0 || slices.Contains(qs, "") {
		return errors.New("bench http: --duration and --requests must be positive, --queries non-empty")
	}
	base := strings.TrimRight(*target, "/")
	if base == "" {
		// Every client is 127.0.0.1: the per-client rate limit is off.
		serveArgs := []string{"--no-cache", "--rate-limit", "0", "--log-level", "warn"}
		for name, v := range map[string]string{"--data": *data, "--social": *social, "--cache-dir": *cacheRoot} {
			if v != "" { // unset, serve's default or KERNELRANK_* variable applies
				serveArgs = append(serveArgs, name, v)
			}
		}
		var stop func() error
		if base, stop, err = startServer(ctx, serveArgs, stderr); err != nil {
			return err
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintln(stderr, "bench http: server:", err)
			}
		}()
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: slices.Max(clients)}}
	if err := waitReady(ctx, client, base, *ready); err != nil {
		return err
	}
	// One counter for every search: each request has its own seed, so no
	// two ask for the same ranking.
	var seq atomic.Int64
	search := func(params string) func() string {
		return func() string {
			n := seq.Add(1)
			return fmt.Sprintf("%s/v1/search?q=%s&seed=%d&%s", base, url.QueryEscape(qs[int(n)%len(qs)]), n, params)
		}
	}
	kinds := []benchRequest{
		{"search raw", true, search("rerank=raw")},
		{"search poly", true, search("rerank=poly")},
		{"search npk low-rank (rank 10)", true, search("rerank=npk&params=" + url.QueryEscape(`{"rank":10}`))},
		{"search npk full-rank", true, search("rerank=npk")},
		{"friends of " + *user, false, func() string { return base + "/v1/users/" + url.PathEscape(*user) + "/friends?k=10" }},
	}
	fmt.Fprintf(stdout, "kernelrank bench http: %s, %v or %d requests a row\n", base, *duration, *maxRequests)
	cacheNote := "its ranking and kernel caches are off (--no-cache), and its rate limit (--rate-limit 0)"
	if *target != "" {
		cacheNote = "a served cache hit is counted under \"cache hits\""
	}
	fmt.Fprintf(stdout, "searches cycle q over %d queries with a new seed each: no ranking is asked for twice; %s\n\n", len(qs), cacheNote)
	var rows []benchRow
	for _, k := range kinds {
		for _, c := range clients {
			if err := ctx.Err(); err != nil {
				return err
			}
			row := runBenchRow(ctx, client, k, c, *duration, *maxRequests)
			if row.limited > 0 {
				return errRateLimited(base, row)
			}
			rows = append(rows, row)
		}
	}
	return printBench(stdout, rows)
}

func parseCounts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("%q: want integers from 1 to 1024", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// startServer runs `kernelrank serve` in this process on a free loopback
// port; stop shuts it down and returns its error.
func startServer(ctx context.Context, serveArgs []string, stderr io.Writer) (base string, stop func() error, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	l.Close() // serve listens on it again; another process taking it meanwhile fails serve, which is reported
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, append([]string{"--addr", addr}, serveArgs...), stderr) }()
	stop = func() error {
		cancel()
		return <-done
	}
	return "http://" + addr, stop, nil
}

// waitReady polls /readyz until it answers 200.
func waitReady(ctx context.Context, client *http.Client, base string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		req, err := http.NewRequestWithContext(ctx, "GET", base+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench http: %s/readyz not ready after %v (last: %v)", base, limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runBenchRow sends requests of kind k from clients goroutines until d has
// passed or maxRequests were sent.
func runBenchRow(ctx context.Context, client *http.Client, k benchRequest, clients int, d time.Duration, maxRequests int) benchRow {
	row := benchRow{name: k.name, clients: clients}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		sent      atomic.Int64
		wg        sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(d)
	for range clients {
		wg.Go(func() {
			for sent.Add(1) <= int64(maxRequests) && time.Now().Before(end) && ctx.Err() == nil {
				t0 := time.Now()
				hit, err := benchOne(ctx, client, k.url(), k.search)
				took := time.Since(t0)
				mu.Lock()
				latencies = append(latencies, took)
				if err != nil {
					row.errors++
					if errors.Is(err, errLimited) {
						row.limited++
					}
					if row.firstError == "" {
						row.firstError = err.Error()
					}
				} else if hit {
					row.hits++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	row.requests = len(latencies)
	row.perSecond = float64(row.requests) / elapsed.Seconds()
	slices.Sort(latencies)
	row.p50, row.p99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
	return row
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// errLimited is a 429: the server's per-client rate limit answered.
var errLimited = errors.New("429 Too Many Requests")

// errRateLimited refuses to report a bench whose row the server
// rate-limited: its req/s and latencies would measure the server's
// --rate-limit (every bench client is one client to it), not its speed.
func errRateLimited(base string, r benchRow) error {
	return fmt.Errorf("bench http: %s answered %d of %d requests of %q at %d clients with 429 Too Many Requests: "+
		"its per-client rate limit, not its speed, would be measured, so nothing is reported. "+
		"Restart it with --rate-limit 0 (or a --rate-limit and --rate-burst above the bench's load), or leave out --url to measure an in-process server",
		base, r.limited, r.requests, r.name, r.clients)
}

// benchOne sends one GET; a status other than 200 is an error. For a
// search it reports whether the answer came from a cache.
func benchOne(ctx context.Context, client *http.Client, u string, search bool) (hit bool, err error) {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, err
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return false, errLimited
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%d: %.200s", resp.StatusCode, body)
	}
	if !search {
		return false, nil
	}
	var r struct {
		Rerank struct {
			Cache       string `json:"cache"`
			KernelCache string `json:"kernel_cache"`
		} `json:"rerank"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return false, fmt.Errorf("search answer: %w", err)
	}
	return r.Rerank.Cache == "hit" || r.Rerank.KernelCache == "hit", nil
}

func printBench(w io.Writer, rows []benchRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "request\tclients\trequests\terrors\treq/s\tp50 ms\tp99 ms\tcache hits\t")
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) }
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f\t%s\t%s\t%d\t\n", r.name, r.clients, r.requests, r.errors, r.perSecond, ms(r.p50), ms(r.p99), r.hits)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.errors > 0 {
			fmt.Fprintf(w, "%s, %d clients: %d errors, the first: %s\n", r.name, r.clients, r.errors, r.firstError)
		}
	}
	return nil
}
