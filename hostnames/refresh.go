package hostnames

import (
	"context"
	"sync"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/targets"
)

// Target refresh. A target whose resolver never answers costs its
// resolution the resolver's timeout; these bound how much of a node's
// refresh work such targets can hold (see fairPool).
const (
	refreshParallel = 16               // resolutions at once on a node
	refreshShare    = 4                // of which one account may hold
	refreshList     = 500              // due targets read at a time
	refreshEvery    = time.Second      // TTLs are whole seconds: soon enough
	refreshDeadline = 10 * time.Second // a resolution, every resolver tried
	refreshRetry    = 30 * time.Second // after a resolution that failed
)

// refreshTargets resolves the targets whose TTL has run out until ctx ends,
// as fairPool allows; it reads the due list every refreshEvery and starts
// more from it whenever a resolution ends.
func (s *Watcher) refreshTargets(ctx context.Context) {
	if s.resolver == nil || len(s.resolver.Servers) == 0 {
		return
	}
	pool := newFairPool(refreshParallel, refreshShare)
	// Room for every resolution in flight: a worker never waits to report.
	done := make(chan *storage.Hostname, refreshParallel)
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(refreshEvery)
	defer t.Stop()
	var queue []storage.Hostname
	for list := true; ; {
		if list {
			queue, list = s.targetsDue(ctx), false
		}
		var started []storage.Hostname
		started, queue = pool.take(queue)
		for i := range started {
			h := &started[i]
			wg.Go(func() {
				s.refreshTarget(ctx, h)
				done <- h
			})
		}
		select {
		case <-ctx.Done():
			return
		case h := <-done:
			pool.release(h)
		case <-t.C:
			list = true
		}
	}
}

func (s *Watcher) targetsDue(ctx context.Context) []storage.Hostname {
	hs, err := s.store.Reader().TargetsDueFair(ctx, time.Now().UnixMilli(), refreshList)
	if err != nil && ctx.Err() == nil {
		s.log.Warn("listing targets to refresh failed", "err", err)
	}
	return hs
}

// refreshTarget resolves h's target again. A target that now answers only
// with addresses of the other class, or does not answer, leaves the
// hostname on its last addresses.
func (s *Watcher) refreshTarget(ctx context.Context, h *storage.Hostname) {
	seenAt, now := h.UpdatedAt, time.Now()
	next := now.Add(refreshRetry) // when resolution fails
	rctx, cancel := context.WithTimeout(ctx, refreshDeadline)
	ans, err := s.resolver.Resolve(rctx, h.Target)
	cancel()
	changed := false
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return // shutting down: the next start resolves it
		}
		s.log.Warn("refreshing a target failed; keeping the last addresses", "hostname", h.Name, "target", h.Target, "err", err)
	default:
		next = now.Add(ans.TTL)
		addrs := targets.OfClass(ans.Addrs, ClassOf(h))
		if len(addrs) == 0 {
			s.log.Warn("target answers only with addresses of the other class; refused", "hostname", h.Name,
				"target", h.Target, "class", ClassOf(h), "answer", ans.Addrs)
			break
		}
		changed = repoint(h, addrs, h.Target, next.UnixMilli(), now)
	}
	h.RefreshAt = next.UnixMilli()
	_, err = s.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if ok, err := tx.UpdateHostnameIf(ctx, h, seenAt); err != nil || !ok || !changed {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	if err != nil && ctx.Err() == nil {
		s.log.Warn("storing a target refresh failed", "hostname", h.Name, "err", err)
	}
}
