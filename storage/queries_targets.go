package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// TargetsDueFair lists up to limit served hostnames that follow a target
// whose refresh time has come, taking accounts in turn: every account's
// longest-due target first, then every account's second, and so on. One
// account with many due targets thus never fills the list and holds back
// another's refresh. A closed team's targets (suspended, or its plan ended) are
// left out: it steers nothing more.
func (q Queries) TargetsDueFair(ctx context.Context, now int64, limit int) ([]Hostname, error) {
	due := q.db.NewSelect().TableExpr("hostnames").
		Column("id").
		ColumnExpr("ROW_NUMBER() OVER (PARTITION BY account_id ORDER BY refresh_at, id) AS turn").
		Where("target <> '' AND refresh_at <= ? AND status IN (?)", now, bun.In([]string{StatusPending, StatusLive})).
		// A closed team (suspended, or its plan ended) steers nothing more.
		Where("account_id IN (SELECT a.id FROM accounts AS a WHERE "+accountOpen+")", now)
	hs := []Hostname{}
	err := q.db.NewSelect().Model(&hs).
		Join("JOIN (?) AS due ON due.id = hostname.id", due).
		OrderExpr("due.turn, hostname.refresh_at, hostname.id").Limit(int64(limit)).Scan(ctx)
	return hs, mapErr(err)
}
