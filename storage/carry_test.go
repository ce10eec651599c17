package storage_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// A write's last statement carries its COMMIT on PostgreSQL (storage/pgwire).
// Whatever fails, that statement, its rate limit's check or the COMMIT
// after it, the write fails as it would alone, nothing of it stays, and
// the store goes on writing.
func TestCarriedCommit(t *testing.T) {
	insert := func(table, id string) string {
		if table == "accounts" {
			return "INSERT INTO accounts (id, name, plan, created_at) VALUES ('" + id + "', 'x', 'free', 1)"
		}
		return "INSERT INTO " + table + " (id) VALUES ('" + id + "')"
	}
	account := func(id string) *storage.Account {
		return &storage.Account{ID: id, Name: "x", Plan: "free", CreatedAt: 1}
	}
	errOver := errors.New("overdrawn")
	cases := []struct {
		name   string
		pgOnly bool // a constraint only the COMMIT checks
		fn     func(ctx context.Context, tx *storage.Tx, over *int64) error
		want   error
		ids    []string // the accounts there after
	}{
		{"commits", false, func(ctx context.Context, tx *storage.Tx, _ *int64) error {
			tx.InsertLater("account", "a1", account("a1"))
			return tx.Changed(ctx, "account", "a1")
		}, nil, []string{"a1", "taken"}},
		{"within its rate limit", false, func(ctx context.Context, tx *storage.Tx, _ *int64) error {
			tx.InsertLater("account", "a1", account("a1"))
			tx.ChargeLater("taken", "test", 1000, 10, 1010, func(int64) error { return errOver })
			return nil
		}, nil, []string{"a1", "taken"}},
		{"an overdrawn rate limit", false, func(ctx context.Context, tx *storage.Tx, over *int64) error {
			tx.InsertLater("account", "a1", account("a1"))
			tx.ChargeLater("taken", "test", 1000, 10, 1004, func(o int64) error { *over = o; return errOver })
			return tx.Changed(ctx, "account", "a1")
		}, errOver, []string{"taken"}},
		{"a conflict in the statement", false, func(ctx context.Context, tx *storage.Tx, _ *int64) error {
			if err := tx.ExecTx(ctx, insert("accounts", "a1")); err != nil {
				return err
			}
			tx.InsertLater("account", "taken", account("taken"))
			return tx.Changed(ctx, "account", "taken")
		}, storage.ErrConflict, []string{"taken"}},
		{"a conflict at the COMMIT", true, func(ctx context.Context, tx *storage.Tx, _ *int64) error {
			for _, q := range []string{insert("accounts", "a1"), insert("deferred", "x"), insert("deferred", "x")} {
				if err := tx.ExecTx(ctx, q); err != nil {
					return err
				}
			}
			return tx.Changed(ctx, "account", "a1")
		}, storage.ErrConflict, []string{"taken"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, s *storage.Store) {
				if c.pgOnly && s.Dialect() != storage.Postgres {
					t.Skip("SQLite checks no constraint at the commit only")
				}
				setup := []string{insert("accounts", "taken")}
				if c.pgOnly {
					setup = append(setup, "CREATE TABLE deferred (id TEXT, CONSTRAINT deferred_id UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)")
				}
				for _, q := range setup {
					if err := s.Exec(t.Context(), q); err != nil {
						t.Fatal(err)
					}
				}
				var over int64
				_, err := s.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error { return c.fn(ctx, tx, &over) })
				if !errors.Is(err, c.want) && (err != nil || c.want != nil) {
					t.Errorf("write: %v, want %v", err, c.want)
				}
				if c.want == errOver && over != 6 {
					t.Errorf("overdrawn by %d ms, want 6", over)
				}
				if ids := accountIDs(t, s); !slices.Equal(ids, c.ids) {
					t.Errorf("accounts %v, want %v", ids, c.ids)
				}
				// The store goes on: each of its connections is in no
				// transaction, or in a new one.
				for i := range 4 {
					id := "after" + string(rune('0'+i))
					if _, err := s.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error {
						tx.InsertLater("account", id, account(id))
						return tx.Changed(ctx, "account", id)
					}); err != nil {
						t.Fatalf("the write after: %v", err)
					}
				}
			})
		})
	}
}

// accountIDs are the ids of the accounts s holds, sorted.
func accountIDs(t *testing.T, s *storage.Store) []string {
	t.Helper()
	rows, err := s.Dump(t.Context(), "accounts")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rows {
		ids = append(ids, r[0])
	}
	slices.Sort(ids)
	return ids
}
