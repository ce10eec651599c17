package storage

import (
	"cmp"
	"context"
	"database/sql"
	"slices"

	"github.com/uptrace/bun"
)

// Queries are the reads and writes of single rows, shared by the store (no
// transaction) and Tx (inside one).
type Queries struct {
	db      bun.IDB
	dialect Dialect
	tx      *Tx // the transaction these run in; nil for a Reader
}

// ---- accounts

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

// ---- API keys

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

// ---- domains

// InsertDomain inserts d; ErrConflict if the name exists.
func (q Queries) InsertDomain(ctx context.Context, d *Domain) error {
	_, err := q.db.NewInsert().Model(d).Exec(ctx)
	if err == nil {
		q.made("domain", d.ID)
	}
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

// DomainByName reads one domain by its name (lowercase, no trailing dot).
func (q Queries) DomainByName(ctx context.Context, name string) (*Domain, error) {
	d := new(Domain)
	err := q.db.NewSelect().Model(d).Where("name = ?", name).Scan(ctx)
	return d, mapErr(err)
}

// PoolDomainFor reads the pool domain (the oldest active domain that
// belongs to no account) and, in the same statement, whether label is in
// use on it (see LabelUse): a [P1] create learns where its name goes and
// whether the name is free in one round trip.
func (q Queries) PoolDomainFor(ctx context.Context, label string) (*Domain, LabelState, error) {
	var row poolDomainRow
	var err error
	if q.dialect == Postgres {
		err = q.execute(poolDomainFor, label).Scan(ctx, &row)
	} else {
		err = poolDomainQuery(q.db, &row, label).Scan(ctx)
	}
	if err != nil {
		return nil, LabelState{}, mapErr(err)
	}
	return &row.Domain, LabelState{Held: row.HeldBy.Valid, RetiredBy: row.RetiredBy.String, Retired: row.RetiredBy.Valid}, nil
}

type poolDomainRow struct {
	Domain    `bun:",extend"`
	HeldBy    sql.NullString `bun:"held_by"`
	RetiredBy sql.NullString `bun:"retired_by"`
}

// poolDomainQuery is PoolDomainFor's query for label, which may be a
// placeholder. A scalar subquery, not EXISTS: PostgreSQL plans it in half
// the time (80 against 155 µs).
func poolDomainQuery(db bun.IDB, row *poolDomainRow, label any) *bun.SelectQuery {
	return db.NewSelect().Model(row).
		ColumnExpr("domain.*").
		ColumnExpr("(SELECT id FROM hostnames WHERE domain_id = domain.id AND label = ? AND status <> ? LIMIT 1) AS held_by", label, StatusReleased).
		ColumnExpr("(SELECT account_id FROM retired_labels WHERE domain_id = domain.id AND label = ?) AS retired_by", label).
		Where("domain.account_id IS NULL AND domain.status = ?", DomainActive).
		OrderExpr("domain.created_at, domain.name").Limit(1)
}

var poolDomainFor = newPGStatement("pool_domain_for", func(db *bun.DB) string {
	return poolDomainQuery(db, (*poolDomainRow)(nil), bun.Safe("$1")).String()
})

// LabelState is what LabelUse tells of a label on a domain.
type LabelState struct {
	Held      bool   // a hostname that is not released holds it
	Retired   bool   // it was released and retired
	RetiredBy string // by this account
}

// DomainsOf lists an account's domains, oldest first.
func (q Queries) DomainsOf(ctx context.Context, accountID string) ([]Domain, error) {
	ds := []Domain{}
	err := q.db.NewSelect().Model(&ds).Where("account_id = ?", accountID).OrderExpr("created_at, name").Scan(ctx)
	return ds, mapErr(err)
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
	if err == nil {
		q.made("hostname", h.ID)
	}
	return mapErr(err)
}

// Hostname reads one hostname by id.
func (q Queries) Hostname(ctx context.Context, id string) (*Hostname, error) {
	h := new(Hostname)
	err := q.db.NewSelect().Model(h).Where("id = ?", id).Scan(ctx)
	return h, mapErr(err)
}

// LockHostname reads one hostname and, on PostgreSQL, locks its row until
// the transaction ends: every write reads and rewrites the whole row, and a
// concurrent one must not bring back what another just changed (a released
// name served again). SQLite transactions are already exclusive.
func (q Queries) LockHostname(ctx context.Context, id string) (*Hostname, error) {
	h := new(Hostname)
	if q.dialect == Postgres {
		return h, mapErr(q.execute(lockHostname, id).Scan(ctx, h))
	}
	return h, mapErr(q.db.NewSelect().Model(h).Where("id = ?", id).Scan(ctx))
}

var lockHostname = newPGStatement("lock_hostname", func(db *bun.DB) string {
	return db.NewSelect().Model((*Hostname)(nil)).Where("id = $1").For("UPDATE").String()
})

// HostnameByLabel reads the hostname that holds label on a domain and is
// not released: at most one does (the hostnames_label index), and that
// index answers the query, so a name is found without scanning names.
func (q Queries) HostnameByLabel(ctx context.Context, domainID, label string) (*Hostname, error) {
	h := new(Hostname)
	err := q.db.NewSelect().Model(h).Where("domain_id = ? AND label = ? AND status <> ?", domainID, label, StatusReleased).Scan(ctx)
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
	if q.dialect == Postgres {
		_, err := q.execute(updateHostname, rowArgs(q.db, h)...).Exec(ctx)
		return mapErr(err)
	}
	_, err := q.db.NewUpdate().Model(h).WherePK().Exec(ctx)
	return mapErr(err)
}

var updateHostname = newPGStatement("update_hostname", func(db *bun.DB) string {
	q := db.NewUpdate().Model((*Hostname)(nil))
	return setAll(db, q, (*Hostname)(nil)).Where("id = $1").String()
})

// CountActive counts an account's live (or pending, on the way to live)
// hostnames that have not expired at now (expires_at 0 never expires).
func (q Queries) CountActive(ctx context.Context, accountID string, now int64) (int, error) {
	n, err := q.db.NewSelect().Model((*Hostname)(nil)).
		Where("account_id = ? AND status IN (?) AND (expires_at = 0 OR expires_at > ?)",
			accountID, bun.In([]string{StatusLive, StatusPending}), now).
		Count(ctx)
	return int(n), mapErr(err)
}

// CountExpired counts an account's stored-live hostnames whose expiry has
// passed at now, up to limit: the hostnames_expiry index answers it without
// visiting the account's other names.
func (q Queries) CountExpired(ctx context.Context, accountID string, now int64, limit int) (int, error) {
	var n int
	err := q.db.NewRaw(`SELECT COUNT(*) FROM (SELECT 1 FROM hostnames
	WHERE account_id = ? AND status = 'live' AND expires_at > 0 AND expires_at <= ? LIMIT ?) AS expired`,
		accountID, now, limit).Scan(ctx, &n)
	return n, mapErr(err)
}

// LabelUse tells, in one query, whether a non-released hostname holds
// label on a domain and, if the label was released and retired, by which
// account (retired is false when it never was).
func (q Queries) LabelUse(ctx context.Context, domainID, label string) (held bool, retiredBy string, retired bool, err error) {
	var by sql.NullString
	err = q.db.NewRaw(`SELECT EXISTS (SELECT 1 FROM hostnames WHERE domain_id = ? AND label = ? AND status <> ?),
	(SELECT account_id FROM retired_labels WHERE domain_id = ? AND label = ?)`,
		domainID, label, StatusReleased, domainID, label).Scan(ctx, &held, &by)
	return held, by.String, by.Valid, mapErr(err)
}

// Retire records that label on a domain was released by an account.
func (q Queries) Retire(ctx context.Context, r *RetiredLabel) error {
	_, err := q.db.NewInsert().Model(r).On("CONFLICT (domain_id, label) DO NOTHING").Exec(ctx)
	return mapErr(err)
}

// CountServable counts what ScanServable would return.
func (q Queries) CountServable(ctx context.Context) (int, error) {
	n, err := q.db.NewSelect().Model((*Hostname)(nil)).Where("status <> ?", StatusReleased).Count(ctx)
	return int(n), mapErr(err)
}

// ScanServable calls fn for every hostname that DNS may serve (not
// released), streaming rows so a million names never sit in one slice.
func (q Queries) ScanServable(ctx context.Context, fn func(*Hostname) error) error {
	rows, err := q.db.NewSelect().Model((*Hostname)(nil)).
		Column("id", "name", "ip", "addrs", "status", "expires_at").
		Where("status <> ?", StatusReleased).Rows(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	var h Hostname
	for rows.Next() {
		if err := rows.Scan(&h.ID, &h.Name, &h.IP, &h.Addrs, &h.Status, &h.ExpiresAt); err != nil {
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
// with the ids in also (gaps seen earlier), in id order. The two are read
// apart: "id > ? OR id IN (...)" is answered by scanning the whole table,
// each part alone by the primary key.
func (q Queries) ChangesAfter(ctx context.Context, after int64, also []int64, limit int) ([]Change, error) {
	cs := []Change{}
	if err := q.db.NewSelect().Model(&cs).Where("id > ?", after).OrderExpr("id").Limit(int64(limit)).Scan(ctx); err != nil {
		return cs, mapErr(err)
	}
	if len(also) == 0 {
		return cs, nil
	}
	var gaps []Change
	if err := q.db.NewSelect().Model(&gaps).Where("id IN (?)", bun.In(also)).Scan(ctx); err != nil {
		return cs, mapErr(err)
	}
	cs = append(gaps, cs...) // every gap is below after
	slices.SortFunc(cs, func(a, b Change) int { return cmp.Compare(a.ID, b.ID) })
	return cs, nil
}

// ---- rate events

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

// ---- profile 2

// Filter selects an account's hostnames. Empty DomainIDs and HostnameIDs
// with Team false select nothing; Team selects every one.
type Filter struct {
	AccountID   string
	Team        bool
	DomainIDs   []string
	HostnameIDs []string
	Exclude     []string // statuses left out
}

func (f Filter) apply(sel *bun.SelectQuery) *bun.SelectQuery {
	sel = sel.Where("account_id = ?", f.AccountID)
	if len(f.Exclude) > 0 {
		sel = sel.Where("status NOT IN (?)", bun.In(f.Exclude))
	}
	if f.Team {
		return sel
	}
	return sel.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		q = q.Where("1 = 0")
		if len(f.DomainIDs) > 0 {
			q = q.WhereOr("domain_id IN (?)", bun.In(f.DomainIDs))
		}
		if len(f.HostnameIDs) > 0 {
			q = q.WhereOr("id IN (?)", bun.In(f.HostnameIDs))
		}
		return q
	})
}

// FindHostnames lists the hostnames f selects, newest first (limit >= 1).
func (q Queries) FindHostnames(ctx context.Context, f Filter, limit, skip int) ([]Hostname, error) {
	hs := []Hostname{}
	sel := f.apply(q.db.NewSelect().Model(&hs)).
		OrderExpr("created_at DESC, id DESC").Limit(int64(max(limit, 1))).Offset(int64(max(skip, 0)))
	return hs, mapErr(sel.Scan(ctx))
}

// CountHostnames counts the hostnames f selects that have one of statuses
// (any status when none are given).
func (q Queries) CountHostnames(ctx context.Context, f Filter, statuses ...string) (int, error) {
	sel := f.apply(q.db.NewSelect().Model((*Hostname)(nil)))
	if len(statuses) > 0 {
		sel = sel.Where("status IN (?)", bun.In(statuses))
	}
	n, err := sel.Count(ctx)
	return int(n), mapErr(err)
}

// HostnamesWithStatus lists up to limit hostnames in a status, oldest change first.
func (q Queries) HostnamesWithStatus(ctx context.Context, status string, limit int) ([]Hostname, error) {
	hs := []Hostname{}
	err := q.db.NewSelect().Model(&hs).Where("status = ?", status).
		OrderExpr("updated_at").Limit(int64(limit)).Scan(ctx)
	return hs, mapErr(err)
}

// UpdateHostnameIf writes h only if the stored row still has the given
// updated_at (optimistic: another node may have changed it since it was
// read), and reports whether it did.
//
// Only the columns the background work owns are written (status, the
// addresses, the refresh time), so nothing else read stale is put back.
func (q Queries) UpdateHostnameIf(ctx context.Context, h *Hostname, updatedAt int64) (bool, error) {
	res, err := q.db.NewUpdate().Model(h).Column("status", "ip", "addrs", "refresh_at", "updated_at").
		WherePK().Where("updated_at = ?", updatedAt).Exec(ctx)
	if err != nil {
		return false, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ---- records

// InsertRecord inserts r.
func (q Queries) InsertRecord(ctx context.Context, r *Record) error {
	_, err := q.db.NewInsert().Model(r).Exec(ctx)
	if err == nil {
		q.made("record", r.ID)
	}
	return mapErr(err)
}

// Record reads one record by id.
func (q Queries) Record(ctx context.Context, id string) (*Record, error) {
	r := new(Record)
	err := q.db.NewSelect().Model(r).Where("id = ?", id).Scan(ctx)
	return r, mapErr(err)
}

// UpdateRecord writes every column of r.
func (q Queries) UpdateRecord(ctx context.Context, r *Record) error {
	_, err := q.db.NewUpdate().Model(r).WherePK().Exec(ctx)
	return mapErr(err)
}

// DeleteRecord deletes one record.
func (q Queries) DeleteRecord(ctx context.Context, id string) error {
	_, err := q.db.NewDelete().Model((*Record)(nil)).Where("id = ?", id).Exec(ctx)
	return mapErr(err)
}

// Records lists the records of hostnames, oldest first.
func (q Queries) Records(ctx context.Context, hostnameIDs ...string) ([]Record, error) {
	rs := []Record{}
	if len(hostnameIDs) == 0 {
		return rs, nil
	}
	err := q.db.NewSelect().Model(&rs).Where("hostname_id IN (?)", bun.In(hostnameIDs)).
		OrderExpr("created_at, id").Scan(ctx)
	return rs, mapErr(err)
}

// ScanRecords calls fn for every record of a hostname DNS may serve.
func (q Queries) ScanRecords(ctx context.Context, fn func(*Record) error) error {
	rows, err := q.db.NewSelect().Model((*Record)(nil)).
		Column("record.id", "record.hostname_id", "record.name", "record.type", "record.data").
		Join("JOIN hostnames AS h ON h.id = record.hostname_id").
		Where("h.status IN (?)", bun.In([]string{StatusLive, StatusPending})).Rows(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	var r Record
	for rows.Next() {
		if err := rows.Scan(&r.ID, &r.HostnameID, &r.Name, &r.Type, &r.Data); err != nil {
			return mapErr(err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}

// ---- DNS-01

// InsertCredential inserts c.
func (q Queries) InsertCredential(ctx context.Context, c *Credential) error {
	_, err := q.db.NewInsert().Model(c).Exec(ctx)
	if err == nil {
		q.made("credential", c.ID)
	}
	return mapErr(err)
}

// Credential reads one credential by username.
func (q Queries) Credential(ctx context.Context, username string) (*Credential, error) {
	c := new(Credential)
	err := q.db.NewSelect().Model(c).Where("id = ?", username).Scan(ctx)
	return c, mapErr(err)
}

// CountCredentials counts a hostname's credentials.
func (q Queries) CountCredentials(ctx context.Context, hostnameID string) (int, error) {
	n, err := q.db.NewSelect().Model((*Credential)(nil)).Where("hostname_id = ?", hostnameID).Count(ctx)
	return int(n), mapErr(err)
}

// AddChallenge stores a value and keeps only the keep newest of the
// hostname. A value sent again (a client's retry) moves to the front
// rather than taking a second slot and pushing out the other value.
func (q Queries) AddChallenge(ctx context.Context, c *Challenge, keep int) error {
	if _, err := q.db.NewDelete().Model((*Challenge)(nil)).
		Where("hostname_id = ? AND value = ?", c.HostnameID, c.Value).Exec(ctx); err != nil {
		return mapErr(err)
	}
	if _, err := q.db.NewInsert().Model(c).Returning("id").Exec(ctx); err != nil {
		return mapErr(err)
	}
	newest := q.db.NewSelect().Model((*Challenge)(nil)).Column("id").
		Where("hostname_id = ?", c.HostnameID).OrderExpr("id DESC").Limit(int64(keep))
	_, err := q.db.NewDelete().Model((*Challenge)(nil)).
		Where("hostname_id = ? AND id NOT IN (?)", c.HostnameID, newest).Exec(ctx)
	return mapErr(err)
}

// Challenges lists the challenge values of hostnames, newest first.
func (q Queries) Challenges(ctx context.Context, hostnameIDs ...string) ([]Challenge, error) {
	cs := []Challenge{}
	if len(hostnameIDs) == 0 {
		return cs, nil
	}
	err := q.db.NewSelect().Model(&cs).Where("hostname_id IN (?)", bun.In(hostnameIDs)).OrderExpr("id DESC").Scan(ctx)
	return cs, mapErr(err)
}

// LastChallenge is the newest value written for a hostname, if any.
func (q Queries) LastChallenge(ctx context.Context, hostnameID string) (*Challenge, error) {
	c := new(Challenge)
	err := q.db.NewSelect().Model(c).Where("hostname_id = ?", hostnameID).OrderExpr("id DESC").Limit(1).Scan(ctx)
	return c, mapErr(err)
}

// ScanChallenges calls fn for every challenge value, newest first.
func (q Queries) ScanChallenges(ctx context.Context, fn func(*Challenge) error) error {
	rows, err := q.db.NewSelect().Model((*Challenge)(nil)).Column("id", "hostname_id", "value", "created_at").
		OrderExpr("id DESC").Rows(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	var c Challenge
	for rows.Next() {
		if err := rows.Scan(&c.ID, &c.HostnameID, &c.Value, &c.CreatedAt); err != nil {
			return mapErr(err)
		}
		if err := fn(&c); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}

// ---- certificates

// ACMEAccount reads the service's account at a CA.
func (q Queries) ACMEAccount(ctx context.Context, ca string) (*ACMEAccount, error) {
	a := new(ACMEAccount)
	err := q.db.NewSelect().Model(a).Where("ca = ?", ca).Scan(ctx)
	return a, mapErr(err)
}

// SaveACMEAccount stores an account unless one exists for the CA already.
func (q Queries) SaveACMEAccount(ctx context.Context, a *ACMEAccount) error {
	_, err := q.db.NewInsert().Model(a).On("CONFLICT (ca) DO NOTHING").Exec(ctx)
	return mapErr(err)
}

// Certificate reads a hostname's certificate.
func (q Queries) Certificate(ctx context.Context, hostnameID string) (*Certificate, error) {
	c := new(Certificate)
	err := q.db.NewSelect().Model(c).Where("hostname_id = ?", hostnameID).Scan(ctx)
	return c, mapErr(err)
}

// SaveCertificate inserts or overwrites a hostname's certificate row.
func (q Queries) SaveCertificate(ctx context.Context, c *Certificate) error {
	_, err := q.db.NewInsert().Model(c).On("CONFLICT (hostname_id) DO UPDATE").
		Set("status = EXCLUDED.status, ca = EXCLUDED.ca, csr = EXCLUDED.csr, chain = EXCLUDED.chain, " +
			"key_sealed = EXCLUDED.key_sealed, expires_at = EXCLUDED.expires_at, due_at = EXCLUDED.due_at, " +
			"error = EXCLUDED.error, lease_until = EXCLUDED.lease_until, updated_at = EXCLUDED.updated_at").Exec(ctx)
	return mapErr(err)
}

// CertificatesDue lists up to limit certificates in one of statuses whose
// due time has come and that no node holds.
func (q Queries) CertificatesDue(ctx context.Context, now int64, limit int, statuses ...string) ([]Certificate, error) {
	cs := []Certificate{}
	err := q.db.NewSelect().Model(&cs).
		Where("status IN (?) AND due_at <= ? AND lease_until < ?", bun.In(statuses), now, now).
		OrderExpr("due_at").Limit(int64(limit)).Scan(ctx)
	return cs, mapErr(err)
}

// LeaseCertificate takes the lease of a certificate until until, if no node
// holds it and it is still as read (updated_at), showing status meanwhile;
// it reports whether it did.
func (q Queries) LeaseCertificate(ctx context.Context, hostnameID string, updatedAt, now, until int64, status string) (bool, error) {
	res, err := q.db.NewUpdate().Model((*Certificate)(nil)).
		Set("lease_until = ?, status = ?", until, status).
		Where("hostname_id = ? AND updated_at = ? AND lease_until < ?", hostnameID, updatedAt, now).Exec(ctx)
	if err != nil {
		return false, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// InsertHostnames inserts many hostnames at once (bulk loading).
func (q Queries) InsertHostnames(ctx context.Context, hs []Hostname) error {
	if len(hs) == 0 {
		return nil
	}
	_, err := q.db.NewInsert().Model(&hs).Exec(ctx)
	return mapErr(err)
}

// CertificateStats is what the certificates table holds, for monitoring.
type CertificateStats struct {
	ByStatus map[string]int
	Soonest  int64 // the earliest expiry of an issued certificate, Unix ms; 0 if none
	Expiring int   // issued certificates expiring before the soon given
}

// Certificates counts certificates by status and finds the issued ones
// expiring before soon (Unix ms).
func (q Queries) Certificates(ctx context.Context, soon int64) (CertificateStats, error) {
	st := CertificateStats{ByStatus: map[string]int{}}
	var rows []struct {
		Status string `bun:"status"`
		N      int    `bun:"n"`
	}
	if err := q.db.NewSelect().Model((*Certificate)(nil)).ColumnExpr("status, COUNT(*) AS n").Group("status").Scan(ctx, &rows); err != nil {
		return st, mapErr(err)
	}
	for _, r := range rows {
		st.ByStatus[r.Status] = r.N
	}
	err := q.db.NewSelect().Model((*Certificate)(nil)).
		ColumnExpr("COALESCE(MIN(expires_at), 0)").
		ColumnExpr("COUNT(CASE WHEN expires_at < ? THEN 1 END)", soon).
		Where("status = ? AND expires_at > 0", CertIssued).Scan(ctx, &st.Soonest, &st.Expiring)
	return st, mapErr(err)
}
