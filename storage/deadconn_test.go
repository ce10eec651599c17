package storage_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// Every pooled connection dies while idle (pg_terminate_backend, as a
// restart or an idle timeout would): the next writes go through on new
// connections, though a write's BEGIN waits for its first statement.
func TestWriteAfterIdleConnectionsDied(t *testing.T) {
	dsn := storagetest.DSN(t, storage.Postgres)
	s, err := storage.Open(context.Background(), storage.Postgres, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	account := func(id string) func(ctx context.Context, tx *storage.Tx) error {
		return func(ctx context.Context, tx *storage.Tx) error {
			tx.InsertLater("account", id, &storage.Account{ID: id, Name: "x", Plan: "free", CreatedAt: 1})
			return tx.Changed(ctx, "account", id)
		}
	}
	var wg sync.WaitGroup // several connections in the pool
	for i := range 6 {
		wg.Go(func() {
			if _, err := s.Write(t.Context(), account(fmt.Sprintf("before%d", i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	killer, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close()
	if _, err := killer.Exec(`SELECT pg_terminate_backend(pid, 2000) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if _, err := s.Write(t.Context(), account(fmt.Sprintf("after%d", i))); err != nil {
			t.Fatalf("write %d after the pool's connections died: %v", i, err)
		}
	}
}
