package storage

import (
	"context"
	"database/sql"

	"github.com/hostmint/hostmint/storage/pgwire"
	"github.com/uptrace/bun"
)

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

// LockHostname reads one hostname, with its account's suspension, plan end,
// plan and cap (Hostname.AccountSuspendedAt and the rest), and, on PostgreSQL, locks its row until the
// transaction ends: every write reads and rewrites the whole row, and a
// concurrent one must not bring back what another just changed (a released
// name served again). SQLite transactions are already exclusive.
func (q Queries) LockHostname(ctx context.Context, id string) (*Hostname, error) {
	h := new(Hostname)
	if q.dialect == Postgres {
		if q.tx != nil {
			if v, ok := q.tx.recall(lockHostnameKey(id)); ok { // memo.go
				*h = v.(Hostname)
				return h, nil
			}
		}
		if q.tx == nil {
			return h, mapErr(q.execute(lockHostname, id).Scan(ctx, h))
		}
		found, err := q.executeFirst(ctx, lockHostnameKey(id), pgCall{lockHostname, []any{id}, h})
		if err == nil && !found[0] {
			err = ErrNotFound
		}
		return h, mapErr(err)
	}
	return h, mapErr(withAccountAccess(q.db.NewSelect().Model(h)).Where("hostname.id = ?", id).Scan(ctx))
}

// withAccountAccess adds the account's access and plan columns to a select
// of a hostname (Hostname.AccountSuspendedAt and the rest).
func withAccountAccess(sel *bun.SelectQuery) *bun.SelectQuery {
	// The columns by name, not hostname.*: a prepared statement whose
	// result grows with a later migration's column breaks on nodes still
	// running the code before it.
	return sel.ColumnExpr("?TableColumns").
		ColumnExpr("a.suspended_at AS account_suspended_at, a.plan_ends_at AS account_plan_ends_at, a.plan AS account_plan, a.cap AS account_cap").
		Join("JOIN accounts AS a ON a.id = hostname.account_id")
}

var lockHostname = pgwire.NewStatement("lock_hostname", func(db *bun.DB) string {
	return withAccountAccess(db.NewSelect().Model((*Hostname)(nil))).Where("hostname.id = $1").For("UPDATE OF hostname").String()
})

// LockHostnameByLabel is HostnameByLabel with the account's columns, as
// LockHostname reads them, and the row locked until the transaction ends on
// PostgreSQL (SQLite's write transactions exclude each other already): what
// is read stays so while the transaction decides.
func (q Queries) LockHostnameByLabel(ctx context.Context, domainID, label string) (*Hostname, error) {
	h := new(Hostname)
	if q.dialect != Postgres {
		return h, mapErr(byLabel(q.db.NewSelect().Model(h), domainID, label).Scan(ctx))
	}
	if err := q.execute(lockHostnameByLabel, domainID, label).Scan(ctx, h); err != nil {
		return h, mapErr(err)
	}
	if q.tx != nil { // the row LockHostname(h.ID) would read next (memo.go)
		q.tx.remember(lockHostnameKey(h.ID), *h)
	}
	return h, nil
}

// HostnameForMint is LockHostnameByLabel for a write that mints the
// label for accountID if no hostname holds it ([P1] DNS UPDATE): the
// hostname found is locked. When none is, the same round trip on
// PostgreSQL reads what the mint's AccountAndPool(accountID, label,
// except) reads, as that reads it (the account locked), and leaves it for
// that call (memo.go).
func (q Queries) HostnameForMint(ctx context.Context, domainID, label, accountID, except string) (*Hostname, error) {
	if q.dialect != Postgres || q.tx == nil {
		return q.LockHostnameByLabel(ctx, domainID, label)
	}
	h, a, row := new(Hostname), new(Account), new(poolDomainRow)
	found, err := q.executeFirst(ctx, byLabelForKey(domainID, label, accountID, except),
		byLabelForCalls(domainID, label, accountID, except, h, a, row)...)
	switch {
	case err != nil:
		return h, mapErr(err)
	case found[0]:
		q.tx.remember(lockHostnameKey(h.ID), *h)
		return h, nil
	case found[1]:
		if q.inBatch() {
			a.ActiveHostnames += q.tx.pendingActive(a.ID)
		}
		r := accountInPool{acct: a}
		if found[2] {
			r.dom, r.st = &row.Domain, row.state()
		}
		q.tx.remember(accountInPoolKey(accountID, label, except), r)
	}
	return h, ErrNotFound
}

