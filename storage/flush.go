package storage

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/hostmint/hostmint/storage/pgwire"
	"github.com/lib/pq"
	"github.com/uptrace/bun"
)

// InsertLater queues the insert of model (a pointer to a row of a table)
// for the end of the transaction, where it is written together with the
// change rows and the audit entry: on PostgreSQL in one statement. kind and
// id name the row for the audit entry. A constraint the row breaks fails
// the commit (ErrConflict from Write), not this call, and nothing in the
// transaction can read the row before then: it suits the last insert of a
// write, whose checks are done.
func (t *Tx) InsertLater(kind, id string, model any) {
	t.later = append(t.later, laterWrite{insert: model})
	t.made(kind, id)
}

// UpdateHostnameLater queues UpdateHostname(h), with h as it is then, for
// the end of the transaction, as InsertLater queues an insert: it suits a
// write's last change of the row, whose checks are done. On PostgreSQL it
// is sent with the statement that follows, so it costs no round trip.
func (t *Tx) UpdateHostnameLater(h *Hostname) {
	t.later = append(t.later, laterWrite{update: h})
}

// laterWrite is a write InsertLater or UpdateHostnameLater put off.
type laterWrite struct {
	insert any       // a row to insert
	update *Hostname // or a hostname to update
}

// updateAfterInsert tells whether an update follows an insert in ws.
func updateAfterInsert(ws []laterWrite) bool {
	inserted := false
	for _, w := range ws {
		if w.update != nil && inserted {
			return true
		}
		inserted = inserted || w.update == nil
	}
	return false
}

// insertLater writes the rows InsertLater and UpdateHostnameLater put
// off, now.
func (t *Tx) insertLater(ctx context.Context) error {
	return t.writeLater(ctx, false)
}

// writeLater is insertLater, its statements sent with the next one when
// next is set (storage/pgwire).
func (t *Tx) writeLater(ctx context.Context, next bool) error {
	comment := ""
	if next {
		ctx, comment = t.withNextCtx(ctx), pgwire.WithNextComment
	}
	for _, w := range t.later {
		var err error
		if w.update != nil {
			err = t.updateHostname(ctx, w.update, next)
		} else {
			_, err = t.tx.NewInsert().Model(w.insert).Comment(comment).Exec(ctx)
		}
		if err != nil {
			return mapErr(err)
		}
	}
	t.later = nil
	return nil
}

