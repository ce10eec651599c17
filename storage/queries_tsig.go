package storage

import (
	"context"

	"github.com/uptrace/bun"
)

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

// RevokeTSIGKeysIssuedBy marks revoked, at now, the keys that API key
// issued, and returns their ids.
func (q Queries) RevokeTSIGKeysIssuedBy(ctx context.Context, keyID string, now int64) ([]string, error) {
	var ids []string
	if err := q.db.NewSelect().Model((*TSIGKey)(nil)).Column("id").
		Where("issued_by = ? AND revoked_at = 0", keyID).Scan(ctx, &ids); err != nil {
		return nil, mapErr(err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	_, err := q.db.NewUpdate().Model((*TSIGKey)(nil)).Set("revoked_at = ?", now).
		Where("id IN (?)", bun.In(ids)).Exec(ctx)
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

// AccountsByID reads the accounts with the given ids (missing ones are
// left out).
func (q Queries) AccountsByID(ctx context.Context, ids []string) ([]Account, error) {
	as := []Account{}
	if len(ids) == 0 {
		return as, nil
	}
	err := q.db.NewSelect().Model(&as).Where("id IN (?)", bun.In(ids)).Scan(ctx)
	return as, mapErr(err)
}
