// Package bench holds kernelrank's load generators, the work of `kernelrank
// bench`: HTTP measures a server's requests a second and latency
// percentiles per request kind; Corpus measures the replicated corpus on a
// Redis (replication lag, bytes per image, ingest, a replica's start-up).
// They are tools above the whole server, not part of it.
package bench

import (
	"context"
	"encoding/json"
	"errors"
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

// HTTPOptions are what bench http measures and for how long.
type HTTPOptions struct {
	URL      string        // base URL of a running server; empty: Serve one
	Duration time.Duration // time spent on each row
	Requests int           // most requests of each row
	Clients  []int         // concurrent clients: a row per request kind each
	Queries  []string      // the searches cycle through them
	User     string        // whose friends are asked for
	Ready    time.Duration // how long to wait for /readyz
	// Serve runs a server listening on addr until ctx ends (without URL).
	Serve func(ctx context.Context, addr string) error
}

// HTTP measures a kernelrank server's requests a second and latency
// percentiles, a row per request kind and number of clients, and prints
// them to stdout.
func HTTP(ctx context.Context, o HTTPOptions, stdout, stderr io.Writer) error {
	base := strings.TrimRight(o.URL, "/")
	if base == "" {
		var stop func() error
		var err error
		if base, stop, err = StartServer(ctx, o.Serve); err != nil {
			return err
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintln(stderr, "bench http: server:", err)
			}
		}()
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: slices.Max(o.Clients)}}
	if err := WaitReady(ctx, client, base, o.Ready); err != nil {
		return err
	}
	// One counter for every search: each request has its own seed, so no
	// two ask for the same ranking.
	var seq atomic.Int64
	search := func(params string) func() string {
		return func() string {
			n := seq.Add(1)
			return fmt.Sprintf("%s/v1/search?q=%s&seed=%d&%s", base, url.QueryEscape(o.Queries[int(n)%len(o.Queries)]), n, params)
		}
	}
	kinds := []benchRequest{
		{"search raw", true, search("rerank=raw")},
		{"search poly", true, search("rerank=poly")},
		{"search npk low-rank (rank 10)", true, search("rerank=npk&params=" + url.QueryEscape(`{"rank":10}`))},
		{"search npk full-rank", true, search("rerank=npk")},
		{"friends of " + o.User, false, func() string { return base + "/v1/users/" + url.PathEscape(o.User) + "/friends?k=10" }},
	}
	fmt.Fprintf(stdout, "kernelrank bench http: %s, %v or %d requests a row\n", base, o.Duration, o.Requests)
	cacheNote := "its ranking and kernel caches are off (--no-cache), and its rate limit (--rate-limit 0)"
	if o.URL != "" {
		cacheNote = "a served cache hit is counted under \"cache hits\""
	}
	fmt.Fprintf(stdout, "searches cycle q over %d queries with a new seed each: no ranking is asked for twice; %s\n\n", len(o.Queries), cacheNote)
	var rows []benchRow
	for _, k := range kinds {
		for _, c := range o.Clients {
			if err := ctx.Err(); err != nil {
				return err
			}
			row := runBenchRow(ctx, client, k, c, o.Duration, o.Requests)
			if row.limited > 0 {
				return errRateLimited(base, row)
			}
			rows = append(rows, row)
		}
	}
	return printBench(stdout, rows)
}

// StartServer runs serve in this process on a free loopback port; stop
// shuts it down and returns its error.
func StartServer(ctx context.Context, serve func(context.Context, string) error) (base string, stop func() error, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	l.Close() // serve listens on it again; another process taking it meanwhile fails serve, which is reported
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, addr) }()
	stop = func() error {
		cancel()
		return <-done
	}
	return "http://" + addr, stop, nil
}

// WaitReady polls /readyz until it answers 200.
func WaitReady(ctx context.Context, client *http.Client, base string, limit time.Duration) error {
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
