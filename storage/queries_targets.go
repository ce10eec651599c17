package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// TargetsDueFair lists up to limit served hostnames that follow a target
// whose refresh time has come, taking accounts in turn: every account's
// longest-due target first, then every account's second, and so on. One
// account with many due targets thus never fills the list and holds back
// another's refresh.
func (q Queries) TargetsDueFair(ctx context.Context, now int64, limit int) ([]Hostname, error) {
	due := q.db.NewSelect().TableExpr("hostnames").
		Column("id").
		ColumnExpr("ROW_NUMBER() OVER (PARTITION BY account_id ORDER BY refresh_at, id) AS turn").
		Where("target <> '' AND refresh_at <= ? AND status IN (?)", now, bun.In([]string{StatusPending, StatusLive}))
	hs := []Hostname{}
	err := q.db.NewSelect().Model(&hs).
		Join("JOIN (?) AS due ON due.id = hostname.id", due).
		OrderExpr("due.turn, hostname.refresh_at, hostname.id").Limit(int64(limit)).Scan(ctx)
	return hs, mapErr(err)
}
