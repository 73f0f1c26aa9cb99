package feedback

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/internal/redistest"
	"github.com/redis/go-redis/v9"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// searchEvent is a valid search event; i sets its item and rank.
func searchEvent(i int) Event {
	return Event{Kind: Impression, Surface: Search, Query: "sky", Item: fmt.Sprintf("img%d", i), Rank: i%10 + 1,
		Rerank: "npk-fused", Session: "s1", ClientTime: t0, ServerTime: t0.Add(time.Duration(i) * time.Millisecond)}
}

func TestDecodeStampsServerTime(t *testing.T) {
	body := `{"events": [
	 {"kind":"impression","surface":"search","query":"sky","item":"a","rank":1,"rerank":"poly","session":"s","client_time":"2026-01-02T03:04:05Z"},
	 {"kind":"click","surface":"friends","user":"u1","item":"u2","rank":3,"model_version":"v9","session":"s","client_time":"2026-01-02T03:04:06.5Z"}]}`
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.FixedZone("x", 3600))
	got, err := Decode(strings.NewReader(body), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Kind != Click || got[1].Rank != 3 || got[1].Ranker() != "v9" || got[0].Ranker() != "poly" ||
		got[1].Subject() != "u1" || got[0].Subject() != "sky" || !got[1].ServerTime.Equal(now) || got[1].ServerTime.Location() != time.UTC ||
		!got[1].ClientTime.Equal(time.Date(2026, 1, 2, 3, 4, 6, 5e8, time.UTC)) {
		t.Fatalf("decoded %+v", got)
	}
}

func TestDecodeRefusesNamingTheEvent(t *testing.T) {
	good := `{"kind":"impression","surface":"search","query":"sky","item":"a","rank":1,"rerank":"poly","session":"s","client_time":"2026-01-02T03:04:05Z"}`
	with := func(old, new string) string {
		return `{"events": [` + good + `,` + strings.Replace(good, old, new, 1) + `]}`
	}
	many := `{"events": [` + strings.Repeat(good+",", MaxBatch) + good + `]}`
	for _, c := range []struct{ body, want string }{
		{with(`"impression"`, `"view"`), `event 1: unknown kind "view"`},
		{with(`"rank":1`, `"rank":0`), "event 1: rank 0"},
		{with(`"rank":1`, `"rank":1.5`), "event 1: json"},
		{with(`"rank":1`, `"rank":NaN`), "the body must be"},
		{with(`"session":"s"`, `"session":""`), `event 1: "session" is missing`},
		{with(`,"session":"s"`, ``), `event 1: "session" is missing`},
		{with(`"surface":"search"`, `"surface":"mail"`), `event 1: unknown surface "mail"`},
		{with(`"query":"sky"`, `"user":"u"`), `event 1: a search event has "query"`},
		{with(`,"client_time":"2026-01-02T03:04:05Z"`, ``), `event 1: "client_time" is missing`},
		{with(`"rerank":"poly"`, `"rerank":"poly","colour":1`), `event 1: json: unknown field "colour"`},
		{with(`"rerank":"poly"`, `"rerank":"poly","server_time":"2026-01-02T03:04:05Z"`), `event 1: "server_time" is the server's`},
		{with(`"item":"a"`, `"item":"`+strings.Repeat("é", MaxIDLen+1)+`"`), `event 1: "item" is 257 characters`},
		{with(`"item":"a"`, `"item":"a\u0000"`), `event 1: "item" holds invalid UTF-8 or a control character`},
		{many, "101 events: at most 100"},
		{`{"events": []}`, `"events" is missing or empty`},
		{`{"events": [` + good + `]} {}`, "more than one JSON value"},
		{`[` + good + `]`, "the body must be"},
	} {
		got, err := Decode(strings.NewReader(c.body), t0)
		if !errors.Is(err, ErrEvent) || !strings.Contains(err.Error(), c.want) || got != nil {
			t.Errorf("body %.80s...: %v, want an error with %q and no events", c.body, err, c.want)
		}
	}
}

