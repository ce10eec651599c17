package storage

import (
	"context"
	"fmt"

	"github.com/hostmint/hostmint/storage/pgwire"
)

// Exec runs a statement (bun's ? placeholders) so tests can write rows the
// queries have no call for.
func (s *Store) Exec(ctx context.Context, q string, args ...any) error {
	_, err := s.db.ExecContext(ctx, q, args...)
	return err
}

// Dump returns every row of table, ordered by all its columns, as strings,
// so that two dialects' copies compare equal.
func (s *Store) Dump(ctx context.Context, table string) ([][]string, error) {
	rows, err := s.db.DB.QueryContext(ctx, "SELECT * FROM "+table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				row[i] = "NULL"
			case []byte:
				row[i] = string(v)
			case bool: // SQLite keeps booleans as 0 and 1
				row[i] = "0"
				if v {
					row[i] = "1"
				}
			default:
				row[i] = fmtAny(v)
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// CatalogTables lists the tables the database holds.
func (s *Store) CatalogTables(ctx context.Context) ([]string, error) {
	q := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
	if s.dialect == Postgres {
		q = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
	}
	var out []string
	rows, err := s.db.DB.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

func fmtAny(v any) string { return fmt.Sprint(v) }

// Flush writes the change rows noted so far, as the end of the transaction
// would, so a test can hold a transaction open after its ids are taken.
func (t *Tx) Flush(ctx context.Context) error { return t.flush(ctx, false) }

// Batches is how many batches of more than one write WriteGrouped has
// committed together.
func (s *Store) Batches() int64 { return s.groups.batches.Load() }

// ExecWithNext runs q (no arguments) in t marked to go with the next
// statement (storage/pgwire).
func (t *Tx) ExecWithNext(ctx context.Context, q string) error {
	_, err := t.tx.ExecContext(ctx, pgwire.WithNext(q))
	return mapErr(err)
}

// ExecTx runs q (no arguments) in t.
func (t *Tx) ExecTx(ctx context.Context, q string) error {
	_, err := t.tx.ExecContext(ctx, q)
	return mapErr(err)
}

// CountWhere counts table's rows that match where (a SQL condition).
func (s *Store) CountWhere(ctx context.Context, table, where string) (int, error) {
	var n int
	err := s.db.NewRaw("SELECT COUNT(*) FROM "+table+" WHERE "+where).Scan(ctx, &n)
	return n, err
}
