package storage_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// A statement marked to go with the next one runs, on PostgreSQL, with
// the next statement of its transaction, or before its commit; it is
// dropped by a rollback. Either way the transaction's outcome is the one
// of running it at once, as SQLite does. So is a transaction's BEGIN.
func TestWithNext(t *testing.T) {
	insert := func(id string) string {
		return "INSERT INTO accounts (id, name, plan, created_at) VALUES ('" + id + "', 'x', 'free', 1)"
	}
	refused := errors.New("refused")
	cases := []struct {
		name string
		fn   func(ctx context.Context, tx *storage.Tx) error
		want error
		ids  []string // the accounts there after
	}{
		{"before the commit", func(ctx context.Context, tx *storage.Tx) error {
			return tx.ExecWithNext(ctx, insert("a1"))
		}, nil, []string{"a1", "taken"}},
		{"in order, before the next", func(ctx context.Context, tx *storage.Tx) error {
			for _, q := range []string{"SAVEPOINT s", insert("a1"), insert("a2")} {
				if err := tx.ExecWithNext(ctx, q); err != nil {
					return err
				}
			}
			if _, err := tx.Account(ctx, "a2"); err != nil { // the next statement sees it
				return err
			}
			return tx.ExecTx(ctx, "ROLLBACK TO SAVEPOINT s")
		}, nil, []string{"taken"}},
		{"dropped by a rollback", func(ctx context.Context, tx *storage.Tx) error {
			if err := tx.ExecWithNext(ctx, insert("a1")); err != nil {
				return err
			}
			return refused
		}, refused, []string{"taken"}},
		{"failing with the next", func(ctx context.Context, tx *storage.Tx) error {
			if err := tx.ExecWithNext(ctx, insert("taken")); err != nil {
				return err
			}
			_, err := tx.Account(ctx, "taken")
			return err
		}, storage.ErrConflict, []string{"taken"}},
		{"failing before the commit", func(ctx context.Context, tx *storage.Tx) error {
			if err := tx.ExecTx(ctx, insert("a1")); err != nil {
				return err
			}
			return tx.ExecWithNext(ctx, insert("taken"))
		}, storage.ErrConflict, []string{"taken"}},
		// BEGIN goes with the first statement too: a transaction that sends
		// none has nothing to end, and one that failed sent its first
		// statement inside the transaction ("failing before the commit").
		{"no statement", func(ctx context.Context, tx *storage.Tx) error {
			return nil
		}, nil, []string{"taken"}},
		{"refused before any statement", func(ctx context.Context, tx *storage.Tx) error {
			return refused
		}, refused, []string{"taken"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, s *storage.Store) {
				if err := s.Exec(t.Context(), insert("taken")); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Write(t.Context(), c.fn); !errors.Is(err, c.want) && (err != nil || c.want != nil) {
					t.Errorf("write: %v, want %v", err, c.want)
				}
				if ids := accountIDs(t, s); !slices.Equal(ids, c.ids) {
					t.Errorf("accounts %v, want %v", ids, c.ids)
				}
			})
		})
	}
}
