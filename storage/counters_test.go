package storage_test

import (
	"context"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// held reads an account's active_hostnames counter.
func held(t *testing.T, s *storage.Store, id string) int {
	t.Helper()
	a, err := s.Reader().Account(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a.ActiveHostnames
}

// The counter the cap check reads follows every status change, whichever
// path writes it, and an account rewritten from a stale copy keeps it.
func TestActiveHostnamesCounter(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		steps := []struct {
			name       string
			fn         func(ctx context.Context, tx *storage.Tx) error
			mine, them int
		}{
			{"insert live, pending and released", func(ctx context.Context, tx *storage.Tx) error {
				for _, h := range []*storage.Hostname{
					host("h1", acct, "a", storage.StatusLive, 0, 1),
					host("h2", acct, "b", storage.StatusPending, 0, 1),
					host("h3", acct, "c", storage.StatusReleased, 0, 1),
					host("h4", other, "d", storage.StatusLive, 0, 1),
				} {
					if err := tx.InsertHostname(ctx, h); err != nil {
						return err
					}
				}
				return nil
			}, 2, 1},
			{"bulk insert", func(ctx context.Context, tx *storage.Tx) error {
				return tx.InsertHostnames(ctx, []storage.Hostname{*host("h5", acct, "e", storage.StatusLive, 0, 1), *host("h6", acct, "f", storage.StatusSuspended, 0, 1)})
			}, 3, 1},
			{"pending to live counts the same", setStatus("h2", storage.StatusLive), 3, 1},
			{"release", setStatus("h1", storage.StatusReleased), 2, 1},
			{"suspend", setStatus("h5", storage.StatusSuspended), 1, 1},
			{"unsuspend", setStatus("h5", storage.StatusLive), 2, 1},
			{"terminate", setStatus("h6", storage.StatusTerminated), 2, 1},
			{"stale account rewrite", func(ctx context.Context, tx *storage.Tx) error {
				a, err := tx.Account(ctx, acct)
				if err != nil {
					return err
				}
				a.ActiveHostnames, a.Plan = 99, "pro"
				return tx.UpdateAccount(ctx, a)
			}, 2, 1},
		}
		for _, st := range steps {
			write(t, s, st.fn)
			if got, got2 := held(t, s, acct), held(t, s, other); got != st.mine || got2 != st.them {
				t.Fatalf("%s: counters %d, %d; want %d, %d", st.name, got, got2, st.mine, st.them)
			}
		}
		// A copy counts what it copied once, not twice.
		for _, d := range storagetest.Dialects {
			to := storagetest.Open(t, d)
			if _, err := storage.Copy(t.Context(), s, to); err != nil {
				t.Fatalf("copy to %s: %v", d, err)
			}
			if got := held(t, to, acct); got != 2 {
				t.Fatalf("after a copy to %s the counter is %d, want 2", d, got)
			}
		}
	})
}

func setStatus(id, status string) func(ctx context.Context, tx *storage.Tx) error {
	return func(ctx context.Context, tx *storage.Tx) error {
		h, err := tx.LockHostname(ctx, id)
		if err != nil {
			return err
		}
		h.Status = status
		return tx.UpdateHostname(ctx, h)
	}
}

// Expired names are found by the index, at most as many as asked.
func TestCountExpired(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		insertHosts(t, s,
			host("h1", acct, "a", storage.StatusLive, 100, 1),
			host("h2", acct, "b", storage.StatusLive, 200, 1),
			host("h3", acct, "c", storage.StatusLive, 0, 1),
			host("h4", acct, "d", storage.StatusReleased, 100, 1),
			host("h5", other, "e", storage.StatusLive, 100, 1))
		for _, tt := range []struct {
			now         int64
			limit, want int
		}{{50, 5, 0}, {100, 5, 1}, {200, 5, 2}, {200, 1, 1}, {1000, 5, 2}} {
			n, err := s.Reader().CountExpired(t.Context(), acct, tt.now, tt.limit)
			if err != nil || n != tt.want {
				t.Errorf("CountExpired(now %d, limit %d) = %d, %v; want %d", tt.now, tt.limit, n, err, tt.want)
			}
		}
	})
}
