package e2e

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// change_retention: a server compacts the change feed when it starts,
// keeping the newest COUNT ids, and goes on serving and writing with ids
// that continue where they were.
func TestChangeRetention(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			o := options{dialect: d, dir: t.TempDir(), extra: []string{"change_retention 1m 1000"}}
			o.dsn = storagetest.DSN(t, d)
			if d == storage.SQLite {
				o.dsn = filepath.Join(o.dir, "hostmint.db")
			}
			st, err := storage.Open(context.Background(), d, o.dsn)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			db := openSQL(t, d, o.dsn)
			// 3000 changes a day old, as a busy day leaves them.
			seed := "INSERT INTO changes (kind, ref, created_at) SELECT 'hostname', 'gone', $1 FROM generate_series(1, 3000)"
			if d == storage.SQLite {
				seed = "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 3000) " +
					"INSERT INTO changes (kind, ref, created_at) SELECT 'hostname', 'gone', ? FROM g"
			}
			if _, err := db.Exec(seed, time.Now().Add(-24*time.Hour).UnixMilli()); err != nil {
				t.Fatal(err)
			}

			s := start(t, o)
			rows := func() (n, lo int64) {
				if err := db.QueryRow("SELECT COUNT(*), MIN(id) FROM changes").Scan(&n, &lo); err != nil {
					t.Fatal(err)
				}
				return n, lo
			}
			eventually(t, 10*time.Second, func() bool { n, _ := rows(); return n <= 1000 }, "the change feed was not compacted at start")
			newest := maxChange(t, d, o.dsn)
			if n, lo := rows(); n != 1000 || lo != newest-999 {
				t.Fatalf("%d changes left from id %d; want the newest 1000 ids, from %d", n, lo, newest-999)
			}

			_, key := s.account("pro")
			h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
			s.resolves(h.str("hostname"), dns.TypeA, "198.41.0.4")
			if id := maxChange(t, d, o.dsn); id <= newest {
				t.Fatalf("a change after compaction has id %d, not after %d", id, newest)
			}
		})
	}
}

// openSQL opens the store's database directly, closed when the test ends.
func openSQL(t *testing.T, d storage.Dialect, dsn string) *sql.DB {
	t.Helper()
	driver := "postgres"
	if d == storage.SQLite {
		driver = "sqlite"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
