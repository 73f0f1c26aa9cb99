package changelog

import (
	"context"
	"log/slog"
	"time"
)

// Follow calls step until ctx ends, and then, each time step succeeds,
// after (a follower's applying of new entries, then its snapshot). A
// failing step (Redis down) is logged as "applying the <what> log" and
// retried after a pause that doubles from 50 ms to at most 2 s.
func Follow(ctx context.Context, log *slog.Logger, what string, step func(context.Context) error, after func(context.Context)) {
	const first, most = 50 * time.Millisecond, 2 * time.Second
	pause := first
	for ctx.Err() == nil {
		if err := step(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Warn("applying the "+what+" log", "err", err, "retry_in", pause)
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
			pause = min(2*pause, most)
			continue
		}
		pause = first
		after(ctx)
	}
}
