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
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		n, err := s.RecordExpiries(ctx, time.Now())
		expiriesRecorded.Add(float64(n))
		if err != nil {
			if ctx.Err() == nil && !failing {
				log.Warningf("recording idle expiries for secondaries failed; trying again every %s: %v", interval, err)
			}
			failing = true
		} else {
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
