package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// copyOrder lists every data table in an order where a row's references
// (accounts before keys and domains, hostnames before records, ...) are
// already copied, so the target's foreign keys hold at every insert.
// schema_migrations is not in it: Open has migrated the target already.
var copyOrder = []string{
	"accounts",
	"api_keys",
	"tsig_keys",
	"domains",
	"hostnames",
	"retired_labels",
	"changes",
	"changes_compacted",
	"expiry_marks",
	"rate_events",
	"rate_buckets",
	"records",
	"acme_credentials",
	"challenges",
	"acme_registrations",
	"acme_accounts",
	"certificates",
	"dashboard_sessions",
	"signin_links",
	"audit_log",
	"heartbeat",
	"idempotency_keys",
	"seen_macs",
}

// serialTables have a {{serial}} id. On PostgreSQL their sequence must be
// moved past the copied ids, or the next insert collides with a copied row
// (changes.id is the feed's sequence: it must continue, not restart).
// SQLite's AUTOINCREMENT keeps sqlite_sequence up to date by itself.
var serialTables = map[string]bool{"changes": true, "rate_events": true, "challenges": true, "audit_log": true}

// copyBatch rows per INSERT: far below both dialects' limits on bound
// parameters (SQLite 32766, PostgreSQL 65535) for the widest table.
const copyBatch = 200

// ErrTargetNotEmpty is returned by Copy when the target holds any data row.
var ErrTargetNotEmpty = errors.New("storage: target store is not empty")

// TableCount is one table's row count on both sides after a Copy.
type TableCount struct {
	Table    string
	From, To int64
}

// TableProgress is CopyWith's report on the table it is copying.
type TableProgress struct {
	Table   string
	N, Of   int           // the table's place in the copy order (from 1), and how many there are
	Rows    int64         // rows copied so far
	Total   int64         // the table's rows in the source snapshot
	Elapsed time.Duration // since this table's copy began
	Done    bool          // the last report for this table: Rows == Total
}

// CopyOptions tune CopyWith.
type CopyOptions struct {
	// Progress, if set, is called on the copying goroutine as each table
	// starts, after every batch of rows, and once with Done when the table
	// is copied; the copy waits for it, so it must be quick. Setting it
	// costs a COUNT(*) of every source table up front (a scan of each, in
	// the same snapshot) so that Total is known: for a million rows about
	// 10 ms on SQLite, 100 ms on PostgreSQL.
	Progress func(TableProgress)
}

// Copy copies every row of every data table of from into to (CopyWith
// without progress reports).
func Copy(ctx context.Context, from, to *Store) ([]TableCount, error) {
	return CopyWith(ctx, from, to, CopyOptions{})
}

// CopyWith copies every row of every data table of from into to, which
// must be empty, in one transaction on to: if it fails or ctx is cancelled
// before the commit, the transaction is rolled back and to is left empty,
// ready for another try. Values are copied as they are: secret hashes and
// sealed keys stay valid as long as the service keeps its seal key. On
// PostgreSQL it then moves each id sequence to the copied maximum. It
// returns the row count of every table on both sides, and an error if any
// differ. Nothing may write to from while it runs.
func CopyWith(ctx context.Context, from, to *Store, opts CopyOptions) ([]TableCount, error) {
	if err := sameSchema(ctx, from, to); err != nil {
		return nil, err
	}
	// One read transaction gives a consistent snapshot of the source.
	src, err := from.db.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: from.dialect == Postgres})
	if err != nil {
		return nil, mapErr(err)
	}
	defer src.Rollback()
	dst, err := to.db.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, mapErr(err)
	}
	defer dst.Rollback()
	if to.dialect == Postgres {
		// Two copies started into one target at once would both find it
		// empty; with the lock (the one migrate takes) the second waits and
		// then refuses cleanly instead of failing on duplicate keys.
		if _, err := dst.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
			return nil, mapErr(err)
		}
	}
	// Checked inside the transaction, after the lock (SQLite: the write
	// lock its immediate transactions take), so no write slips in between.
	for _, t := range copyOrder {
		n, err := count(ctx, dst, t)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, fmt.Errorf("%w: table %s has %d rows", ErrTargetNotEmpty, t, n)
		}
	}
	paused, err := pauseCounter(ctx, dst, to.dialect)
	if err != nil {
		return nil, mapErr(err)
	}
	totals := make([]int64, len(copyOrder))
	if opts.Progress != nil {
		for i, t := range copyOrder {
			if totals[i], err = count(ctx, src, t); err != nil {
				return nil, err
			}
		}
	}
	for i, t := range copyOrder {
		var report func(rows int64, done bool)
		if opts.Progress != nil {
			p, start := TableProgress{Table: t, N: i + 1, Of: len(copyOrder), Total: totals[i]}, time.Now()
			report = func(rows int64, done bool) {
				p.Rows, p.Done, p.Elapsed = rows, done, time.Since(start)
				opts.Progress(p)
			}
		}
		if err := copyTable(ctx, src, dst, to.dialect, t, report); err != nil {
			return nil, fmt.Errorf("storage: copy %s: %w", t, mapErr(err))
		}
		if to.dialect == Postgres && serialTables[t] {
			// is_called false on an empty table: the next id is 1, as on a new store.
			q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence('%s', 'id'), COALESCE(MAX(id), 1), MAX(id) IS NOT NULL) FROM %s", t, t)
			if _, err := dst.ExecContext(ctx, q); err != nil {
				return nil, fmt.Errorf("storage: sequence of %s: %w", t, mapErr(err))
			}
		}
	}
	if paused {
		if _, err := dst.ExecContext(ctx, "ALTER TABLE hostnames ENABLE TRIGGER hostnames_active_insert"); err != nil {
			return nil, fmt.Errorf("storage: restore the active hostnames trigger: %w", mapErr(err))
		}
	}
	if _, err := dst.ExecContext(ctx, recountActive); err != nil {
		return nil, fmt.Errorf("storage: recount active hostnames: %w", mapErr(err))
	}
	if err := dst.Commit(); err != nil {
		return nil, fmt.Errorf("storage: commit copy: %w", mapErr(err))
	}
	return Counts(ctx, from, to)
}

