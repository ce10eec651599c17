package hostnames

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// Observer tells whether every nameserver serves a name with addrs.
type Observer interface {
	Serves(ctx context.Context, name string, addrs []netip.Addr) bool
}

// Watch runs the [P2] background work of a node until ctx ends: pending
// hostnames become live once every nameserver is observed serving them
// (retried with back-off), and targets are resolved again when their TTL
// runs out. The two run apart, so that targets whose resolver hangs never
// hold back a hostname going live, nor probes a refresh. Every node may run
// it: each change is written only if the row is still as it was read, so
// two nodes never undo each other.
func (s *Watcher) Watch(ctx context.Context, obs Observer, tick time.Duration) {
	var wg sync.WaitGroup
	wg.Go(func() { s.probePending(ctx, obs, tick) })
	wg.Go(func() { s.refreshTargets(ctx) })
	wg.Wait()
}

// probePending confirms pending hostnames every tick until ctx ends.
func (s *Watcher) probePending(ctx context.Context, obs Observer, tick time.Duration) {
	retry := map[string]*backoff{}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		s.confirmPending(ctx, obs, retry)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// backoff spaces the probes of one pending hostname: 0.2 s, doubling to 10 s.
type backoff struct {
	updatedAt int64 // the version being probed; a new one starts afresh
	next      time.Time
	wait      time.Duration
}

const (
	firstRetry = 200 * time.Millisecond
	lastRetry  = 10 * time.Second
)

// probeParallel bounds the hostnames probed at once: a nameserver that is
// down costs each probe its timeout, and those must not add up.
const probeParallel = 32

func (s *Watcher) confirmPending(ctx context.Context, obs Observer, retry map[string]*backoff) {
	hs, err := s.store.Reader().HostnamesWithStatus(ctx, storage.StatusPending, 500)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("listing pending hostnames failed", "err", err)
		}
		return
	}
	now := time.Now()
	seen := map[string]bool{}
	var due []*storage.Hostname
	for i := range hs {
		h := &hs[i]
		seen[h.ID] = true
		b := retry[h.ID]
		if b == nil || b.updatedAt != h.UpdatedAt {
			b = &backoff{updatedAt: h.UpdatedAt, wait: firstRetry}
			retry[h.ID] = b
		}
		if !now.Before(b.next) {
			due = append(due, h)
		}
	}
	for id := range retry {
		if !seen[id] {
			delete(retry, id)
		}
	}
	served := make([]bool, len(due))
	sem := make(chan struct{}, probeParallel)
	var wg sync.WaitGroup
	for i, h := range due {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			served[i] = obs.Serves(ctx, h.Name, h.ServedAddrs())
		})
	}
	wg.Wait()
	for i, h := range due {
		if !served[i] {
			b := retry[h.ID]
			b.next, b.wait = time.Now().Add(b.wait), min(2*b.wait, lastRetry)
			continue
		}
		s.markLive(ctx, h)
		delete(retry, h.ID)
	}
}

// markLive writes h live unless it changed since it was read.
func (s *Watcher) markLive(ctx context.Context, h *storage.Hostname) {
	seenAt := h.UpdatedAt
	h.Status, h.UpdatedAt = storage.StatusLive, time.Now().UnixMilli()
	_, err := s.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if ok, err := tx.UpdateHostnameIf(ctx, h, seenAt); err != nil || !ok {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	if err != nil && ctx.Err() == nil {
		s.log.Warn("marking a hostname live failed", "hostname", h.Name, "err", err)
	}
}
