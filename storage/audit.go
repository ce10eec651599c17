package storage

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// AuditEntry is one write of the API or the dashboard, or one refused
// attempt at one: who, what, which object, when, from where, and how it
// ended. It never holds a request body, so nothing secret is in it.
type AuditEntry struct {
	bun.BaseModel `bun:"table:audit_log"`

	ID        int64  `bun:"id,pk,autoincrement"`
	At        int64  `bun:"at"`         // Unix ms
	Actor     string `bun:"actor"`      // "admin", "key:<key id>", "acme:<username>", "session:<account id>"
	AccountID string `bun:"account_id"` // the team acted for; "" for the operator
	Action    string `bun:"action"`     // the route: "POST /api/v1/hostnames"
	Object    string `bun:"object"`     // "<kind>:<id>"; "" when none applies
	Result    string `bun:"result"`     // "ok", or the refusal's error code
	Status    int    `bun:"status"`     // the HTTP status answered
	Address   string `bun:"address"`    // the client's address
	Detail    string `bun:"detail"`     // a refusal's words: the API's error, the UPDATE's EDE text

	ids []int64 // the rows of this entry that committed transactions wrote
}

// AuditOK is the result of an entry whose write committed.
const AuditOK = "ok"

type auditKey struct{}

// WithAudit makes every transaction committed under ctx record e (as a
// copy, Result "ok", Object the first object the transaction inserted, else
// e.Object, else the first object it changed) inside that same transaction: a write and its entry commit or
// vanish together.
func WithAudit(ctx context.Context, e *AuditEntry) context.Context {
	return context.WithValue(ctx, auditKey{}, e)
}

// WithoutAudit is ctx with no audit entry: for a transaction that is not
// the request's write (a rate token taken before the work it pays for).
func WithoutAudit(ctx context.Context) context.Context {
	return context.WithValue(ctx, auditKey{}, (*AuditEntry)(nil))
}

// AuditAccount names the team an entry begun under ctx acts for, when
// only the write itself learns it (an acme-dns credential's team).
func AuditAccount(ctx context.Context, accountID string) {
	if e, _ := ctx.Value(auditKey{}).(*AuditEntry); e != nil && e.AccountID == "" {
		e.AccountID = accountID
	}
}

// AuditObject names the object an entry begun under ctx is about, when
// only the write itself learns which kind it is (an acme-dns username is
// a hostname's credential or a registration).
func AuditObject(ctx context.Context, object string) {
	if e, _ := ctx.Value(auditKey{}).(*AuditEntry); e != nil {
		e.Object = object
	}
}

// Audited reports how many committed transactions have recorded e.
func (e *AuditEntry) Audited() int { return len(e.ids) }

// NoAudit marks t as no write of the request it serves: it changed nothing
// (the address a client already has), so it records no audit entry.
func (t *Tx) NoAudit() {
	if !t.joined {
		t.noAudit = true // a part of a WriteAll does not speak for the others
	}
}

// NothingChanged marks t, the transaction of a WriteAll or WriteAllGrouped
// whose function stands for all its parts, as one that changed nothing: a
// DNS UPDATE message that made no rule call (its prerequisites alone, or
// updates that leave the zone as it was), as a no-op PUT records no audit
// entry (NoAudit). Only that function may call it, not a rule inside it.
func (t *Tx) NothingChanged() { t.noAudit = true }

// auditRow is the entry of ctx as t records it, or nil when t records none.
func (t *Tx) auditRow(ctx context.Context) *AuditEntry {
	e, _ := ctx.Value(auditKey{}).(*AuditEntry)
	if e == nil || t.noAudit {
		return nil
	}
	row := *e
	row.ID, row.ids, row.At, row.Result = 0, nil, time.Now().UnixMilli(), AuditOK
	row.clean()
	switch {
	case t.created != "":
		row.Object = t.created
	case row.Object == "":
		row.Object = t.touched
	}
	return &row
}

// SetAuditStatus corrects the status of e's committed entries to the one
// the request was answered with (known only after its writes committed).
func (s *Store) SetAuditStatus(ctx context.Context, e *AuditEntry, status int) error {
	if len(e.ids) == 0 {
		return nil
	}
	release, err := s.gate.enter(ctx)
	if err != nil {
		return err
	}
	defer release()
	_, err = s.db.NewUpdate().TableExpr("audit_log").Set("status = ?", status).Where("id IN (?)", bun.In(e.ids)).Exec(ctx)
	return mapErr(err)
}

// made notes the first object t inserts, for its audit entry.
func (q Queries) made(kind, id string) {
	if q.tx != nil && q.tx.created == "" {
		q.tx.created = kind + ":" + id
	}
}

