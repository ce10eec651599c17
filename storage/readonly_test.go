package storage_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// openBoth opens one database of d twice: as the writer that migrated it
// and as a read-only node.
func openBoth(t *testing.T, d storage.Dialect) (w, ro *storage.Store) {
	t.Helper()
	dsn := storagetest.DSN(t, d)
	w, err := storage.Open(t.Context(), d, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	ro, err = storage.OpenReadOnly(t.Context(), d, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	return w, ro
}

// A read-only store checks the schema instead of migrating it, and says
// which version it found and which it needs.
func TestReadOnlyChecksSchema(t *testing.T) {
	eachDialect(t, func(t *testing.T, d storage.Dialect) {
		dsn := storagetest.DSN(t, d)
		if d == storage.SQLite {
			if _, err := storage.OpenReadOnly(t.Context(), d, dsn); err == nil {
				t.Fatal("a read-only node opened a SQLite file that does not exist")
			}
			w, err := storage.Open(t.Context(), d, dsn) // a file without the schema, after the next step
			if err != nil {
				t.Fatal(err)
			}
			err = w.Exec(t.Context(), "DROP TABLE schema_migrations")
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		_, err := storage.OpenReadOnly(t.Context(), d, dsn)
		if err == nil || !strings.Contains(err.Error(), "no Hostmint schema") {
			t.Fatalf("read-only open of a database without a schema: %v", err)
		}

		dsn = storagetest.DSN(t, d)
		w, err := storage.Open(t.Context(), d, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for _, tc := range []struct {
			sql, want string
		}{
			{"DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)", "upgrade a writer node"},
			{"INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)", "newer than this build"},
		} {
			if err := w.Exec(t.Context(), tc.sql); err != nil {
				t.Fatal(err)
			}
			_, err := storage.OpenReadOnly(t.Context(), d, dsn)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("after %q: %v, want an error saying %q", tc.sql, err, tc.want)
			}
		}
	})
}

// A read-only store writes nothing: every write is ErrReadOnly.
func TestReadOnlyRefusesWrites(t *testing.T) {
	eachDialect(t, func(t *testing.T, d storage.Dialect) {
		_, ro := openBoth(t, d)
		_, err := ro.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error {
			t.Error("a read-only store ran a write")
			return nil
		})
		if !errors.Is(err, storage.ErrReadOnly) {
			t.Errorf("Write: %v, want ErrReadOnly", err)
		}
		if err := ro.Beat(t.Context(), time.Now()); !errors.Is(err, storage.ErrReadOnly) {
			t.Errorf("Beat: %v, want ErrReadOnly", err)
		}
	})
}

// A read-only node follows the writer by polling and measures its lag
// against the writers' heartbeat.
func TestReadOnlyFeedLag(t *testing.T) {
	eachDialect(t, func(t *testing.T, d storage.Dialect) {
		w, ro := openBoth(t, d)
		beat := time.Now().Add(-3 * time.Second)
		if err := w.Beat(t.Context(), beat); err != nil {
			t.Fatal(err)
		}
		f, rec := startFeed(t, ro)
		if lag, _ := f.Lag(); lag < 3*time.Second || lag > 10*time.Second {
			t.Errorf("lag with a heartbeat 3 s old: %v", lag)
		}
		id := change(t, w, "h1") // no wake crosses stores: the poll finds it
		waitApplied(t, f, id)
		if ids := rec.ids(); len(ids) != 1 || ids[0] != id {
			t.Errorf("applied %v, want [%d]", ids, id)
		}
		if err := w.Beat(t.Context(), time.Now()); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the lag to follow the heartbeat", func() bool {
			lag, n := f.Lag()
			return lag < time.Second && n == 0
		})
		checkFeedErr(t, f)
	})
}

// A writer that has applied everything it read is not behind.
func TestWriterFeedLag(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		f, _ := startFeed(t, s)
		waitApplied(t, f, change(t, s, "h1"))
		if lag, n := f.Lag(); lag != 0 || n != 0 {
			t.Errorf("Lag = %v, %d; want 0, 0", lag, n)
		}
	})
}
