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

// A batch's parts read the account without its lock, each seeing the
// creates of the parts before it, and its last statement checks the cap
// again under the lock (storage/unlocked.go). Parts create as a rule
// does: below the cap only, saying so with CapActive.
func TestBatchAccountUnlocked(t *testing.T) {
	const capacity, parts = 5, 5
	errFull := errors.New("at the cap")
	for _, tc := range []struct {
		name string
		// taken: hostnames another node commits while the batch's parts
		// run, right after the part that saw takeAt read the account.
		taken, takeAt int
		ok, full      int // the answers
		seen          []int
		batchesAdded  int64
	}{
		// The parts see 0..4 and the batch commits as one transaction.
		{name: "alone on the account", ok: 5, seen: []int{0, 1, 2, 3, 4}, batchesAdded: 1},
		// The parts after the first see the other node's name: the last
		// part is refused in the batch, which commits the other four.
		{name: "room taken before the parts read", taken: 1, takeAt: 0, ok: 4, full: 1, seen: []int{0, 2, 3, 4, 5}, batchesAdded: 1},
		// Taken after the last part read: the batch would make 6, so its
		// last statement refuses it, and each write runs alone, under the
		// lock: four fit, one is refused.
		{name: "room taken after the parts read", taken: 1, takeAt: 4, ok: 4, full: 1, seen: []int{0, 1, 2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
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
			go s.WriteGrouped(ctx, "account:acc", func(ctx context.Context, tx *storage.Tx) error {
				<-release // the parts gather meanwhile
				return nil
			})
			time.Sleep(50 * time.Millisecond)
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				seen     = map[bool][]int{} // by Unlocked
				ok, full int
				taken    sync.Once
			)
			before := s.Batches()
			for i := range parts {
				wg.Go(func() {
					label := fmt.Sprintf("p%d", i)
					_, err := s.WriteGrouped(ctx, "account:acc", func(ctx context.Context, tx *storage.Tx) error {
						a, _, _, err := tx.AccountAndPool(ctx, "acc", label, "")
						if err != nil {
							return err
						}
						mu.Lock()
						seen[a.Unlocked] = append(seen[a.Unlocked], a.ActiveHostnames)
						mu.Unlock()
						if a.Unlocked && tc.taken > 0 && a.ActiveHostnames == tc.takeAt {
							taken.Do(func() { // another node, on another connection
								write(t, s, func(ctx context.Context, tx *storage.Tx) error {
									for j := range tc.taken {
										if err := tx.InsertHostname(ctx, hostname(fmt.Sprintf("other%d", j))); err != nil {
											return err
										}
									}
									return nil
								})
							})
						}
						if a.ActiveHostnames >= capacity {
							return errFull
						}
						tx.CapActive("acc", capacity)
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
			if got := fmt.Sprint(seen[true]); got != fmt.Sprint(tc.seen) {
				t.Errorf("the batch's parts saw counts %s, want %v (the creates before them counted in)", got, tc.seen)
			}
			if n := s.Batches() - before; n != tc.batchesAdded {
				t.Errorf("%d batches committed, want %d", n, tc.batchesAdded)
			}
			a, err := s.Reader().Account(ctx, "acc")
			if err != nil {
				t.Fatal(err)
			}
			if a.ActiveHostnames != capacity {
				t.Errorf("counter %d, want the cap, %d", a.ActiveHostnames, capacity)
			}
		})
	}
}

// A batch's part that creates a hostname for an account it read without
// the lock and gave no cap (a create path that forgot CapActive) runs
// again alone, where its read takes the lock: its creates are held by
// construction, and PipelineStats says so. One that gave its cap stays in
// the batch.
func TestBatchCreateWithoutCapRunsAlone(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		prefetchFixture(t, s)
		create := func(label string, capped bool) func(ctx context.Context, tx *storage.Tx) error {
			return func(ctx context.Context, tx *storage.Tx) error {
				a, _, _, err := tx.AccountAndPool(ctx, "acc", label, "")
				if err != nil {
					return err
				}
				if capped {
					tx.CapActive(a.ID, 100)
				}
				h := &storage.Hostname{ID: "h_" + label, AccountID: "acc", DomainID: "dom", Label: label, Name: label + ".pool.test",
					IP: "192.0.2.1", Addrs: "192.0.2.1", Class: "public", Status: storage.StatusLive, CreatedAt: 1, UpdatedAt: 1}
				tx.InsertLater(storage.KindHostname, h.ID, h)
				return tx.Changed(ctx, storage.KindHostname, h.ID)
			}
		}
		before := s.PipelineStats()
		errs := batchOf(t, s, []storage.Expected{storage.ExpectAccountAndPool("acc", "c1", ""), storage.ExpectAccountAndPool("acc", "c2", ""), storage.ExpectAccountAndPool("acc", "u1", "")},
			[]func(ctx context.Context, tx *storage.Tx) error{create("c1", true), create("c2", true), create("u1", false)})
		for i, err := range errs {
			if err != nil {
				t.Errorf("part %d: %v", i, err)
			}
		}
		after := s.PipelineStats()
		if hs, _ := s.Dump(t.Context(), "hostnames"); len(hs) != 5 {
			t.Errorf("%d hostnames, want 5", len(hs))
		}
		wantUnheld := int64(0)
		if s.Dialect() == storage.Postgres { // SQLite's reads are its lock: nothing to hold
			wantUnheld = 1
		}
		if got := after.Unheld - before.Unheld; got != wantUnheld {
			t.Errorf("%d parts ran alone for want of a cap, want %d (%+v)", got, wantUnheld, after)
		}
		if got := after.Parts - before.Parts; got < 2 {
			t.Errorf("%d parts committed in batches, want the two capped ones (%+v)", got, after)
		}
	})
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