// AddAudit records an entry outside any write: a refused attempt.
func (s *Store) AddAudit(ctx context.Context, e *AuditEntry) error {
	row := *e
	row.ID, row.ids = 0, nil
	row.clean()
	if row.At == 0 {
		row.At = time.Now().UnixMilli()
	}
	release, err := s.gate.enter(ctx)
	if err != nil {
		return err
	}
	defer release()
	_, err = s.db.NewInsert().Model(&row).Exec(ctx)
	return mapErr(err)
}

// clean makes e's text storable: its object comes from the request's path,
// which may hold bytes that are not UTF-8 (PostgreSQL refuses them) or NUL
// (which ends SQL text for SQLite; bun writes values into the SQL).
func (e *AuditEntry) clean() {
	for _, f := range []*string{&e.Actor, &e.AccountID, &e.Action, &e.Object, &e.Result, &e.Address} {
		*f = storable(*f)
	}
}

func storable(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	Actor, AccountID, Action, Object, Result string
	Since, Until                             int64 // Unix ms, inclusive; 0: open
	Before                                   int64 // entries with a lower id (the next page); 0: from the newest
}

// AuditEntries lists up to limit entries f selects, newest first.
func (q Queries) AuditEntries(ctx context.Context, f AuditFilter, limit int) ([]AuditEntry, error) {
	var es []AuditEntry
	sel := q.db.NewSelect().Model(&es).OrderExpr("id DESC").Limit(int64(max(limit, 1)))
	for col, v := range map[string]string{"actor": f.Actor, "account_id": f.AccountID, "action": f.Action, "object": f.Object, "result": f.Result} {
		if v != "" {
			sel.Where("? = ?", bun.Ident(col), storable(v)) // as the entries were stored
		}
	}
	if f.Since > 0 {
		sel.Where("at >= ?", f.Since)
	}
	if f.Until > 0 {
		sel.Where("at <= ?", f.Until)
	}
	if f.Before > 0 {
		sel.Where("id < ?", f.Before)
	}
	err := sel.Scan(ctx)
	return es, mapErr(err)
}

// purgeBatch is the most audit entries one purge transaction deletes, so
// that a purge of a long backlog never holds the write lock for long.
const purgeBatch = 5000

// PurgeAudit deletes the entries written before cutoff (Unix ms), oldest
// first in transactions of at most purgeBatch found through the index on
// at, and returns how many.
func (s *Store) PurgeAudit(ctx context.Context, cutoff int64) (int64, error) {
	return s.purge(ctx, func(ctx context.Context, tx *Tx) (sql.Result, error) {
		old := tx.tx.NewSelect().TableExpr("audit_log").Column("id").Where("at < ?", cutoff).OrderExpr("at").Limit(purgeBatch)
		// PostgreSQL plans "id IN (subquery)" as a hash join over a
		// scan of the whole table; an array of the ids is looked up
		// through the primary key. SQLite looks each id up either way.
		in := "id IN (?)"
		if s.dialect == Postgres {
			in = "id = ANY(ARRAY(?))"
		}
		return tx.tx.NewDelete().TableExpr("audit_log").Where(in, old).Exec(ctx)
	})
}

// purgeBefore deletes model's rows whose column (an indexed Unix ms time)
// is before cutoff, oldest first, about purgeBatch a transaction, and
// returns how many it deleted. A batch ends at the column's value in its
// last row (a few more of the same millisecond go with it): a range of the
// index, on both databases, where a list of the rows would not be.
func (s *Store) purgeBefore(ctx context.Context, model any, column string, cutoff int64) (int64, error) {
	return s.purge(ctx, func(ctx context.Context, tx *Tx) (sql.Result, error) {
		upto := cutoff - 1
		var last []int64
		err := tx.tx.NewSelect().Model(model).Column(column).Where("? < ?", bun.Ident(column), cutoff).
			OrderExpr("?", bun.Ident(column)).Offset(purgeBatch-1).Limit(1).Scan(ctx, &last)
		if err != nil {
			return nil, err
		}
		if len(last) == 1 {
			upto = last[0]
		}
		return tx.tx.NewDelete().Model(model).Where("? <= ?", bun.Ident(column), upto).Exec(ctx)
	})
}

// purge runs batch, which deletes up to about purgeBatch rows, in one
// transaction after another until a batch deletes fewer, and returns how
// many rows they deleted.
func (s *Store) purge(ctx context.Context, batch func(ctx context.Context, tx *Tx) (sql.Result, error)) (int64, error) {
	var total int64
	for {
		var n int64
		_, err := s.Write(ctx, func(ctx context.Context, tx *Tx) error {
			res, err := batch(ctx, tx)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, err
		}
		if total += n; n < purgeBatch {
			return total, nil
		}
	}
}
