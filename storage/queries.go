package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// Queries are the reads and writes of single rows, shared by the store (no
// transaction) and Tx (inside one).
type Queries struct {
	db      bun.IDB
	dialect Dialect
}

// ---- accounts

// InsertAccount inserts a.
func (q Queries) InsertAccount(ctx context.Context, a *Account) error {
	_, err := q.db.NewInsert().Model(a).Exec(ctx)
	return mapErr(err)
}

// Account reads one account.
func (q Queries) Account(ctx context.Context, id string) (*Account, error) {
	a := new(Account)
	err := q.db.NewSelect().Model(a).Where("id = ?", id).Scan(ctx)
	return a, mapErr(err)
}

// LockAccount reads an account and, on PostgreSQL, locks its row until the
// transaction ends, so that checks against the account's counts (caps, key
// limits) cannot race. SQLite transactions are already exclusive.
func (q Queries) LockAccount(ctx context.Context, id string) (*Account, error) {
	a := new(Account)
	sel := q.db.NewSelect().Model(a).Where("id = ?", id)
	if q.dialect == Postgres {
		sel = sel.For("UPDATE")
	}
	return a, mapErr(sel.Scan(ctx))
}

// UpdateAccount writes every column of a.
func (q Queries) UpdateAccount(ctx context.Context, a *Account) error {
	_, err := q.db.NewUpdate().Model(a).WherePK().Exec(ctx)
	return mapErr(err)
}

// ---- API keys