// fill appends n events in batches of 10, item i at server time t0+i ms.
func fill(t *testing.T, l Log, from, n int) {
	t.Helper()
	for i := from; i < from+n; i += 10 {
		batch := make([]Event, 0, 10)
		for j := i; j < min(i+10, from+n); j++ {
			batch = append(batch, searchEvent(j))
		}
		if err := l.Append(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
}

// items returns the item ids of l, oldest first.
func items(t *testing.T, l Log) []string {
	t.Helper()
	all, err := All(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(all))
	for i, e := range all {
		out[i] = e.Item
	}
	return out
}

// checkNewest checks that got is the newest of the items 0..n-1, in order,
// between lo and hi of them.
func checkNewest(t *testing.T, got []string, n, lo, hi int) {
	t.Helper()
	if len(got) < lo || len(got) > hi {
		t.Fatalf("kept %d events, want %d..%d", len(got), lo, hi)
	}
	for i, id := range got {
		if want := fmt.Sprintf("img%d", n-len(got)+i); id != want {
			t.Fatalf("event %d of the kept is %s, want %s (the newest, in order)", i, id, want)
		}
	}
}

func TestFileLogKeepsTheCountBoundAndRestarts(t *testing.T) {
	dir := t.TempDir()
	ret := Retention{MaxEvents: 2500}
	l, err := OpenFileLog(dir, ret)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, l, 0, 6000)
	// Segments of 1000: 6 written, the oldest dropped while the rest hold 2500.
	checkNewest(t, items(t, l), 6000, 3000, 3000)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = OpenFileLog(dir, ret)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkNewest(t, items(t, l), 6000, 3000, 3000)
	fill(t, l, 6000, 10)
	checkNewest(t, items(t, l), 6010, 3010, 3010)
	if segs, _ := filepath.Glob(filepath.Join(dir, "events-*.jsonl")); len(segs) != 4 {
		t.Fatalf("%d segments, want 4: %v", len(segs), segs)
	}
}

func TestFileLogDropsOldSegments(t *testing.T) {
	l, err := OpenFileLog(t.TempDir(), Retention{MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	old := make([]Event, 0, 1000)
	for i := range 1000 { // a segment of two hours ago
		e := searchEvent(i)
		e.ServerTime = time.Now().Add(-2 * time.Hour)
		old = append(old, e)
	}
	if err := l.Append(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	if n := len(items(t, l)); n != 1000 {
		t.Fatalf("%d events before the next append, want 1000 (the segment appended to is never dropped)", n)
	}
	fresh := searchEvent(1000)
	fresh.ServerTime = time.Now()
	if err := l.Append(context.Background(), []Event{fresh}); err != nil {
		t.Fatal(err)
	}
	if got := items(t, l); len(got) != 1 || got[0] != "img1000" {
		t.Fatalf("kept %v, want only the fresh event", got)
	}
}

func TestFileLogCutsATornBatch(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenFileLog(dir, Retention{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, l, 0, 3)
	l.Close()
	seg := filepath.Join(dir, "events-000000000001.jsonl")
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"kind":"click","surf`) // a crash mid-write
	f.Close()
	if l, err = OpenFileLog(dir, Retention{}); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fill(t, l, 3, 1)
	checkNewest(t, items(t, l), 4, 4, 4)
}

func TestRetentionRefusesNegativeBounds(t *testing.T) {
	if _, err := OpenFileLog(t.TempDir(), Retention{MaxEvents: -1}); err == nil {
		t.Fatal("a negative count bound was taken")
	}
	if _, err := NewRedisLog(nil, "", Retention{MaxAge: -time.Second}); err == nil {
		t.Fatal("a negative age bound was taken")
	}
}

func TestRedisLogKeepsTheCountBound(t *testing.T) {
	redistest.EachServer(t, func(t *testing.T, url string) {
		r, err := cache.OpenRedis(context.Background(), url, "")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		l, err := NewRedisLog(r.Client(), redistest.Prefix(t), Retention{MaxEvents: 500})
		if err != nil {
			t.Fatal(err)
		}
		fill(t, l, 0, 3000)
		// MAXLEN ~ keeps at least the bound, and at most a stream node more.
		checkNewest(t, items(t, l), 3000, 500, 600)
	})
}

func TestRedisLogDropsOldEvents(t *testing.T) {
	s := redistest.Start(t)
	r, err := cache.OpenRedis(context.Background(), s.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rc := r.Client()
	ctx := context.Background()
	// Entries of an hour ago, by their ids (the stream's clock).
	past := time.Now().Add(-time.Hour).UnixMilli()
	for i := range 250 {
		if err := rc.XAdd(ctx, &redis.XAddArgs{Stream: RedisKey, ID: fmt.Sprintf("%d-%d", past, i), Values: []any{"e", `{}`}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	l, err := NewRedisLog(rc, "", Retention{MaxAge: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, l, 0, 10)
	// MINID ~ drops whole nodes of old entries (100 entries each by default).
	if n := rc.XLen(ctx, RedisKey).Val(); n < 10 || n > 110 {
		t.Fatalf("%d entries kept, want the 10 new and at most a node of the old", n)
	}
}

func TestRedisLogSurvivesARestart(t *testing.T) {
	s := redistest.StartAOF(t)
	open := func() (*cache.Redis, Log) {
		r, err := cache.OpenRedis(context.Background(), s.URL, "")
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewRedisLog(r.Client(), "", Retention{MaxEvents: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return r, l
	}
	r, l := open()
	fill(t, l, 0, 30)
	r.Close()
	s.Stop()
	s.Restart()
	r, l = open()
	defer r.Close()
	checkNewest(t, items(t, l), 30, 30, 30)
}

func TestParseRetention(t *testing.T) {
	for in, want := range map[string]Retention{
		"1000": {MaxEvents: 1000}, "720h": {MaxAge: 720 * time.Hour}, "500, 90m": {MaxEvents: 500, MaxAge: 90 * time.Minute},
		"1h,20": {MaxEvents: 20, MaxAge: time.Hour}, "0": {},
	} {
		if got, err := ParseRetention(in); err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ten", "5,6", "1h,2h", "-3", "-1h", "1000,"} {
		if got, err := ParseRetention(in); err == nil {
			t.Errorf("%q: %+v, want an error", in, got)
		}
	}
}
