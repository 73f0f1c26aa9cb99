package replica

import (
	"context"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/changelog"
)

// snapChunk is the number of docs per snapshot key (about 1.5 MB with
// 297-d vectors).
const snapChunk = 500

// writeSnapshot stores the docs walk yields as the snapshot at pos with
// the given version, then makes it the newest, drops the previous one's
// chunks and trims the log below pos.
func (l *Log) writeSnapshot(ctx context.Context, pos Pos, version string, walk func(func(index.Doc) error) error) (Snapshot, error) {
	return changelog.WriteSnapshot(ctx, l.Log, pos, version, snapChunk, walk)
}

// readChunk returns the docs of chunk i of s.
func (l *Log) readChunk(ctx context.Context, s Snapshot, i int) ([]index.Doc, error) {
	return changelog.ReadChunk[index.Doc](ctx, l.Log, s, i)
}
