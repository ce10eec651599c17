package storage

import (
	"context"
	"fmt"
	"os"
)

// Backup writes a consistent copy of a SQLite store to file with VACUUM
// INTO, which reads one snapshot while the service keeps writing (WAL) and
// writes a compact database that opens as a store as it is. file must not
// exist: VACUUM INTO never overwrites, and neither should a backup.
// PostgreSQL stores are backed up with pg_dump (README, Operations).
func (s *Store) Backup(ctx context.Context, file string) error {
	if s.dialect != SQLite {
		return fmt.Errorf("storage: backup of a %s store: use pg_dump", s.dialect)
	}
	if _, err := os.Stat(file); err == nil {
		return fmt.Errorf("storage: backup: %s already exists", file)
	}
	if _, err := s.db.DB.ExecContext(ctx, "VACUUM INTO ?", file); err != nil {
		return fmt.Errorf("storage: backup: %w", mapErr(err))
	}
	return nil
}
