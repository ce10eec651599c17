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
