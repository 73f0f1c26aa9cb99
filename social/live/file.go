package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/kernelrank/kernelrank/social"
)

// The files of a local store: the snapshot (a header line {"n": N}, then
// one Op a line: the state after entry N) and the log (one numbered entry
// a line). A line is written whole and fsynced before a write is answered;
// a line cut short by a crash is dropped on open, and entries the snapshot
// holds (a crash between writing it and emptying the log) are skipped.
const (
	snapshotFile = "snapshot.jsonl"
	logFile      = "log.jsonl"
)

// fileLog is the log of a store without Redis.
type fileLog struct {
	dir     string
	lock    *os.File // held (flock) while the store is open
	n       int64    // number of the last entry
	f       *os.File // the log, appended to
	size    int64    // its length: a failed append is cut back to it
	entries int64    // entries in the log
}

// OpenDir opens the store kept in dir (created when missing), with every
// write made there before.
func OpenDir(dir string, o Options) (*Store, error) {
	s := newStore(o)
	s.life = context.Background()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("live: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("live: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("live: another process holds the social store in %s (%v): one process opens it at a time", dir, err)
	}
	fl := &fileLog{dir: dir, lock: lock}
	if err := fl.open(s.st); err != nil {
		lock.Close()
		return nil, err
	}
	s.file = fl
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.commit(nil); err != nil {
		fl.close()
		return nil, err
	}
	return s, nil
}

// open loads the files into st and opens the log for appending after its
// last whole entry.
func (fl *fileLog) open(st *state) error {
	if err := fl.load(st); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(fl.dir, logFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("live: %w", err)
	}
	if err := f.Truncate(fl.size); err == nil {
		_, err = f.Seek(fl.size, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("live: %w", err)
	}
	fl.f = f
	return nil
}

// ReadDir returns the data set of the store kept in dir, read while
// another process may hold it open (its files change by whole lines and
// renames); ok is false when dir holds no store.
func ReadDir(dir string) (ds *social.Dataset, ok bool, err error) {
	if _, err := os.Stat(filepath.Join(dir, logFile)); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	st := newState()
	if err := (&fileLog{dir: dir}).load(st); err != nil {
		return nil, false, err
	}
	ds, err = st.dataset()
	return ds, err == nil, err
}

// load applies the snapshot and the log to st, and sets size to the
// length of the log's whole lines.
func (fl *fileLog) load(st *state) error {
	header := true
	err := eachLine(filepath.Join(fl.dir, snapshotFile), func(line []byte) error {
		if header {
			header = false
			var h fileEntry
			err := json.Unmarshal(line, &h)
			fl.n = h.N
			return err
		}
		var op Op
		if err := json.Unmarshal(line, &op); err != nil {
			return err
		}
		_, _, err := st.apply([]Op{op})
		return err
	})
	if err != nil {
		return fmt.Errorf("live: %s: %w", snapshotFile, err)
	}
	var size int64
	err = eachLine(filepath.Join(fl.dir, logFile), func(line []byte) error {
		var e fileEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return err
		}
		size += int64(len(line)) + 1
		if e.N <= fl.n {
			return nil // in the snapshot already
		}
		if _, _, err := st.apply(e.Ops); err != nil {
			return err
		}
		fl.n = e.N
		fl.entries++
		return nil
	})
	if err != nil {
		return fmt.Errorf("live: %s, entry %d: %w", logFile, fl.entries+1, err)
	}
	fl.size = size
	return nil
}

// eachLine calls fn with every newline-terminated line of the file (none
// when it is missing); a last line without its newline was cut short and
// is left out.
func eachLine(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(bytes.TrimSuffix(line, []byte("\n"))); err != nil {
			return err
		}
	}
}

// append writes the entries, one a line, and syncs them; on failure the
// log is cut back to its last whole entry.
func (fl *fileLog) append(entries ...[]Op) error {
	var b []byte
	for k, ops := range entries {
		line, err := json.Marshal(fileEntry{N: fl.n + int64(k) + 1, Ops: ops})
		if err != nil {
			return err
		}
		b = append(append(b, line...), '\n')
	}
	_, err := fl.f.Write(b)
	if err == nil {
		err = fl.f.Sync()
	}
	if err != nil {
		if terr := fl.f.Truncate(fl.size); terr == nil {
			fl.f.Seek(fl.size, io.SeekStart)
		}
		return err
	}
	fl.size += int64(len(b))
	fl.entries += int64(len(entries))
	fl.n += int64(len(entries))
	return nil
}

// fileEntry is a line of the log, and the snapshot's header (N alone).
type fileEntry struct {
	N   int64 `json:"n"`
	Ops []Op  `json:"ops,omitempty"`
}

// compact writes the state as the snapshot (a new file, synced, renamed
// over the old one) and empties the log.
func (fl *fileLog) compact(st *state) error {
	tmp := filepath.Join(fl.dir, snapshotFile+".tmp")
	err := writeLines(tmp, fl.n, st.ops())
	if err == nil {
		err = os.Rename(tmp, filepath.Join(fl.dir, snapshotFile))
	}
	if err == nil {
		err = syncDir(fl.dir)
	}
	if err == nil {
		err = fl.f.Truncate(0)
	}
	if err == nil {
		_, err = fl.f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return fmt.Errorf("live: compacting: %w", err)
	}
	fl.size, fl.entries = 0, 0
	return nil
}

func writeLines(path string, n int64, ops []Op) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	err = enc.Encode(fileEntry{N: n})
	for _, op := range ops {
		if err != nil {
			break
		}
		err = enc.Encode(op)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (fl *fileLog) close() {
	fl.f.Close()
	fl.lock.Close()
}
