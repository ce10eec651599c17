package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// InsertAccount inserts a.
func (q Queries) InsertAccount(ctx context.Context, a *Account) error {
	_, err := q.db.NewInsert().Model(a).ExcludeColumn("active_hostnames").Exec(ctx)
	if err == nil {
		q.made("account", a.ID)
	}
	return mapErr(err)
}

// Account reads one account.
func (q Queries) Account(ctx context.Context, id string) (*Account, error) {
	a := new(Account)
	if q.dialect == Postgres {
		return a, mapErr(q.execute(accountByID, id).Scan(ctx, a))
	}
	err := q.db.NewSelect().Model(a).Where("id = ?", id).Scan(ctx)
	return a, mapErr(err)
}

// Accounts lists every account, oldest first.
func (q Queries) Accounts(ctx context.Context) ([]Account, error) {
	as := []Account{}
	err := q.db.NewSelect().Model(&as).OrderExpr("created_at, id").Scan(ctx)
	return as, mapErr(err)
}

// LockAccount reads an account and, on PostgreSQL, locks its row until the
// transaction ends, so that checks against the account's counts (caps, key
// limits) cannot race. SQLite transactions are already exclusive.
func (q Queries) LockAccount(ctx context.Context, id string) (*Account, error) {
	a := new(Account)
	if q.dialect == Postgres {
		return a, mapErr(q.execute(lockAccount, id).Scan(ctx, a))
	}
	return a, mapErr(q.db.NewSelect().Model(a).Where("id = ?", id).Scan(ctx))
}

var (
	accountByID = newPGStatement("account", func(db *bun.DB) string {
		return db.NewSelect().Model((*Account)(nil)).Where("id = $1").String()
	})
	lockAccount = newPGStatement("lock_account", func(db *bun.DB) string {
		return db.NewSelect().Model((*Account)(nil)).Where("id = $1").For("UPDATE").String()
	})
)

// UpdateAccount writes every column of a but the counters, which the
// triggers keep (a copy read earlier must not put back a stale count).
func (q Queries) UpdateAccount(ctx context.Context, a *Account) error {
	_, err := q.db.NewUpdate().Model(a).ExcludeColumn("active_hostnames").WherePK().Exec(ctx)
	return mapErr(err)
}
