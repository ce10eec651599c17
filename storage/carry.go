package storage

import (
	"context"
	"database/sql"

	"github.com/hostmint/hostmint/storage/pgwire"
	"github.com/uptrace/bun"
)

// withNextCtx is ctx for a statement marked pgwire.WithNext: on PostgreSQL it is
// no round trip, so CountStatements leaves it out.
func (t *Tx) withNextCtx(ctx context.Context) context.Context {
	if t.dialect != Postgres {
		return ctx
	}
	return context.WithValue(ctx, uncounted{}, true)
}

// scanRow scans q's one row into dest, with the transaction's COMMIT
// carried by q when commit is set. Then every error of the query and of
// its COMMIT is read before it returns: the caller's success says the
// transaction committed.
func (t *Tx) scanRow(ctx context.Context, q *bun.SelectQuery, commit bool, dest ...any) error {
	if !commit {
		return q.Scan(ctx, dest...)
	}
	rows, err := t.tx.QueryContext(pgwire.CarryCommit(ctx), q.String())
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	for rows.Next() { // none: to the end of the query, its COMMIT's answer
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}
