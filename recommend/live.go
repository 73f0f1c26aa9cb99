package recommend

import (
	"context"

	"github.com/kernelrank/kernelrank/social"
)

// Apply makes ds, the social data after a change to the users changed,
// the data served and trained on next; it trains nothing. A minimal
// version, replaced by the fold-in.
func (s *Service) Apply(_ context.Context, ds *social.Dataset, _ []string) error {
	s.data.Store(&data{ds: ds, version: ds.Version(), all: newRelations(ds, ds.FullView())})
	return nil
}
