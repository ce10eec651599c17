package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// A batch's parts read the account under its lock, each counting the
// creates of the parts before it, which wait for the batch's last
// statement (storage/batch_accounts.go): the cap is exact within the
// batch, which commits as one transaction.
func TestBatchCountsEarlierParts(t *testing.T) {
	const parts = 5
	errFull := errors.New("at the cap")
	for _, tc := range []struct {
		capacity, ok, full int
		seen               []int
	}{
		{capacity: 5, ok: 5, seen: []int{0, 1, 2, 3, 4}},
		{capacity: 3, ok: 3, full: 2, seen: []int{0, 1, 2, 3, 3}},
	} {
		t.Run(fmt.Sprint(tc.capacity), func(t *testing.T) {
			s := storagetest.Open(t, storage.Postgres)
			ctx := t.Context()
			write(t, s, func(ctx context.Context, tx *storage.Tx) error {
				if err := tx.InsertAccount(ctx, &storage.Account{ID: "acc", Name: "a", Plan: "free", CreatedAt: 1}); err != nil {
					return err
				}
				return tx.InsertDomain(ctx, &storage.Domain{ID: "dom", Name: "pool.test", Status: storage.DomainActive, CreatedAt: 1})
			})
			hostname := func(label string) *storage.Hostname {
				return &storage.Hostname{ID: "h_" + label, AccountID: "acc", DomainID: "dom", Label: label, Name: label + ".pool.test",
					IP: "192.0.2.1", Status: storage.StatusLive, CreatedAt: 1, UpdatedAt: 1}
			}
			release := make(chan struct{})
			go s.WriteGrouped(ctx, "acc", func(ctx context.Context, tx *storage.Tx) error {
				<-release // the parts gather meanwhile
				return nil
			})
			time.Sleep(50 * time.Millisecond)
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				seen     []int
				ok, full int
			)
			before := s.Batches()
			for i := range parts {
				wg.Go(func() {
					label := fmt.Sprintf("p%d", i)
					_, err := s.WriteGrouped(ctx, "acc", func(ctx context.Context, tx *storage.Tx) error {
						a, _, _, err := tx.AccountAndPool(ctx, "acc", label, "")
						if err != nil {
							return err
						}
						mu.Lock()
						seen = append(seen, a.ActiveHostnames)
						mu.Unlock()
						if a.ActiveHostnames >= tc.capacity {
							return errFull
						}
						tx.InsertLater(storage.KindHostname, "h_"+label, hostname(label))
						return tx.Changed(ctx, storage.KindHostname, "h_"+label)
					})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						ok++
					case errors.Is(err, errFull):
						full++
					default:
						t.Errorf("part %d: %v", i, err)
					}
				})
			}
			time.Sleep(100 * time.Millisecond) // for every part to gather
			close(release)
			wg.Wait()
			if ok != tc.ok || full != tc.full {
				t.Errorf("%d created, %d refused; want %d and %d", ok, full, tc.ok, tc.full)
			}
			if got := fmt.Sprint(seen); got != fmt.Sprint(tc.seen) {
				t.Errorf("the batch's parts saw counts %s, want %v (the creates before them counted in)", got, tc.seen)
			}
			if n := s.Batches() - before; n != 1 {
				t.Errorf("%d batches committed, want 1", n)
			}
			if a, err := s.Reader().Account(ctx, "acc"); err != nil || a.ActiveHostnames != tc.ok {
				t.Errorf("counter %d (%v), want %d", a.ActiveHostnames, err, tc.ok)
			}
		})
	}
}

// A key that is no account's id, however odd (a header's bytes), locks
// nothing and breaks nothing: the write runs, in a batch or alone.
func TestLockFirstOddKeys(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		for _, key := range []string{"acme-dns:x", "a$hostmint$b", "\xff\xfe", "a\x00b", "it's"} {
			for _, ctx := range []context.Context{t.Context(), storage.Alone(t.Context())} {
				if _, err := s.WriteGrouped(ctx, key, func(ctx context.Context, tx *storage.Tx) error {
					_, err := tx.Account(ctx, "none")
					if errors.Is(err, storage.ErrNotFound) {
						return nil
					}
					return err
				}); err != nil {
					t.Errorf("key %q: %v", key, err)
				}
			}
		}
	})
}
