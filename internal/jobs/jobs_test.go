package jobs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSpec(t *testing.T) {
	good := map[string]Spec{
		`{"target":"social"}`: {Target: TargetSocial},
		`{"target":"all","social":"/data/fb","learner":"mkl-align","queries":50}`: {Target: TargetAll, Social: "/data/fb", Learner: "mkl-align", Queries: 50},
		`{"target":"search","queries":10}`:                                        {Target: TargetSearch, Queries: 10},
	}
	for body, want := range good {
		got, err := ParseSpec([]byte(body))
		if err != nil || got != want {
			t.Errorf("ParseSpec(%s) = %+v, %v; want %+v", body, got, err, want)
		}
	}
	bad := map[string]string{
		`{"target":"images"}`:                   "unknown target",
		`{}`:                                    "target is required",
		`{"target":"social","extra":1}`:         "unknown field",
		`{"target":"social"} {"target":"all"}`:  "one JSON object",
		`not json`:                              "JSON object",
		`{"target":"social","queries":5}`:       "queries is for search",
		`{"target":"search","social":"/x"}`:     "search job does not read",
		`{"target":"search","queries":-1}`:      "between 1 and",
		`{"target":"search","queries":1000001}`: "between 1 and",
		`{"target":"social","learner":"../x"}`:  "not a learner name",
	}
	for body, msg := range bad {
		_, err := ParseSpec([]byte(body))
		if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseSpec(%s) = %v; want ErrSpec saying %q", body, err, msg)
		}
	}
}

func TestDispatch(t *testing.T) {
	var ran []string // target:id
	work := func(name string, err error) Handler {
		return func(ctx context.Context, id string, spec Spec, progress func(string, float64)) (string, error) {
			progress("start", 0)
			progress("end", 1)
			ran = append(ran, name+":"+id)
			return id, err
		}
	}
	type report struct {
		stage string
		f     float64
	}
	var seen []report
	progress := func(stage string, f float64) { seen = append(seen, report{stage, f}) }

	v, err := Dispatch(work("social", nil), work("search", nil))(context.Background(), "j1", Spec{Target: TargetAll}, progress)
	if err != nil || v != "j1 j1" {
		t.Fatalf("all: %q, %v; want both versions", v, err)
	}
	if want := []string{"social:j1", "search:j1"}; !slices.Equal(ran, want) {
		t.Errorf("all ran %v, want %v", ran, want)
	}
	want := []report{{"social: start", 0}, {"social: end", 0.5}, {"search: start", 0.5}, {"search: end", 1}}
	if !slices.Equal(seen, want) {
		t.Errorf("all reported %v, want %v", seen, want)
	}

	ran = nil
	boom := errors.New("boom")
	if _, err := Dispatch(work("social", boom), work("search", nil))(context.Background(), "j2", Spec{Target: TargetAll}, progress); !errors.Is(err, boom) {
		t.Errorf("all with social failing: %v, want boom", err)
	}
	if len(ran) != 1 {
		t.Errorf("search ran after social failed: %v", ran)
	}

	ran = nil
	_, err = Dispatch(work("social", nil), nil)(context.Background(), "j3", Spec{Target: TargetSearch}, progress)
	if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), `"search" is not available`) || len(ran) != 0 {
		t.Errorf("search without a search handler: %v (ran %v)", err, ran)
	}
	if _, err := Dispatch(nil, nil)(context.Background(), "j4", Spec{Target: "nope"}, progress); !errors.Is(err, ErrSpec) {
		t.Errorf("unknown target: %v", err)
	}
}

