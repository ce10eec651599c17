package storage

import (
	"context"
	"database/sql"
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

// LockKey is Key, its row locked until the transaction ends on PostgreSQL
// against RevokeKey: FOR SHARE, which RevokeKey's UPDATE waits for (and
// then sees what this transaction wrote), or which waits for that UPDATE
// (and then reads the key revoked). What a key issues is thus committed
// before its revocation, which takes it, or refused. SQLite's write
// transactions exclude each other already.
func (q Queries) LockKey(ctx context.Context, id string) (*APIKey, error) {
	if q.dialect != Postgres {
		return q.Key(ctx, id)
	}
	k := new(APIKey)
	err := q.db.NewSelect().Model(k).Where("id = ?", id).For("SHARE").Scan(ctx)
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

// PurgeRevokedKeys deletes the API and TSIG keys revoked before cutoff
// (Unix ms), through the indexes on revoked_at, and returns how many.
// A revoked key authenticates nothing; the audit log keeps its id.
func (s *Store) PurgeRevokedKeys(ctx context.Context, cutoff int64) (int64, error) {
	var total int64
	for _, m := range []any{(*APIKey)(nil), (*TSIGKey)(nil)} {
		n, err := s.purge(ctx, func(ctx context.Context, tx *Tx) (sql.Result, error) {
			old := tx.tx.NewSelect().Model(m).Column("id").Where("revoked_at > 0 AND revoked_at < ?", cutoff).Limit(purgeBatch)
			return tx.tx.NewDelete().Model(m).Where("id IN (?)", old).Exec(ctx)
		})
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
