package storage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// The migrator: it applies the versions of migrations.go that a database
// lacks, once across nodes starting together, or checks that a database
// it may not migrate holds exactly this build's.

// dialectSQL fills in what the two dialects spell differently.
func dialectSQL(d Dialect, sql string) string {
	serial := "INTEGER PRIMARY KEY AUTOINCREMENT"
	if d == Postgres {
		serial = "BIGSERIAL PRIMARY KEY"
	}
	return strings.ReplaceAll(sql, "{{serial}}", serial)
}

// migrationLock is the PostgreSQL advisory lock that keeps nodes starting at
// the same moment from migrating twice.
const migrationLock = 0x686f73746d696e74 // "hostmint"

// migrate brings the schema to the newest version, each version in its own
// transaction together with its row in schema_migrations.
func (s *Store) migrate(ctx context.Context) error {
	for _, m := range migrations {
		var err error
		// Nodes (or processes) opening a new SQLite file at once can meet
		// SQLITE_BUSY before the busy timeout applies (while the file turns
		// to WAL): the migration runs again, as a write does.
		for n := 0; ; n++ {
			if err = s.migrateOne(ctx, m); err == nil || n == migrateRetries-1 || !retryable(err) || pause(ctx, n) != nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}

// migrateRetries is more than a write's retries: a node may wait for
// another's whole schema.
const migrateRetries = 30

// migrateOne applies m unless it is applied, in one transaction.
func (s *Store) migrateOne(ctx context.Context, m migration) error {
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if s.dialect == Postgres {
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", int64(migrationLock)); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
			return err
		}
		n, err := tx.NewSelect().Table("schema_migrations").Where("version = ?", m.version).Count(ctx)
		if err != nil || n > 0 {
			return err
		}
		stmts := strings.Split(dialectSQL(s.dialect, m.sql), ";\n")
		if extra := m.dialect[s.dialect]; extra != "" {
			stmts = append(stmts, strings.Split(extra, ";\n")...)
		}
		for _, stmt := range stmts {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("%q: %w", firstLine(stmt), err)
			}
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.version, m.name, time.Now().UnixMilli())
		return err
	})
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Version is the schema version this build migrates to.
func Version() int { return migrations[len(migrations)-1].version }

// checkSchema makes sure the database holds exactly this build's schema,
// for a node that may not migrate it (a read-only node on a standby).
func (s *Store) checkSchema(ctx context.Context) error {
	var found, count int
	err := s.db.NewRaw("SELECT COALESCE(MAX(version), 0), COUNT(*) FROM schema_migrations").Scan(ctx, &found, &count)
	if err != nil {
		if isUnavailable(err) {
			return err
		}
		return fmt.Errorf("the database holds no Hostmint schema (%v): start a writer node on its primary first, it creates the schema", err)
	}
	want := Version()
	switch {
	case found < want:
		return fmt.Errorf("the database's schema is version %d and this build needs version %d: "+
			"upgrade a writer node on the primary first (it migrates), then this node", found, want)
	case found > want:
		return fmt.Errorf("the database's schema is version %d, newer than this build's version %d: upgrade this node", found, want)
	case count != len(migrations):
		return fmt.Errorf("the database's schema has %d of this build's %d versions", count, len(migrations))
	}
	return nil
}
