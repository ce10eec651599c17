package storage

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// An idle [P1] name stops resolving when its expires_at passes, with no
// write: the index checks expiry at answer time. A secondary, though, only
// learns of what changes, so each expiry is recorded as a hostname change
// once it has passed: the feed carries it to every node, whose IXFR then
// deletes the name and whose NOTIFY says so. expiry_marks holds how far
// expiries have been recorded, as (expires_at, id), so that every node may
// run the pass and each expiry is recorded once.

// expiryBatch is how many expiries one transaction records.
const expiryBatch = 1000

// expirySettle is how long after an expiry it is recorded: a write that
// set an expires_at this close to now may not have committed yet, and a
// pass must not move past it unseen.
const expirySettle = time.Second

// RecordExpiries records, as hostname changes, the idle expiries that
// passed by now (less expirySettle) since the last pass, in transactions of
// expiryBatch found through hostnames_expiring, and returns how many it
// recorded. Two nodes running it at once take turns on expiry_marks' row.
func (s *Store) RecordExpiries(ctx context.Context, now time.Time) (int, error) {
	upto := now.Add(-expirySettle).UnixMilli()
	total := 0
	for {
		n, err := s.recordExpiryBatch(ctx, upto)
		total += n
		if err != nil || n < expiryBatch {
			return total, err
		}
	}
}

type expiryMark struct {
	At int64  `bun:"at"`
	ID string `bun:"hostname_id"`
}

func (s *Store) recordExpiryBatch(ctx context.Context, upto int64) (int, error) {
	// A look first, outside a transaction: most passes find nothing, and
	// need not take the write lock to say so.
	mark, err := s.Reader().expiryMark(ctx, false)
	if err != nil {
		return 0, err
	}
	if found, err := s.Reader().expiring(mark, upto).Exists(ctx); err != nil || !found {
		return 0, mapErr(err)
	}
	var n int
	_, err = s.Write(ctx, func(ctx context.Context, tx *Tx) error {
		// The mark's row lock orders two nodes' passes.
		_, err := tx.tx.ExecContext(ctx, "INSERT INTO expiry_marks (id, at, hostname_id) VALUES (1, 0, '') ON CONFLICT (id) DO NOTHING")
		if err != nil {
			return mapErr(err)
		}
		mark, err := tx.expiryMark(ctx, s.dialect == Postgres)
		if err != nil {
			return err
		}
		var rows []expiryMark
		err = tx.Queries.expiring(mark, upto).ColumnExpr("expires_at AS at, id AS hostname_id").
			OrderExpr("expires_at, id").Limit(expiryBatch).Scan(ctx, &rows)
		if err != nil {
			return mapErr(err)
		}
		n = len(rows)
		if n == 0 {
			return nil
		}
		for _, r := range rows {
			if err := tx.Changed(ctx, KindHostname, r.ID); err != nil {
				return err
			}
		}
		last := rows[n-1]
		_, err = tx.tx.NewUpdate().TableExpr("expiry_marks").Set("at = ?, hostname_id = ?", last.At, last.ID).
			Where("id = 1").Exec(ctx)
		return mapErr(err)
	})
	return n, err
}

// expiring selects the live names whose expiry is after mark and by upto.
// From the mark on, ties at its millisecond are broken by id; the lower
// bound is a plain one on expires_at, so that SQLite ranges the index from
// it (0 is "never expires").
func (q Queries) expiring(mark expiryMark, upto int64) *bun.SelectQuery {
	return q.db.NewSelect().Model((*Hostname)(nil)).
		Where("status = ? AND expires_at >= ? AND expires_at <= ?", StatusLive, max(mark.At, 1), upto).
		Where("(expires_at > ? OR id > ?)", mark.At, mark.ID)
}

// expiryMark reads how far expiries have been recorded (the beginning
// when no pass has run), locking the row when lock is set.
func (q Queries) expiryMark(ctx context.Context, lock bool) (expiryMark, error) {
	var marks []expiryMark
	sq := q.db.NewSelect().TableExpr("expiry_marks").Column("at", "hostname_id").Where("id = 1")
	if lock {
		sq = sq.For("UPDATE")
	}
	if err := sq.Scan(ctx, &marks); err != nil {
		return expiryMark{}, mapErr(err)
	}
	if len(marks) == 0 {
		return expiryMark{}, nil
	}
	return marks[0], nil
}