// flush writes what the transaction queued for its end: the inserts put
// off by InsertLater, its change rows, its audit entry (the request's
// entry under ctx, once per transaction) and its charges (ChargeLater),
// whose checks then run. On PostgreSQL they are one statement, so a write
// pays one round trip for all of them; when commit is set (the write is
// done) it carries the COMMIT too, where the connection can (storage/pgwire).
func (t *Tx) flush(ctx context.Context, commit bool) error {
	var (
		parts      []bun.Query
		cIdx, aIdx = -1, -1
	)
	// A batch's kept hostnames (batch_accounts.go): no row put off can be one of
	// them, none being written yet.
	t.later, t.kept = append(t.later, t.kept...), nil
	if updateAfterInsert(t.later) { // perhaps of that row: in their order, now
		if err := t.insertLater(ctx); err != nil {
			return err
		}
	}
	// The hostnames go in one insert of many rows, where the first was:
	// a batch's (group.go) cost a statement each, which planned and ran
	// for longer while the account's lock was held.
	var (
		hostnames []*Hostname
		hIdx      int
	)
	// So do a batch's seen MACs (seen_macs.go), in one insert at the end.
	macs, later := seenMACRows(t.later)
	t.later = later
	for _, w := range t.later {
		if h, ok := w.insert.(*Hostname); ok {
			if hostnames = append(hostnames, h); len(hostnames) == 1 {
				hIdx, parts = len(parts), append(parts, nil) // its place
			}
			continue
		}
		if w.update == nil {
			parts = append(parts, t.tx.NewInsert().Model(w.insert))
			continue
		}
		// On PostgreSQL sent with the statement below (a prepared UPDATE
		// cannot be one of its parts).
		if err := t.updateHostname(t.withNextCtx(ctx), w.update, true); err != nil {
			return mapErr(err)
		}
	}
	t.later = nil
	if len(hostnames) > 0 {
		parts[hIdx] = t.tx.NewInsert().Model(&hostnames)
	}
	if len(macs) > 0 {
		parts = append(parts, t.tx.NewInsert().Model(&macs))
	}
	changes := t.changes[t.flushed:]
	t.flushed = len(t.changes)
	if len(changes) > 0 {
		cIdx = len(parts)
		parts = append(parts, t.tx.NewInsert().Model(&changes).Returning("id"))
	}
	var row *AuditEntry
	if !t.auditDone {
		row, t.auditDone = t.auditRow(ctx), true
	}
	if row != nil {
		aIdx = len(parts)
		parts = append(parts, t.tx.NewInsert().Model(row).Returning("id"))
	}
	pIdx, partRows := -1, make([]*AuditEntry, len(t.partAudits))
	for i, a := range t.partAudits {
		partRows[i] = a.row
	}
	if len(partRows) > 0 {
		pIdx = len(parts)
		parts = append(parts, t.tx.NewInsert().Model(&partRows).Returning("id"))
	}
	first := len(parts) // of the charges
	for i := range t.charges {
		parts = append(parts, t.chargeQuery(&t.charges[i]))
	}
	carry := commit && t.pg != nil && t.pg.CanCarry()
	switch {
	case len(parts) == 0:
		return nil
	case t.dialect == Postgres && (len(parts) > 1 || carry):
		sel := t.tx.NewSelect()
		for i, q := range parts {
			sel = sel.With(fmt.Sprintf("w%d", i), q)
		}
		var (
			last, audited sql.NullInt64
			partIDs       []int64
		)
		dest := []any{&last, &audited}
		sel = sel.ColumnExpr(maxID(cIdx)).ColumnExpr(maxID(aIdx))
		if pIdx >= 0 {
			// Ids come from a sequence in the order the rows were listed.
			sel = sel.ColumnExpr(fmt.Sprintf("(SELECT array_agg(id ORDER BY id) FROM w%d)", pIdx))
			dest = append(dest, pq.Array(&partIDs))
		}
		for i := range t.charges {
			sel = sel.ColumnExpr(t.chargeColumn(i, fmt.Sprintf("w%d", first+i)))
			dest = append(dest, &t.charges[i].tat)
		}
		if err := t.scanRow(ctx, sel, carry, dest...); err != nil {
			if refused := t.overdrawn(err); refused != err {
				return refused
			}
			return mapErr(err)
		}
		t.last = max(t.last, last.Int64)
		if row != nil {
			row.ID = audited.Int64
		}
		for i := range min(len(partIDs), len(partRows)) {
			partRows[i].ID = partIDs[i]
		}
	default: // SQLite, or one statement: no round trips to save
		for i, q := range parts {
			var err error
			if i >= first {
				err = q.(*bun.RawQuery).Scan(ctx, &t.charges[i-first].tat)
			} else {
				_, err = q.(interface {
					Exec(context.Context, ...any) (sql.Result, error)
				}).Exec(ctx)
			}
			if err != nil {
				return mapErr(err)
			}
		}
		for _, c := range changes {
			t.last = max(t.last, c.ID)
		}
	}
	if row != nil {
		t.audited = append(t.audited, row.ID)
	}
	for _, a := range t.partAudits {
		a.part.rows = append(a.part.rows, a.row.ID)
	}
	t.partAudits = nil
	return t.checkCharges()
}

// maxID is the greatest id the flush statement's part i returned, or NULL
// when there is no such part.
func maxID(i int) string {
	if i < 0 {
		return "NULL"
	}
	return fmt.Sprintf("(SELECT MAX(id) FROM w%d)", i)
}
