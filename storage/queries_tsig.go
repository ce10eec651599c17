package storage

import "context"

// InsertTSIGKey inserts k.
func (q Queries) InsertTSIGKey(ctx context.Context, k *TSIGKey) error {
	_, err := q.db.NewInsert().Model(k).Exec(ctx)
	if err == nil {
		q.made("tsig_key", k.ID)
	}
	return mapErr(err)
}

// TSIGKey reads one key by its id.
func (q Queries) TSIGKey(ctx context.Context, id string) (*TSIGKey, error) {
	k := new(TSIGKey)
	err := q.db.NewSelect().Model(k).Where("id = ?", id).Scan(ctx)
	return k, mapErr(err)
}

// TSIGKeys lists an account's keys that are not revoked, oldest first.
func (q Queries) TSIGKeys(ctx context.Context, accountID string) ([]TSIGKey, error) {
	var ks []TSIGKey
	err := q.db.NewSelect().Model(&ks).
		Where("account_id = ? AND revoked_at = 0", accountID).
		OrderExpr("created_at, id").Scan(ctx)
	return ks, mapErr(err)
}

// ActiveTSIGKeys pages through every key that is not revoked, by id after
// the given one (the snapshot a node loads).
func (q Queries) ActiveTSIGKeys(ctx context.Context, after string, limit int64) ([]TSIGKey, error) {
	var ks []TSIGKey
	err := q.db.NewSelect().Model(&ks).
		Where("revoked_at = 0 AND id > ?", after).
		OrderExpr("id").Limit(limit).Scan(ctx)
	return ks, mapErr(err)
}

// AccountTSIGKeyIDs lists the ids of an account's keys that are not revoked.
func (q Queries) AccountTSIGKeyIDs(ctx context.Context, accountID string) ([]string, error) {
	var ids []string
	err := q.db.NewSelect().Model((*TSIGKey)(nil)).Column("id").
		Where("account_id = ? AND revoked_at = 0", accountID).Scan(ctx, &ids)
	return ids, mapErr(err)
}

// CountTSIGKeys counts an account's keys that are not revoked.
func (q Queries) CountTSIGKeys(ctx context.Context, accountID string) (int, error) {
	n, err := q.db.NewSelect().Model((*TSIGKey)(nil)).
		Where("account_id = ? AND revoked_at = 0", accountID).Count(ctx)
	return int(n), mapErr(err)
}

// RevokeTSIGKey marks a key revoked at now; ErrNotFound if there is no such
// key or it is revoked already.
func (q Queries) RevokeTSIGKey(ctx context.Context, id string, now int64) error {
	res, err := q.db.NewUpdate().Model((*TSIGKey)(nil)).Set("revoked_at = ?", now).
		Where("id = ? AND revoked_at = 0", id).Exec(ctx)
	if err != nil {
		return mapErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// TSIGKeyAccount reads, in one statement, whether a key is revoked and its
// account's access (the account row holds only what Access needs).
func (q Queries) TSIGKeyAccount(ctx context.Context, id string) (revoked bool, a *Account, err error) {
	var row struct {
		RevokedAt   int64  `bun:"revoked_at"`
		AccountID   string `bun:"account_id"`
		SuspendedAt int64  `bun:"suspended_at"`
		PlanEndsAt  int64  `bun:"plan_ends_at"`
	}
	err = q.db.NewSelect().TableExpr("tsig_keys AS k").
		ColumnExpr("k.revoked_at, k.account_id, a.suspended_at, a.plan_ends_at").
		Join("JOIN accounts AS a ON a.id = k.account_id").
		Where("k.id = ?", id).Scan(ctx, &row)
	if err != nil {
		return false, nil, mapErr(err)
	}
	return row.RevokedAt != 0, &Account{ID: row.AccountID, SuspendedAt: row.SuspendedAt, PlanEndsAt: row.PlanEndsAt}, nil
}
