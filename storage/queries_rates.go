package storage

import (
	"context"
	"database/sql"
)

// AddRateEvent records one counted action.
func (q Queries) AddRateEvent(ctx context.Context, e *RateEvent) error {
	_, err := q.db.NewInsert().Model(e).Exec(ctx)
	return mapErr(err)
}

// RateEvents counts an account's events of kind at or after since, and
// returns the time of the oldest of them (0 when there are none). Older
// events of the account and kind are deleted on the way.
func (q Queries) RateEvents(ctx context.Context, accountID, kind string, since int64) (n int, oldest int64, err error) {
	if _, err := q.db.NewDelete().Model((*RateEvent)(nil)).
		Where("account_id = ? AND kind = ? AND at < ?", accountID, kind, since).Exec(ctx); err != nil {
		return 0, 0, mapErr(err)
	}
	var row struct {
		N      int   `bun:"n"`
		Oldest int64 `bun:"oldest"`
	}
	err = q.db.NewSelect().Model((*RateEvent)(nil)).
		ColumnExpr("COUNT(*) AS n, COALESCE(MIN(at), 0) AS oldest").
		Where("account_id = ? AND kind = ? AND at >= ?", accountID, kind, since).Scan(ctx, &row)
	return row.N, row.Oldest, mapErr(err)
}

// PurgeRateEvents deletes the rate events older than cutoff (Unix ms),
// past every window: those of a caller that never came back.
func (s *Store) PurgeRateEvents(ctx context.Context, cutoff int64) (int64, error) {
	return s.purge(ctx, func(ctx context.Context, tx *Tx) (sql.Result, error) {
		old := tx.tx.NewSelect().Model((*RateEvent)(nil)).Column("id").Where("at < ?", cutoff).Limit(purgeBatch)
		return tx.tx.NewDelete().Model((*RateEvent)(nil)).Where("id IN (?)", old).Exec(ctx)
	})
}
