package storage

import (
	"context"
)

// InsertKey inserts k.
func (q Queries) InsertKey(ctx context.Context, k *APIKey) error {
	_, err := q.db.NewInsert().Model(k).Exec(ctx)
	if err == nil {
		q.made("key", k.ID)
	}
	return mapErr(err)
}

// Key reads one key by its id.
func (q Queries) Key(ctx context.Context, id string) (*APIKey, error) {
	k := new(APIKey)
	err := q.db.NewSelect().Model(k).Where("id = ?", id).Scan(ctx)
	return k, mapErr(err)
}

// Keys lists an account's keys that are not revoked, oldest first.
func (q Queries) Keys(ctx context.Context, accountID string) ([]APIKey, error) {
	var ks []APIKey
	err := q.db.NewSelect().Model(&ks).
		Where("account_id = ? AND revoked_at = 0", accountID).
		OrderExpr("created_at, id").Scan(ctx)
	return ks, mapErr(err)
}

// CountKeys counts an account's keys that still authenticate at now.
func (q Queries) CountKeys(ctx context.Context, accountID string, now int64) (int, error) {
	n, err := q.db.NewSelect().Model((*APIKey)(nil)).
		Where("account_id = ? AND revoked_at = 0 AND (expires_at = 0 OR expires_at > ?)", accountID, now).
		Count(ctx)
	return int(n), mapErr(err)
}

// RevokeKey marks a key revoked at now; ErrNotFound if there is no such key
// or it is revoked already.
func (q Queries) RevokeKey(ctx context.Context, id string, now int64) error {
	res, err := q.db.NewUpdate().Model((*APIKey)(nil)).Set("revoked_at = ?", now).
		Where("id = ? AND revoked_at = 0", id).Exec(ctx)
	if err != nil {
		return mapErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
