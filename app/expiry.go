package app

import (
	"context"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// recordExpiries records passed idle expiries as changes every interval
// until ctx ends, so that secondaries drop the names ([P1]). Every node
// runs it; a pass that finds another's work done records nothing.
func recordExpiries(ctx context.Context, s *storage.Store, interval time.Duration) {
	every(ctx, interval, "recording idle expiries for secondaries", func() error {
		n, err := s.RecordExpiries(ctx, time.Now())
		expiriesRecorded.Add(float64(n))
		return err
	})
}
