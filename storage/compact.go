package storage

import (
	"context"
	"time"
)

// The changes table is the feed every node tails and, through the SOA
// serial, what a secondary's IXFR will be made of; it grows with every
// write, so old rows are deleted. What goes is always a prefix of the ids:
// changes_compacted records the newest id deleted, so a reader that finds
// the ids after its own position missing can tell "compacted away" (reload
// a snapshot, or send AXFR) from "never committed" (a rolled-back
// transaction). Ids are never reused: SQLite's AUTOINCREMENT and
// PostgreSQL's sequence both only move forward, and the newest row is
// always kept besides.

// ChangeRetention says which changes compaction keeps: every change newer
// than Age, and the Count newest ids whatever their age, whichever is more.
type ChangeRetention struct {
	Age   time.Duration
	Count int64
}

// DefaultChangeRetention keeps a day of changes, and at least the last
// 100 000 ids on a quiet service.
var DefaultChangeRetention = ChangeRetention{Age: 24 * time.Hour, Count: 100_000}

// compactBatch is the span of ids (so the most rows) one compaction
// transaction deletes: it holds SQLite's write lock, or PostgreSQL's row
// locks, for a few milliseconds, so writes queued behind it barely notice.
const compactBatch = 5000

// CompactedThrough is the id through which the changes table has been
// compacted: no change with an id at or below it can be read any more (0:
// nothing was ever compacted).
func (q Queries) CompactedThrough(ctx context.Context) (int64, error) {
	var through int64
	err := q.db.NewSelect().TableExpr("changes_compacted").ColumnExpr("COALESCE(MAX(through), 0)").Scan(ctx, &through)
	return through, mapErr(err)
}

// CompactChanges deletes the changes that keep no longer holds at now,
// oldest first, in transactions of at most compactBatch ids found through
// the primary key (never a scan of the table), and returns how many it
// deleted; a million rows take a second or two (BenchmarkCompactChanges).
// Every node may run it at any time: two runs at once delete each row once,
// and the second waits on the first's lock of changes_compacted.
func (s *Store) CompactChanges(ctx context.Context, keep ChangeRetention, now time.Time) (int64, error) {
	var bounds struct {
		Lo int64 `bun:"lo"`
		Hi int64 `bun:"hi"`
	}
	// MIN and MAX of the primary key: one index probe each.
	err := s.db.NewSelect().Model((*Change)(nil)).
		ColumnExpr("COALESCE(MIN(id), 0) AS lo, COALESCE(MAX(id), 0) AS hi").Scan(ctx, &bounds)
	if err != nil {
		return 0, mapErr(err)
	}
	// The newest id is kept even with Count 0: it is what keeps ids from
	// going back were the table ever emptied.
	floor := bounds.Hi - max(keep.Count, 1)
	cutoff := now.Add(-keep.Age).UnixMilli()
	var deleted int64
	for done := bounds.Lo - 1; done < floor; {
		// A range of ids, not a LIMIT: its rows are found through the
		// primary key whatever the planner thinks of the table (a fresh
		// one, not yet analysed, had PostgreSQL sort every id up to floor).
		upto := min(floor, done+compactBatch)
		// Up to the first change still young enough: what goes is a prefix
		// of the ids, whatever clock wrote a later row.
		var young int64
		err := s.db.NewSelect().Model((*Change)(nil)).ColumnExpr("COALESCE(MIN(id), 0)").
			Where("id > ? AND id <= ? AND created_at >= ?", done, upto, cutoff).Scan(ctx, &young)
		if err != nil {
			return deleted, mapErr(err)
		}
		if young > 0 {
			upto = young - 1
		}
		if upto > done {
			n, err := s.compactThrough(ctx, done, upto)
			if err != nil {
				return deleted, err
			}
			deleted += n
		}
		if young > 0 {
			break
		}
		done = upto
	}
	return deleted, ctx.Err()
}

// compactThrough deletes the changes with ids in (after, upto] and records
// upto as compacted, in one transaction. The record comes first: its row
// lock orders two nodes compacting at once before either deletes a row.
func (s *Store) compactThrough(ctx context.Context, after, upto int64) (int64, error) {
	var n int64
	_, err := s.Write(ctx, func(ctx context.Context, tx *Tx) error {
		greatest := "MAX"
		if s.dialect == Postgres {
			greatest = "GREATEST"
		}
		_, err := tx.tx.ExecContext(ctx, "INSERT INTO changes_compacted (id, through) VALUES (1, ?) "+
			"ON CONFLICT (id) DO UPDATE SET through = "+greatest+"(changes_compacted.through, excluded.through)", upto)
		if err != nil {
			return err
		}
		res, err := tx.tx.NewDelete().Model((*Change)(nil)).Where("id > ? AND id <= ?", after, upto).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
