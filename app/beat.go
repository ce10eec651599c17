package app

import (
	"context"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// beat stamps the store's heartbeat every interval until ctx ends, for
// the read-only nodes that measure their lag by it.
func beat(ctx context.Context, s *storage.Store, interval time.Duration) {
	every(ctx, interval, "stamping the heartbeat (read-only nodes report lag until it works)", func() error {
		bctx, cancel := context.WithTimeout(ctx, interval)
		defer cancel()
		return s.Beat(bctx, time.Now())
	})
}

// every runs work at once and then every interval until ctx ends. A
// failure is logged once until work succeeds again: the database being
// down is said elsewhere, and every second would drown it.
func every(ctx context.Context, interval time.Duration, what string, work func() error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		err := work()
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			log.Warningf("%s failed; trying again every %s: %v", what, interval, err)
			failing = true
		case err == nil && failing:
			log.Infof("%s works again", what)
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