// InsertKey inserts k.
func (q Queries) InsertKey(ctx context.Context, k *APIKey) error {
	_, err := q.db.NewInsert().Model(k).Exec(ctx)
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

// ---- domains

// InsertDomain inserts d; ErrConflict if the name exists.
func (q Queries) InsertDomain(ctx context.Context, d *Domain) error {
	_, err := q.db.NewInsert().Model(d).Exec(ctx)
	return mapErr(err)
}

// InsertDomainIfMissing inserts d unless a domain of that name exists, and
// reports whether it inserted.
func (q Queries) InsertDomainIfMissing(ctx context.Context, d *Domain) (bool, error) {
	res, err := q.db.NewInsert().Model(d).On("CONFLICT (name) DO NOTHING").Exec(ctx)
	if err != nil {
		return false, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Domain reads one domain by id.
func (q Queries) Domain(ctx context.Context, id string) (*Domain, error) {
	d := new(Domain)
	err := q.db.NewSelect().Model(d).Where("id = ?", id).Scan(ctx)
	return d, mapErr(err)
}

// Domains lists every domain, oldest first.
func (q Queries) Domains(ctx context.Context) ([]Domain, error) {
	var ds []Domain
	err := q.db.NewSelect().Model(&ds).OrderExpr("created_at, name").Scan(ctx)
	return ds, mapErr(err)
}

// UpdateDomain writes every column of d.
func (q Queries) UpdateDomain(ctx context.Context, d *Domain) error {
	_, err := q.db.NewUpdate().Model(d).WherePK().Exec(ctx)
	return mapErr(err)
}

// ---- hostnames

// InsertHostname inserts h; ErrConflict if its label is taken on the domain.
func (q Queries) InsertHostname(ctx context.Context, h *Hostname) error {
	_, err := q.db.NewInsert().Model(h).Exec(ctx)
	return mapErr(err)
}

// Hostname reads one hostname by id.
func (q Queries) Hostname(ctx context.Context, id string) (*Hostname, error) {
	h := new(Hostname)
	err := q.db.NewSelect().Model(h).Where("id = ?", id).Scan(ctx)
	return h, mapErr(err)
}

// HostnamesByID reads the hostnames with the given ids (missing ones are
// left out).
func (q Queries) HostnamesByID(ctx context.Context, ids []string) ([]Hostname, error) {
	var hs []Hostname
	if len(ids) == 0 {
		return hs, nil
	}
	err := q.db.NewSelect().Model(&hs).Where("id IN (?)", bun.In(ids)).Scan(ctx)
	return hs, mapErr(err)
}

// UpdateHostname writes every column of h.
func (q Queries) UpdateHostname(ctx context.Context, h *Hostname) error {
	_, err := q.db.NewUpdate().Model(h).WherePK().Exec(ctx)
	return mapErr(err)
}

// ListHostnames lists an account's hostnames that are not released, newest
// first. limit is at least 1 (bun drops LIMIT 0 but keeps OFFSET, which
// SQLite refuses) and skip at least 0.
func (q Queries) ListHostnames(ctx context.Context, accountID string, limit, skip int) ([]Hostname, error) {
	limit, skip = max(limit, 1), max(skip, 0)
	hs := []Hostname{}
	err := q.db.NewSelect().Model(&hs).
		Where("account_id = ? AND status <> ?", accountID, StatusReleased).
		OrderExpr("created_at DESC, id DESC").Limit(int64(limit)).Offset(int64(skip)).Scan(ctx)
	return hs, mapErr(err)
}

// CountActive counts an account's live hostnames that have not expired at now
// (expires_at 0 never expires).
func (q Queries) CountActive(ctx context.Context, accountID string, now int64) (int, error) {
	n, err := q.db.NewSelect().Model((*Hostname)(nil)).
		Where("account_id = ? AND status = ? AND (expires_at = 0 OR expires_at > ?)", accountID, StatusLive, now).
		Count(ctx)
	return int(n), mapErr(err)
}

// LabelHolder returns the non-released hostname holding label on a domain.
func (q Queries) LabelHolder(ctx context.Context, domainID, label string) (*Hostname, error) {
	h := new(Hostname)
	err := q.db.NewSelect().Model(h).
		Where("domain_id = ? AND label = ? AND status <> ?", domainID, label, StatusReleased).
		Limit(1).Scan(ctx)
	return h, mapErr(err)
}

// Retired returns the retired-label row for label on a domain.
func (q Queries) Retired(ctx context.Context, domainID, label string) (*RetiredLabel, error) {
	r := new(RetiredLabel)
	err := q.db.NewSelect().Model(r).Where("domain_id = ? AND label = ?", domainID, label).Scan(ctx)
	return r, mapErr(err)
}

// Retire records that label on a domain was released by an account.
func (q Queries) Retire(ctx context.Context, r *RetiredLabel) error {
	_, err := q.db.NewInsert().Model(r).On("CONFLICT (domain_id, label) DO NOTHING").Exec(ctx)
	return mapErr(err)
}

// ScanServable calls fn for every hostname that DNS may serve (not
// released), streaming rows so a million names never sit in one slice.
func (q Queries) ScanServable(ctx context.Context, fn func(*Hostname) error) error {
	rows, err := q.db.NewSelect().Model((*Hostname)(nil)).
		Column("id", "name", "ip", "status", "expires_at").
		Where("status <> ?", StatusReleased).Rows(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	var h Hostname
	for rows.Next() {
		if err := rows.Scan(&h.ID, &h.Name, &h.IP, &h.Status, &h.ExpiresAt); err != nil {
			return mapErr(err)
		}
		if err := fn(&h); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}

// ---- changes

// LastChange is the id of the newest change row (0 for none).
func (q Queries) LastChange(ctx context.Context) (int64, error) {
	var id int64
	err := q.db.NewSelect().Model((*Change)(nil)).ColumnExpr("COALESCE(MAX(id), 0)").Scan(ctx, &id)
	return id, mapErr(err)
}

// ChangesAfter returns up to limit changes with id > after, plus the changes
// with the ids in also (gaps seen earlier), in id order.
func (q Queries) ChangesAfter(ctx context.Context, after int64, also []int64, limit int) ([]Change, error) {
	cs := []Change{}
	sel := q.db.NewSelect().Model(&cs).OrderExpr("id").Limit(int64(limit))
	if len(also) > 0 {
		sel = sel.Where("id > ? OR id IN (?)", after, bun.In(also))
	} else {
		sel = sel.Where("id > ?", after)
	}
	return cs, mapErr(sel.Scan(ctx))
}
