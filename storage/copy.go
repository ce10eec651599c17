package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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

// Copy copies every row of every data table of from into to, which must be
// empty, in one transaction on to. Values are copied as they are: secret
// hashes and sealed keys stay valid as long as the service keeps its seal
// key. On PostgreSQL it then moves each id sequence to the copied maximum.
// It returns the row count of every table on both sides, and an error if
// any differ. Nothing may write to from while it runs.
func Copy(ctx context.Context, from, to *Store) ([]TableCount, error) {
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
	for _, t := range copyOrder {
		if err := copyTable(ctx, src, dst, to.dialect, t); err != nil {
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
	if _, err := dst.ExecContext(ctx, recountActive); err != nil {
		return nil, fmt.Errorf("storage: recount active hostnames: %w", mapErr(err))
	}
	if err := dst.Commit(); err != nil {
		return nil, fmt.Errorf("storage: commit copy: %w", mapErr(err))
	}
	return Counts(ctx, from, to)
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
func copyTable(ctx context.Context, src, dst *sql.Tx, to Dialect, table string) error {
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
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		_, err := dst.ExecContext(ctx, insertSQL(to, table, cols, n), batch...)
		batch, n = batch[:0], 0
		return err
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
	return flush()
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
