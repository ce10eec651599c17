package storage_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// Many writers at once all commit: SQLite's queue in the process, and
// PostgreSQL's row locks, make them wait their turn, never fail.
func TestConcurrentWritersAllCommit(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		const writers, each = 64, 15
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					label := fmt.Sprintf("w%d-%d", w, i)
					_, err := s.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error {
						if _, err := tx.LockAccount(ctx, acct); err != nil {
							return err
						}
						if err := tx.InsertHostname(ctx, host("h-"+label, acct, label, storage.StatusLive, 0, 1)); err != nil {
							return err
						}
						return tx.Changed(ctx, storage.KindHostname, "h-"+label)
					})
					if err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("a write failed: %v", err)
		}
		if got := held(t, s, acct); got != writers*each {
			t.Fatalf("counter %d after %d creates", got, writers*each)
		}
	})
}

// A deadlock between two transactions is run again inside the store: both
// writes commit and neither caller sees it.
func TestDeadlockRetried(t *testing.T) {
	t.Parallel()
	s := storagetest.Open(t, storage.Postgres)
	seed(t, s)
	var (
		wg      sync.WaitGroup
		barrier sync.WaitGroup
		tries   atomic.Int32
	)
	barrier.Add(2)
	lock := func(first, second string) error {
		_, err := s.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error {
			if _, err := tx.LockAccount(ctx, first); err != nil {
				return err
			}
			if tries.Add(1) <= 2 { // the first attempts meet, each holding one row
				barrier.Done()
				barrier.Wait()
			}
			_, err := tx.LockAccount(ctx, second)
			return err
		})
		return err
	}
	var errA, errB error
	wg.Go(func() { errA = lock(acct, other) })
	wg.Go(func() { errB = lock(other, acct) })
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("writes: %v, %v", errA, errB)
	}
	if n := tries.Load(); n < 3 {
		t.Fatalf("%d attempts: no deadlock was provoked", n)
	}
}
