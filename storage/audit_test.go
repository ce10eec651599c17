package storage_test

import (
	"context"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// A refused request's path may hold any bytes: its entry is stored with
// them replaced, and a filter with the same bytes finds it.
func TestAuditOddBytes(t *testing.T) {
	for _, d := range []storage.Dialect{storage.SQLite, storage.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := storagetest.Open(t, d)
			for _, obj := range []string{"hostname:\xff", "hostname:a\x00b", "record:\xfe\x00"} {
				if err := s.AddAudit(ctx, &storage.AuditEntry{Actor: "key:k", Action: "DELETE /x/{id}", Object: obj, Result: "NOT_FOUND", Status: 404}); err != nil {
					t.Fatalf("%q: %v", obj, err)
				}
				es, err := s.Reader().AuditEntries(ctx, storage.AuditFilter{Object: obj}, 10)
				if err != nil || len(es) != 1 {
					t.Fatalf("filter %q: %v %v", obj, es, err)
				}
			}
		})
	}
}

// Old entries go in batches, however many; younger ones stay.
func TestPurgeAudit(t *testing.T) {
	tests := []struct {
		name       string
		old, young int
	}{
		{"none", 0, 3},
		{"some", 10, 3},
		{"more than a batch", 12_000, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, s *storage.Store) {
				ctx := t.Context()
				seedAudit(t, s, tc.old, 1000)
				seedAudit(t, s, tc.young, 5000)
				n, err := s.PurgeAudit(ctx, 2000)
				if err != nil || n != int64(tc.old) {
					t.Fatalf("PurgeAudit = %d, %v; want %d", n, err, tc.old)
				}
				es, err := s.Reader().AuditEntries(ctx, storage.AuditFilter{}, 100)
				if err != nil || len(es) != tc.young {
					t.Fatalf("%d entries left, %v; want %d", len(es), err, tc.young)
				}
			})
		})
	}
}

// seedAudit writes n audit entries at at, in one statement.
func seedAudit(t *testing.T, s *storage.Store, n int, at int64) {
	t.Helper()
	q := "INSERT INTO audit_log (at, actor, action, result, status) SELECT ?, 'admin', 'POST /x', 'ok', 200 FROM generate_series(1, ?)"
	args := []any{at, n}
	if s.Dialect() == storage.SQLite {
		q = "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?) " +
			"INSERT INTO audit_log (at, actor, action, result, status) SELECT ?, 'admin', 'POST /x', 'ok', 200 FROM g"
		args = []any{n, at}
	}
	if n > 0 {
		if err := s.Exec(t.Context(), q, args...); err != nil {
			t.Fatal(err)
		}
	}
}