// pauseCounter turns off, on a PostgreSQL target and for the copy's
// transaction, the trigger that adds each insert statement's hostnames to
// their account's counter: every such update in one transaction lengthens
// the chain of versions of the account's row the next one walks: a
// million hostnames copied 200 at a time took 100 s with it, 48 without.
// The counters are recounted from the rows before the commit either way.
// ALTER TABLE is transactional, so a copy rolled back leaves the trigger
// on; one run by a role that does not own the tables copies with it on.
func pauseCounter(ctx context.Context, dst *sql.Tx, d Dialect) (bool, error) {
	if d != Postgres {
		return false, nil // SQLite updates the row in place: no chain to walk
	}
	if _, err := dst.ExecContext(ctx, "SAVEPOINT pause_counter"); err != nil {
		return false, err
	}
	if _, err := dst.ExecContext(ctx, "ALTER TABLE hostnames DISABLE TRIGGER hostnames_active_insert"); err != nil {
		if _, rerr := dst.ExecContext(ctx, "ROLLBACK TO SAVEPOINT pause_counter"); rerr != nil {
			return false, errors.Join(err, rerr)
		}
		return false, nil
	}
	return true, nil
}

// Counts returns the row count of every data table on both stores, and an
// error naming the tables whose counts differ.
func Counts(ctx context.Context, from, to *Store) ([]TableCount, error) {
	var out []TableCount
	var differ []string
	for _, t := range copyOrder {
		a, err := count(ctx, from.db.DB, t)
		if err != nil {
			return nil, err
		}
		b, err := count(ctx, to.db.DB, t)
		if err != nil {
			return nil, err
		}
		out = append(out, TableCount{Table: t, From: a, To: b})
		if a != b {
			differ = append(differ, fmt.Sprintf("%s (%d vs %d)", t, a, b))
		}
	}
	if len(differ) > 0 {
		return out, fmt.Errorf("storage: row counts differ: %s", strings.Join(differ, ", "))
	}
	return out, nil
}

// DataRows is the number of rows in the tables Copy copies: 0 on a store
// Copy would copy into, as one it failed on or was interrupted in is left.
func (s *Store) DataRows(ctx context.Context) (int64, error) {
	var total int64
	for _, t := range copyOrder {
		n, err := count(ctx, s.db.DB, t)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// Tables returns the names of the data tables Copy copies.
func Tables() []string { return append([]string(nil), copyOrder...) }

// sameSchema refuses stores at different schema versions: their columns
// would not line up. Open migrates both to the newest, so this only trips
// when one side was migrated by a newer build.
func sameSchema(ctx context.Context, from, to *Store) error {
	var a, b int
	if err := from.db.DB.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&a); err != nil {
		return fmt.Errorf("storage: source schema: %w", mapErr(err))
	}
	if err := to.db.DB.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&b); err != nil {
		return fmt.Errorf("storage: target schema: %w", mapErr(err))
	}
	if a != b {
		return fmt.Errorf("storage: source schema is version %d, target %d: run the same build on both", a, b)
	}
	return nil
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func count(ctx context.Context, db querier, table string) (int64, error) {
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		return 0, fmt.Errorf("storage: count %s: %w", table, mapErr(err))
	}
	return n, nil
}

// copyTable streams one table from src into dst in batches. It goes through
// database/sql with the driver's own placeholders rather than bun, which
// would inline values as literals: SQLite hands booleans back as integers,
// and PostgreSQL accepts '1' for a boolean parameter but not a literal 1.
func copyTable(ctx context.Context, src, dst *sql.Tx, to Dialect, table string, report func(rows int64, done bool)) error {
	if report == nil {
		report = func(int64, bool) {}
	}
	report(0, false)
	rows, err := src.QueryContext(ctx, "SELECT * FROM "+table)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	var batch []any
	n, copied := 0, int64(0)
	flush := func() error {
		if n == 0 {
			return nil
		}
		if _, err := dst.ExecContext(ctx, insertSQL(to, table, cols, n), batch...); err != nil {
			return err
		}
		copied += int64(n)
		batch, n = batch[:0], 0
		report(copied, false)
		return nil
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			// Text must stay text: a []byte would land in SQLite as a BLOB,
			// which never equals the TEXT the queries compare it with.
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		batch = append(batch, vals...)
		if n++; n == copyBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	report(copied, true)
	return nil
}

func insertSQL(d Dialect, table string, cols []string, rows int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, strings.Join(cols, ", "))
	p := 0
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range cols {
			if c > 0 {
				b.WriteString(", ")
			}
			p++
			if d == Postgres {
				fmt.Fprintf(&b, "$%d", p)
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}
