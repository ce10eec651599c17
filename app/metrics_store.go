package app

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// The metrics read from a store: how current this node's feed is, and the
// certificates. A process may serve several stores (hostname blocks on
// different databases): each node keeps its own figures, and a gauge
// shows the least current of them, so that one store falling behind or
// going down is not hidden by another.

// leastOf is f's smallest value over the open stores, 0 with none.
func leastOf(f func(*node) int64) int64 {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	first, n := true, int64(0)
	for _, b := range nodes {
		if v := f(b); first || v < n {
			first, n = false, v
		}
	}
	return n
}

// mostOf is f's largest value over the open stores, 0 with none.
func mostOf(f func(*node) int64) int64 {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	var n int64
	for _, b := range nodes {
		n = max(n, f(b))
	}
	return n
}

// sumOf is f's sum over the open stores.
func sumOf(f func(*node) int64) int64 {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	var n int64
	for _, b := range nodes {
		n += f(b)
	}
	return n
}

// feedMetrics is a feed consumer that times how late changes arrive.
type feedMetrics struct {
	lastAt atomic.Int64 // when the newest change applied was written (Unix ms)
}

func (m *feedMetrics) Load(ctx context.Context, q storage.Queries) error {
	last, err := q.LastChange(ctx)
	if err != nil || last == 0 {
		return err
	}
	cs, err := q.ChangesAfter(ctx, last-1, nil, 1)
	if err == nil && len(cs) == 1 {
		m.seen(cs[0].CreatedAt)
	}
	return err
}

func (m *feedMetrics) Apply(_ context.Context, _ storage.Queries, cs []storage.Change) error {
	now := time.Now()
	for _, c := range cs {
		feedLag.Observe(max(0, now.Sub(time.UnixMilli(c.CreatedAt)).Seconds()))
		m.seen(c.CreatedAt)
	}
	return nil
}

func (m *feedMetrics) seen(at int64) {
	for {
		cur := m.lastAt.Load()
		if at <= cur || m.lastAt.CompareAndSwap(cur, at) {
			return
		}
	}
}

// certStatsTick is how often the certificate gauges are read from the store.
const certStatsTick = time.Minute

// watchCertificates keeps b's certificate figures current until ctx ends.
func (b *node) watchCertificates(ctx context.Context) {
	t := time.NewTicker(certStatsTick)
	defer t.Stop()
	for {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := b.store.Reader().Certificates(qctx, time.Now().Add(7*24*time.Hour).UnixMilli())
		cancel()
		if err == nil {
			b.certs.Store(&st)
			publishCertificates()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// publishCertificates sets the certificate gauges from every open store.
func publishCertificates() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	counts, soonest, expiring := map[string]int{}, int64(0), 0
	for _, b := range nodes {
		st := b.certs.Load()
		if st == nil {
			continue
		}
		for k, v := range st.ByStatus {
			counts[k] += v
		}
		if st.Soonest > 0 && (soonest == 0 || st.Soonest < soonest) {
			soonest = st.Soonest
		}
		expiring += st.Expiring
	}
	for _, status := range []string{storage.CertRequested, storage.CertIssuing, storage.CertIssued,
		storage.CertFailed, storage.CertRevoking, storage.CertRevoked} {
		certsByStatus.WithLabelValues(status).Set(float64(counts[status]))
	}
	certSoonest.Set(float64(soonest) / 1000)
	certExpiring.Set(float64(expiring))
}
