// Package storagetest gives tests a fresh, empty store on each dialect: a
// new SQLite file, or a new PostgreSQL database on the test server
// (HOSTMINT_TEST_PG, default postgres://postgres@127.0.0.1:5432/test),
// dropped when the test ends.
package storagetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/hostmint/hostmint/storage"
	_ "github.com/lib/pq"
)

// Dialects are the databases every storage test runs on.
var Dialects = []storage.Dialect{storage.SQLite, storage.Postgres}

// AdminDSN is the PostgreSQL server tests create their databases on.
func AdminDSN() string {
	if v := os.Getenv("HOSTMINT_TEST_PG"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// DSN returns a connection string for a new, empty database of dialect d.
func DSN(t testing.TB, d storage.Dialect) string {
	t.Helper()
	if d == storage.SQLite {
		return filepath.Join(t.TempDir(), "hostmint.db")
	}
	admin, err := sql.Open("postgres", AdminDSN())
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "hostmint_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		admin.Close()
		t.Fatalf("PostgreSQL at %s: %v (run ./scripts/test-deps.sh)", AdminDSN(), err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		admin.Close()
	})
	u, err := url.Parse(AdminDSN())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// Open opens a new, empty, migrated store of dialect d.
func Open(t testing.TB, d storage.Dialect) *storage.Store {
	t.Helper()
	s, err := storage.Open(context.Background(), d, DSN(t, d))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
