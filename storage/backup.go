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
// PostgreSQL stores are backed up with pg_dump (docs/operations.md, Backups).
func (s *Store) Backup(ctx context.Context, file string) error {
	if s.dialect != SQLite {
		return fmt.Errorf("storage: backup of a %s store: use pg_dump", s.dialect)
	}
	if _, err := os.Stat(file); err == nil {
		return fmt.Errorf("storage: backup: %s already exists", file)
	}
	// Made empty and private first: VACUUM INTO fills an empty file and
	// keeps its mode, and a backup holds what the store holds.
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	f.Close()
	if _, err := s.db.DB.ExecContext(ctx, "VACUUM INTO ?", file); err != nil {
		os.Remove(file)
		return fmt.Errorf("storage: backup: %w", mapErr(err))
	}
	return nil
}
