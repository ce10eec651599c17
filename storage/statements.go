package storage

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hostmint/hostmint/storage/pgwire"
	"github.com/uptrace/bun"
)

// CountStatements counts, from now on, every statement this store sends
// (BEGIN and COMMIT included) on a caller's behalf: the round trips a
// benchmark or a test holds a write path to. The NOTIFY that announces
// commits is left out: one goroutine sends it after the fact, one for any
// number of commits that land while the previous one is in flight. So are,
// on PostgreSQL, the statements that go with the next one (storage/pgwire),
// a read-write transaction's BEGIN among them (other transactions' BEGIN
// is a round trip of its own there, and not counted either), and a
// write's COMMIT, which goes with its last statement.
func (s *Store) CountStatements() *atomic.Int64 {
	n := new(atomic.Int64)
	s.counters.mu.Lock()
	defer s.counters.mu.Unlock()
	ns := append(slices.Clone(s.counters.load()), n)
	s.counters.all.Store(&ns)
	return n
}

// statementCounter is the query hook CountStatements' counters count
// through. It is added when the store opens, before any of the store's
// goroutines sends a statement: bun's hooks may not be added while
// queries run (the notifier's would race with it).
type statementCounter struct {
	mu        sync.Mutex // adding a counter
	all       atomic.Pointer[[]*atomic.Int64]
	beginSent bool // BEGIN is a statement of its own
}

func (c *statementCounter) load() []*atomic.Int64 {
	if p := c.all.Load(); p != nil {
		return *p
	}
	return nil
}

func (c *statementCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (c *statementCounter) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	ns := c.load()
	if len(ns) == 0 || ctx.Value(uncounted{}) != nil || !c.beginSent && e.Query == "BEGIN" || carried(ctx, e) {
		return
	}
	for _, n := range ns {
		n.Add(1)
	}
}

// carried tells a COMMIT that went with the transaction's last statement
// (storage/pgwire): bun reports it when the transaction ends.
func carried(ctx context.Context, e *bun.QueryEvent) bool {
	o := pgwire.BegunOf(ctx)
	return e.Query == "COMMIT" && o != nil && o.Committed
}

// uncounted marks the context of a statement no caller waits for.
type uncounted struct{}
