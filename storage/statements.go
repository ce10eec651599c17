package storage

import (
	"context"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// CountStatements counts, from now on, every statement this store sends
// (BEGIN and COMMIT included) on a caller's behalf: the round trips a
// benchmark or a test holds a write path to. The NOTIFY that announces
// commits is left out: one goroutine sends it after the fact, one for any
// number of commits that land while the previous one is in flight. So are
// the statements that go with the next one (pgconn.go); on PostgreSQL a
// transaction's BEGIN does too, so there it counts one more than the
// round trips.
func (s *Store) CountStatements() *atomic.Int64 {
	n := new(atomic.Int64)
	s.db.AddQueryHook(statementCounter{n})
	return n
}

type statementCounter struct{ n *atomic.Int64 }

func (c statementCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (c statementCounter) AfterQuery(ctx context.Context, _ *bun.QueryEvent) {
	if ctx.Value(uncounted{}) == nil {
		c.n.Add(1)
	}
}

// uncounted marks the context of a statement no caller waits for.
type uncounted struct{}
