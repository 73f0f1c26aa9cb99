package recommend

import (
	"sync"
	"time"
)

// retrainState counts the user changes applied since the last retrain
// of the live data and whether one is running.
type retrainState struct {
	mu      sync.Mutex
	pending int
	running bool
}

// RetrainOnChanges sets ServiceOptions.RetrainAfter and RetrainEvery;
// call it before Start.
func (s *Service) RetrainOnChanges(after int, every time.Duration) {
	s.opts.RetrainAfter, s.opts.RetrainEvery = after, every
}

// countChanges records n applied user changes and starts a retrain when
// ServiceOptions.RetrainAfter are pending.
func (s *Service) countChanges(n int) {
	r := &s.retrains
	r.mu.Lock()
	r.pending += n
	start := s.opts.RetrainAfter > 0 && r.pending >= s.opts.RetrainAfter && !r.running
	r.running = r.running || start
	r.mu.Unlock()
	if start {
		go s.retrainLive()
	}
}

// PendingChanges returns the user changes applied since the last retrain
// of the live data.
func (s *Service) PendingChanges() int {
	s.retrains.mu.Lock()
	defer s.retrains.mu.Unlock()
	return s.retrains.pending
}

// retrainEvery retrains every RetrainEvery while changes are pending,
// until the service's life ends.
func (s *Service) retrainEvery() {
	s.every(s.opts.RetrainEvery, func() {
		r := &s.retrains
		r.mu.Lock()
		start := r.pending > 0 && !r.running
		r.running = r.running || start
		r.mu.Unlock()
		if start {
			s.retrainLive()
		}
	})
}

// retrainLive trains and publishes the default learner's model on the
// live data; the changes applied meanwhile stay pending.
func (s *Service) retrainLive() {
	r := &s.retrains
	r.mu.Lock()
	done := r.pending
	r.mu.Unlock()
	version, err := s.Retrain(s.life, RetrainRequest{}, nil)
	r.mu.Lock()
	r.running = false
	if err == nil {
		r.pending -= done
	}
	r.mu.Unlock()
	if err != nil {
		s.log.Warn("retraining on the live data failed; new and changed users stay folded in", "err", err)
		return
	}
	s.log.Info("retrained on the live data", "version", version, "changes", done)
}
