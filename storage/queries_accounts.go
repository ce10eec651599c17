package storage

import (
	"context"
	"errors"

	"github.com/hostmint/hostmint/storage/pgwire"
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
		if err := q.execute(lockAccount, id).Scan(ctx, a); err != nil {
			return a, mapErr(err)
		}
		if q.inBatch() { // its parts' creates, kept for the last statement
			a.ActiveHostnames += q.tx.pendingActive(id)
		}
		return a, nil
	}
	return a, mapErr(q.db.NewSelect().Model(a).Where("id = ?", id).Scan(ctx))
}

// AccountAndPool is LockAccount and PoolDomainFor in one round trip on
// PostgreSQL: a [P1] create needs both before anything else. The domain is
// nil when no pool domain is active. In a batch the account counts the
// creates its parts before put off (pendingActive).
func (q Queries) AccountAndPool(ctx context.Context, id, label, except string) (*Account, *Domain, LabelState, error) {
	if q.dialect != Postgres {
		a, err := q.LockAccount(ctx, id)
		if err != nil {
			return nil, nil, LabelState{}, err
		}
		d, st, err := q.PoolDomainFor(ctx, label, except)
		if errors.Is(err, ErrNotFound) {
			return a, nil, LabelState{}, nil
		}
		return a, d, st, err
	}
	key := accountInPoolKey(id, label, except)
	if q.tx != nil {
		if v, ok := q.tx.recall(key); ok { // read with the label (memo.go)
			r := v.(accountInPool)
			return r.acct, r.dom, r.st, nil
		}
	}
	a, row := new(Account), new(poolDomainRow)
	found, err := q.executeFirst(ctx, key, accountInPoolCalls(id, label, except, a, row)...)
	switch {
	case err != nil:
		return nil, nil, LabelState{}, mapErr(err)
	case !found[0]:
		return nil, nil, LabelState{}, ErrNotFound
	}
	if q.inBatch() {
		a.ActiveHostnames += q.tx.pendingActive(a.ID)
	}
	switch {
	case !found[1]:
		return a, nil, LabelState{}, nil
	}
	return a, &row.Domain, row.state(), nil
}

// accountInPool is what AccountAndPool reads.
type accountInPool struct {
	acct *Account
	dom  *Domain
	st   LabelState
}

// accountInPoolCalls are AccountAndPool's statements on PostgreSQL:
// the account, locked, and the pool domain for label.
func accountInPoolCalls(id, label, except string, a *Account, row *poolDomainRow) []pgCall {
	return []pgCall{{lockAccount, []any{id}, a}, {poolDomainFor, []any{label, except}, row}}
}

func accountInPoolKey(id, label, except string) string {
	return "lock_account_in_pool\x00" + id + "\x00" + label + "\x00" + except
}

var (
	accountByID = pgwire.NewStatement("account", func(db *bun.DB) string {
		return db.NewSelect().Model((*Account)(nil)).Where("id = $1").String()
	})
	lockAccount = pgwire.NewStatement("lock_account", func(db *bun.DB) string {
		return db.NewSelect().Model((*Account)(nil)).Where("id = $1").For("UPDATE").String()
	})
	lockAccountIfFree = pgwire.NewStatement("lock_account_if_free", func(db *bun.DB) string {
		return ifFree(db).For("UPDATE").String()
	})
)

// ifFree selects account $1 when no hostname holds label $3 on domain $2.
func ifFree(db *bun.DB) *bun.SelectQuery {
	return db.NewSelect().Model((*Account)(nil)).Where("id = $1").
		Where("NOT EXISTS (SELECT 1 FROM hostnames WHERE domain_id = $2 AND label = $3 AND status <> ?)", StatusReleased)
}

// UpdateAccount writes every column of a but the counters, which the
// triggers keep (a copy read earlier must not put back a stale count).
func (q Queries) UpdateAccount(ctx context.Context, a *Account) error {
	_, err := q.db.NewUpdate().Model(a).ExcludeColumn("active_hostnames").WherePK().Exec(ctx)
	return mapErr(err)
}

// AccountNames are the names of the accounts ids, by id, in one read: a
// page that shows the owners of its rows asks once, not once a row.
func (q Queries) AccountNames(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID   string `bun:"id"`
		Name string `bun:"name"`
	}
	err := q.db.NewSelect().Model((*Account)(nil)).Column("id", "name").Where("id IN (?)", bun.In(ids)).Scan(ctx, &rows)
	for _, r := range rows {
		out[r.ID] = r.Name
	}
	return out, mapErr(err)
}
