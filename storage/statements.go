package storage

import (
	"context"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// CountStatements counts, from now on, every statement this store sends
// (BEGIN and COMMIT included): the round trips a benchmark or a test holds
// a write path to.
func (s *Store) CountStatements() *atomic.Int64 {
	n := new(atomic.Int64)
	s.db.AddQueryHook(statementCounter{n})
	return n
}

type statementCounter struct{ n *atomic.Int64 }

func (c statementCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (c statementCounter) AfterQuery(_ context.Context, _ *bun.QueryEvent) { c.n.Add(1) }
