package app

import (
	"context"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// compactChanges deletes the changes keep no longer holds, at start and
// every interval until ctx ends. Every node runs it: a run that finds
// another's work done deletes nothing.
func compactChanges(ctx context.Context, s *storage.Store, keep storage.ChangeRetention, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		start := time.Now()
		if n, err := s.CompactChanges(ctx, keep, start); err != nil {
			if ctx.Err() == nil {
				log.Warningf("compacting the change feed failed; trying again in %s: %v", interval, err)
			}
		} else if n > 0 {
			log.Infof("compacted the change feed: deleted %d changes older than %s outside the newest %d ids in %s",
				n, keep.Age, keep.Count, time.Since(start).Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
