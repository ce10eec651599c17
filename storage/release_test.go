package storage_test

import (
	"context"

	"testing"

	"github.com/hostmint/hostmint/storage"
)

// Closing an account releases every hostname it holds in rounds of a few
// thousand, inside one transaction: all of them, with what hangs off them,
// and nobody else's; a terminated hostname stays terminated.
func TestReleaseAccountHostnames(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		ctx := t.Context()
		fillOperator(t, s, 100) // others: accounts a1..a100, hostnames h1..h100
		const k = 12_001        // more than two rounds
		fillAccount(t, s, "big", k)
		if err := s.Exec(ctx, "UPDATE hostnames SET status = 'terminated' WHERE id = 'big-7'"); err != nil {
			t.Fatal(err)
		}
		changesBefore, _ := s.CountWhere(ctx, "changes", "kind = 'hostname'")
		var n int
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			var err error
			n, err = tx.ReleaseHostnames(ctx, storage.HostnameSet{AccountID: "big"}, 42)
			return err
		})
		if n != k-1 {
			t.Fatalf("released %d, want %d", n, k-1)
		}
		for _, c := range []struct {
			table, where string
			want         int
		}{
			{"hostnames", "account_id = 'big' AND status = 'released' AND released_at = 42", k - 1},
			{"hostnames", "id = 'big-7' AND status = 'terminated'", 1},
			{"hostnames", "account_id <> 'big' AND status = 'live'", 100},
			{"records", "hostname_id LIKE 'big-%'", 1}, // the terminated one's
			{"retired_labels", "account_id = 'big'", k - 1},
			{"changes", "kind = 'hostname'", changesBefore + k - 1},
			{"accounts", "id = 'big' AND active_hostnames = 0", 1},
		} {
			if got, err := s.CountWhere(ctx, c.table, c.where); err != nil || got != c.want {
				t.Errorf("%s where %s: %d rows (%v), want %d", c.table, c.where, got, err, c.want)
			}
		}
		// Again: nothing left to release.
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			var err error
			n, err = tx.ReleaseHostnames(ctx, storage.HostnameSet{AccountID: "big"}, 43)
			return err
		})
		if n != 0 {
			t.Errorf("a second release took %d", n)
		}
	})
}

// The names of some accounts in one read; an unknown id is left out.
func TestAccountNames(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		fillOperator(t, s, 10)
		got, err := s.Reader().AccountNames(t.Context(), []string{"a1", "a7", "a7", "nobody"})
		if err != nil || len(got) != 2 || got["a1"] != "team 1" || got["a7"] != "team 7" {
			t.Errorf("AccountNames = %v, %v", got, err)
		}
		if got, err := s.Reader().AccountNames(t.Context(), nil); err != nil || len(got) != 0 {
			t.Errorf("AccountNames of none = %v, %v", got, err)
		}
	})
}