func TestLocalRunsOneAtATimeInOrder(t *testing.T) {
	w := &work{hold: make(chan struct{})}
	q := NewLocal(w.handle, 0)
	defer q.Close()
	ctx := context.Background()
	var ids []string
	for range 3 {
		j, err := q.Enqueue(ctx, Spec{Target: TargetSocial})
		if err != nil || j.Status != Queued {
			t.Fatalf("enqueue: %+v, %v", j, err)
		}
		ids = append(ids, j.ID)
	}
	for i, id := range ids {
		j := waitFor(t, q, id, 5*time.Second, "loading", stage("loading"))
		if j.Fraction != 0.25 || j.Attempts != 1 || j.StartedAt.IsZero() {
			t.Errorf("running job: %+v", j)
		}
		for _, later := range ids[i+1:] {
			if j, _ := q.Get(ctx, later); j.Status != Queued {
				t.Errorf("job %d is %s while job %d runs", slices.Index(ids, later), j.Status, i)
			}
		}
		w.hold <- struct{}{}
		j = waitFor(t, q, id, 5*time.Second, "succeeded", status(Succeeded))
		if j.Version != id || j.Fraction != 1 || j.FinishedAt.Before(j.StartedAt) {
			t.Errorf("finished job: %+v", j)
		}
	}
	runs, published := w.counts()
	if !slices.Equal(runs, ids) || !slices.Equal(published, ids) {
		t.Errorf("runs %v, published %v; want both %v", runs, published, ids)
	}
	list, _ := q.List(ctx, 2)
	if len(list) != 2 || list[0].ID != ids[2] || list[1].ID != ids[1] {
		t.Errorf("List(2) = %v, want the last two, most recent first", list)
	}
}

func TestLocalCancel(t *testing.T) {
	w := &work{hold: make(chan struct{})}
	q := NewLocal(w.handle, 0)
	defer q.Close()
	ctx := context.Background()
	running, _ := q.Enqueue(ctx, Spec{Target: TargetSocial})
	queued, _ := q.Enqueue(ctx, Spec{Target: TargetSearch})
	waitFor(t, q, running.ID, 5*time.Second, "running", stage("loading"))

	j, err := q.Cancel(ctx, queued.ID)
	if err != nil || j.Status != Cancelled || j.FinishedAt.IsZero() {
		t.Fatalf("cancel queued: %+v, %v", j, err)
	}
	j, err = q.Cancel(ctx, running.ID)
	if err != nil || j.Status != Cancelled || !strings.Contains(j.Error, "context canceled") || j.Version != "" {
		t.Fatalf("cancel running: %+v, %v", j, err)
	}
	runs, published := w.counts()
	if !slices.Equal(runs, []string{running.ID}) || len(published) != 0 {
		t.Errorf("runs %v, published %v: the queued job must never run, the running one publish nothing", runs, published)
	}
	if _, err := q.Cancel(ctx, running.ID); !errors.Is(err, ErrFinished) {
		t.Errorf("cancel a cancelled job: %v, want ErrFinished", err)
	}
	if _, err := q.Cancel(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("cancel unknown: %v, want ErrNotFound", err)
	}
	if _, err := q.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("get unknown: %v, want ErrNotFound", err)
	}
}

func TestLocalFailureHistoryAndClose(t *testing.T) {
	w := &work{fail: errors.New("no data")}
	q := NewLocal(w.handle, 2)
	ctx := context.Background()
	if _, err := q.Enqueue(ctx, Spec{Target: "images"}); !errors.Is(err, ErrSpec) {
		t.Fatalf("bad spec: %v", err)
	}
	var ids []string
	for range 3 {
		j, _ := q.Enqueue(ctx, Spec{Target: TargetSocial})
		ids = append(ids, j.ID)
	}
	for _, id := range ids[1:] {
		j := waitFor(t, q, id, 5*time.Second, "failed", status(Failed))
		if j.Error != "no data" || j.Version != "" {
			t.Errorf("failed job: %+v", j)
		}
	}
	if _, err := q.Get(ctx, ids[0]); !errors.Is(err, ErrNotFound) {
		t.Errorf("the oldest of 3 finished jobs with keep 2: %v, want forgotten", err)
	}
	if list, _ := q.List(ctx, 10); len(list) != 2 {
		t.Errorf("List after forgetting: %d jobs, want 2", len(list))
	}

	w.hold, w.fail = make(chan struct{}), nil
	running, _ := q.Enqueue(ctx, Spec{Target: TargetSocial})
	queued, _ := q.Enqueue(ctx, Spec{Target: TargetSocial})
	waitFor(t, q, running.ID, 5*time.Second, "running", stage("loading"))
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{running.ID, queued.ID} {
		if j, _ := q.Get(ctx, id); j.Status != Cancelled {
			t.Errorf("after Close: %+v, want cancelled", j)
		}
	}
	if _, err := q.Enqueue(ctx, Spec{Target: TargetSocial}); !errors.Is(err, ErrClosed) {
		t.Errorf("enqueue after Close: %v, want ErrClosed", err)
	}
}