// byLabelForCalls are HostnameForMint's statements: the hostname,
// the account, locked, if the label is free, the pool
// domain for the label.
func byLabelForCalls(domainID, label, accountID, except string, h *Hostname, a *Account, row *poolDomainRow) []pgCall {
	return []pgCall{
		{lockHostnameByLabel, []any{domainID, label}, h},
		{lockAccountIfFree, []any{accountID, domainID, label}, a},
		{poolDomainFor, []any{label, except}, row}}
}

func byLabelForKey(domainID, label, accountID, except string) string {
	return "lock_hostname_by_label_for\x00" + domainID + "\x00" + label + "\x00" + accountID + "\x00" + except
}

func lockHostnameKey(id string) string { return "lock_hostname\x00" + id }

// Prepared: DNS UPDATE reads each name of a message so, a mint's first
// statement. The row as LockHostname reads it, account columns and all,
// so that the rule called next need not read it again. The status is
// written out, not a parameter: a plan made for any status could not use
// the label's partial index (status <> 'released') and would scan the
// table, so PostgreSQL planned the statement again on every call.
var lockHostnameByLabel = pgwire.NewStatement("lock_hostname_by_label", func(db *bun.DB) string {
	return byLabel(db.NewSelect().Model((*Hostname)(nil)), bun.Safe("$1"), bun.Safe("$2")).For("UPDATE OF hostname").String()
})

// byLabel is LockHostnameByLabel's select of the hostname that holds label
// on domainID (either may be a placeholder).
func byLabel(sel *bun.SelectQuery, domainID, label any) *bun.SelectQuery {
	return withAccountAccess(sel).
		Where("hostname.domain_id = ? AND hostname.label = ? AND hostname.status <> ?", domainID, label, StatusReleased)
}

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
	err := q.hostnamesByID(&hs, ids).Scan(ctx)
	return hs, mapErr(err)
}

// hostnamesByID is HostnamesByID's read, into hs.
func (q Queries) hostnamesByID(hs *[]Hostname, ids []string) *bun.SelectQuery {
	return q.db.NewSelect().Model(hs).Where("id IN (?)", bun.In(ids))
}

// UpdateHostname writes every column of h.
func (q Queries) UpdateHostname(ctx context.Context, h *Hostname) error {
	return mapErr(q.updateHostname(ctx, h, false))
}

// updateHostname is UpdateHostname, sent with the next statement when next
// is set (storage/pgwire).
func (q Queries) updateHostname(ctx context.Context, h *Hostname, next bool) error {
	if q.dialect == Postgres {
		call := updateHostname.Call()
		if next {
			call = pgwire.WithNext(call)
		}
		_, err := q.db.NewRaw(call, rowArgs(q.db, h)...).Exec(ctx)
		return err
	}
	_, err := q.db.NewUpdate().Model(h).WherePK().Exec(ctx)
	return err
}

var updateHostname = pgwire.NewStatement("update_hostname", func(db *bun.DB) string {
	q := db.NewUpdate().Model((*Hostname)(nil))
	return setAll(db, q, (*Hostname)(nil)).Where("id = $1").String()
})

// CountActive counts an account's live (or pending, on the way to live)
// hostnames that have not expired at now (expires_at 0 never expires).
func (q Queries) CountActive(ctx context.Context, accountID string, now int64) (int, error) {
	n, err := q.db.NewSelect().Model((*Hostname)(nil)).
		Where("account_id = ? AND status IN (?) AND (expires_at = 0 OR expires_at > ?)",
			accountID, bun.In(ActiveStatuses), now).
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

// CountServableByDomain counts what ScanServable would return, by domain
// id: a node sizes each zone's table with it before a load.
func (q Queries) CountServableByDomain(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		DomainID string `bun:"domain_id"`
		N        int    `bun:"n"`
	}
	err := q.db.NewSelect().Model((*Hostname)(nil)).Column("domain_id").ColumnExpr("COUNT(*) AS n").
		Where("status <> ?", StatusReleased).Group("domain_id").Scan(ctx, &rows)
	counts := make(map[string]int, len(rows))
	for _, r := range rows {
		counts[r.DomainID] = r.N
	}
	return counts, mapErr(err)
}

// ScanServable calls fn for every hostname that DNS may serve (not
// released), streaming rows so a million names never sit in one slice.
func (q Queries) ScanServable(ctx context.Context, fn func(*Hostname) error) error {
	rows, err := q.db.NewSelect().Model((*Hostname)(nil)).
		Column("id", "name", "ip", "addrs", "status", "expires_at", "dhcid").
		Where("status <> ?", StatusReleased).Rows(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	var h Hostname
	for rows.Next() {
		if err := rows.Scan(&h.ID, &h.Name, &h.IP, &h.Addrs, &h.Status, &h.ExpiresAt, &h.DHCID); err != nil {
			return mapErr(err)
		}
		if err := fn(&h); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}
