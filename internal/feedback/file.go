package feedback

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// FileLog is a Log in a directory: JSON Lines segment files
// (events-000000000001.jsonl, ...), appended to one write a batch, a new
// segment begun when the current one holds SegmentEvents or, with an age
// bound, when its first event is older than a tenth of MaxAge. Retention
// drops whole segments, oldest first: a segment whose newest event is
// older than MaxAge, and the oldest while the others still hold
// MaxEvents, so the log keeps at least MaxEvents and at most one segment
// more, and nothing older than 1.1 MaxAge once a newer batch came. One process
// writes a directory. A batch torn by a crash (a last line without its
// newline) is cut off when the log is opened.
type FileLog struct {
	dir  string
	ret  Retention
	per  int64 // events a segment holds
	mu   sync.Mutex
	segs []segment // oldest first; the last is appended to
	cur  *os.File
}

type segment struct {
	seq            int64
	events         int64
	oldest, newest time.Time // server times of its first and last events
}

// SegmentEvents is how many events a segment of a FileLog holds: a tenth
// of the count bound (so a log keeps at most 10% more than it), at least
// 1000; 100000 without a count bound.
func SegmentEvents(ret Retention) int64 {
	if ret.MaxEvents == 0 {
		return 100000
	}
	return max(ret.MaxEvents/10, 1000)
}

// OpenFileLog opens (creating it if need be) the log in dir.
func OpenFileLog(dir string, ret Retention) (*FileLog, error) {
	if err := ret.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	names, err := filepath.Glob(filepath.Join(dir, "events-*.jsonl"))
	if err != nil {
		return nil, err
	}
	l := &FileLog{dir: dir, ret: ret, per: SegmentEvents(ret)}
	for _, name := range names {
		var seq int64
		if _, err := fmt.Sscanf(filepath.Base(name), "events-%d.jsonl", &seq); err != nil {
			continue // not a segment of ours
		}
		l.segs = append(l.segs, segment{seq: seq})
	}
	slices.SortFunc(l.segs, func(a, b segment) int { return cmp.Compare(a.seq, b.seq) })
	for i := range l.segs {
		if err := l.count(&l.segs[i], i == len(l.segs)-1); err != nil {
			return nil, err
		}
	}
	if len(l.segs) == 0 {
		l.segs = []segment{{seq: 1}}
	}
	if err := l.openCurrent(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *FileLog) path(seq int64) string {
	return filepath.Join(l.dir, fmt.Sprintf("events-%012d.jsonl", seq))
}

// count reads a segment's events and newest time; last: cut a torn tail.
func (l *FileLog) count(s *segment, last bool) error {
	b, err := os.ReadFile(l.path(s.seq))
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	if end := bytes.LastIndexByte(b, '\n') + 1; end < len(b) {
		if !last {
			return fmt.Errorf("events: %s: a line without its newline before the last segment", l.path(s.seq))
		}
		if err := os.Truncate(l.path(s.seq), int64(end)); err != nil {
			return fmt.Errorf("events: cutting a torn batch: %w", err)
		}
		b = b[:end]
	}
	s.events = int64(bytes.Count(b, []byte{'\n'}))
	if s.events > 0 {
		lines := bytes.Split(bytes.TrimSuffix(b, []byte{'\n'}), []byte{'\n'})
		var e Event
		if err := json.Unmarshal(lines[len(lines)-1], &e); err != nil {
			return fmt.Errorf("events: %s line %d: %w", l.path(s.seq), s.events, err)
		}
		s.newest = e.ServerTime
		if err := json.Unmarshal(lines[0], &e); err != nil {
			return fmt.Errorf("events: %s line 1: %w", l.path(s.seq), err)
		}
		s.oldest = e.ServerTime
	}
	return nil
}

func (l *FileLog) openCurrent() error {
	f, err := os.OpenFile(l.path(l.segs[len(l.segs)-1].seq), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	l.cur = f
	return nil
}

// Append writes events in one write to the current segment (beginning a
// new one first if it is full), then applies the retention.
func (l *FileLog) Append(ctx context.Context, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil {
		return fmt.Errorf("events: %s is closed", l.dir)
	}
	now := time.Now()
	if cur := l.segs[len(l.segs)-1]; cur.events >= l.per || cur.events > 0 && l.ret.MaxAge > 0 && cur.oldest.Before(now.Add(-l.ret.MaxAge/10)) {
		if err := l.cur.Close(); err != nil {
			return fmt.Errorf("events: %w", err)
		}
		l.segs = append(l.segs, segment{seq: l.segs[len(l.segs)-1].seq + 1})
		if err := l.openCurrent(); err != nil {
			return err
		}
	}
	if _, err := l.cur.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	last := &l.segs[len(l.segs)-1]
	if last.events == 0 {
		last.oldest = events[0].ServerTime
	}
	last.events += int64(len(events))
	last.newest = events[len(events)-1].ServerTime
	return l.trim(now)
}

// trim drops the oldest segments (never the current one) the retention
// no longer needs.
func (l *FileLog) trim(now time.Time) error {
	var total int64
	for _, s := range l.segs {
		total += s.events
	}
	for len(l.segs) > 1 {
		old := l.segs[0]
		tooMany := l.ret.MaxEvents > 0 && total-old.events >= l.ret.MaxEvents
		tooOld := l.ret.MaxAge > 0 && old.newest.Before(now.Add(-l.ret.MaxAge))
		if !tooMany && !tooOld {
			return nil
		}
		if err := os.Remove(l.path(old.seq)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("events: %w", err)
		}
		total -= old.events
		l.segs = l.segs[1:]
	}
	return nil
}

// Scan reads the segments, oldest first.
func (l *FileLog) Scan(ctx context.Context, f func(Event) error) error {
	l.mu.Lock()
	segs := slices.Clone(l.segs)
	l.mu.Unlock()
	for _, s := range segs {
		if err := l.scanSegment(ctx, s, f); err != nil {
			return err
		}
	}
	return nil
}

func (l *FileLog) scanSegment(ctx context.Context, s segment, f func(Event) error) error {
	file, err := os.Open(l.path(s.seq))
	if os.IsNotExist(err) {
		return nil // trimmed since the listing
	} else if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	defer file.Close()
	r := bufio.NewReader(file)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return nil // a partial line is a batch being written
		} else if err != nil {
			return fmt.Errorf("events: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("events: %s line %d: %w", l.path(s.seq), n, err)
		}
		if err := f(e); err != nil {
			return err
		}
	}
}

// Where is the log's directory.
func (l *FileLog) Where() string { return l.dir }

// Close closes the current segment.
func (l *FileLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil {
		return nil
	}
	err := l.cur.Close()
	l.cur = nil
	return err
}
