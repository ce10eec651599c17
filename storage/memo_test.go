package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// A name read by its label leaves what the next call reads again: the
// hostname's row for LockHostname, or, when no hostname holds the label,
// the account and pool domain for AccountAndPool. On PostgreSQL that
// call then sends nothing, unless a statement went in between; either way
// it answers what it would have read.
func TestLockLabelReadsAhead(t *testing.T) {
	cases := []struct {
		name    string
		label   string
		between bool // a statement between the two calls
	}{
		{"held", "one", false},
		{"free", "free", false},
		{"held, a statement between", "one", true},
		{"free, a statement between", "free", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, s *storage.Store) {
				seed(t, s)
				insertHosts(t, s, host("h-1", acct, "one", storage.StatusLive, 0, 1))
				stmts := s.CountStatements()
				write(t, s, func(ctx context.Context, tx *storage.Tx) error {
					h, err := tx.HostnameForMint(ctx, dom, c.label, acct, "")
					if c.label == "free" != errors.Is(err, storage.ErrNotFound) {
						t.Fatalf("read by label: %v", err)
					}
					if c.between {
						if _, err := tx.Account(ctx, other); err != nil {
							return err
						}
					}
					stmts.Store(0)
					if c.label == "one" {
						got, err := tx.LockHostname(ctx, "h-1")
						if err != nil || *got != *h || got.AccountPlan != "free" {
							t.Errorf("LockHostname: %+v %v, want %+v", got, err, h)
						}
					} else {
						a, d, st, err := tx.AccountAndPool(ctx, acct, c.label, "")
						if err != nil || a.ID != acct || d == nil || d.ID != dom || st.Held || st.Retired {
							t.Errorf("AccountAndPool: %+v %+v %+v %v", a, d, st, err)
						}
					}
					sent := stmts.Load()
					if want := map[bool]int64{true: 1, false: 0}[c.between || s.Dialect() != storage.Postgres]; sent < want || sent > 2*want {
						t.Errorf("the second call sent %d statements, want %d", sent, want)
					}
					return nil
				})
			})
		})
	}
}
