package storage_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// batchOf runs fns as the parts of one batch of key "k": a write holding
// the key lets them gather first, in order. It returns each part's error.
func batchOf(t *testing.T, s *storage.Store, expects []storage.Expected, fns []func(ctx context.Context, tx *storage.Tx) error) []error {
	t.Helper()
	release := make(chan struct{})
	held := make(chan struct{})
	go s.WriteGrouped(t.Context(), "k", func(ctx context.Context, tx *storage.Tx) error {
		close(held)
		<-release
		return nil
	})
	<-held
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.WriteGrouped(storage.Expect(t.Context(), expects[i]), "k", fn)
		}()
		time.Sleep(20 * time.Millisecond) // in this order
	}
	close(release)
	wg.Wait()
	return errs
}

// prefetchFixture is an account, a pool domain and two hostnames on it.
func prefetchFixture(t *testing.T, s *storage.Store) {
	t.Helper()
	if _, err := s.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.InsertAccount(ctx, &storage.Account{ID: "acc", Name: "before", Plan: "pro", Billing: true, CreatedAt: 1}); err != nil {
			return err
		}
		if err := tx.InsertDomain(ctx, &storage.Domain{ID: "dom", Name: "pool.test", Status: storage.DomainActive, CreatedAt: 1}); err != nil {
			return err
		}
		for _, l := range []string{"one", "two"} {
			if err := tx.InsertHostname(ctx, &storage.Hostname{ID: "h_" + l, AccountID: "acc", DomainID: "dom", Label: l, Name: l + ".pool.test",
				IP: "192.0.2.1", Addrs: "192.0.2.1", Class: "public", Status: storage.StatusLive, CreatedAt: 1, UpdatedAt: 1}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A batch's parts that say what they read first are read for in one round
// trip on PostgreSQL, and each part finds what it would have read itself.
func TestPrefetchOneRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		prefetchFixture(t, s)
		const n = 6
		expects := make([]storage.Expected, n)
		fns := make([]func(ctx context.Context, tx *storage.Tx) error, n)
		for i := range n {
			label := fmt.Sprintf("new%d", i)
			if i == 0 {
				label = "one" // held: read so
			}
			expects[i] = storage.ExpectAccountAndPool("acc", label, "")
			fns[i] = func(ctx context.Context, tx *storage.Tx) error {
				a, d, st, err := tx.AccountAndPool(ctx, "acc", label, "")
				switch {
				case err != nil:
					return err
				case a.ID != "acc" || d == nil || d.ID != "dom":
					return fmt.Errorf("%s: read account %q, domain %v", label, a.ID, d)
				case st.Held != (label == "one"):
					return fmt.Errorf("%s: read held %v", label, st.Held)
				case st.Held:
					return nil
				}
				h := &storage.Hostname{ID: "h_" + label, AccountID: "acc", DomainID: "dom", Label: label, Name: label + ".pool.test",
					IP: "192.0.2.1", Addrs: "192.0.2.1", Class: "public", Status: storage.StatusLive, CreatedAt: 1, UpdatedAt: 1}
				tx.InsertLater(storage.KindHostname, h.ID, h)
				return tx.Changed(ctx, storage.KindHostname, h.ID)
			}
		}
		stmts := s.CountStatements()
		for i, err := range batchOf(t, s, expects, fns) {
			if err != nil {
				t.Errorf("part %d: %v", i, err)
			}
		}
		if hs, _ := s.Dump(t.Context(), "hostnames"); len(hs) != 2+n-1 {
			t.Errorf("%d hostnames after the batch, want %d", len(hs), 2+n-1)
		}
		// The reads, then the flush with the COMMIT; the parts' savepoints
		// go with them. (The write that held the key counts its COMMIT.)
		if s.Dialect() == storage.Postgres && stmts.Load() > 1+2 {
			t.Errorf("the batch of %d parts sent %d statements, want 2", n, stmts.Load()-1)
		}
	})
}

// What a part writes is what the parts after it read: a read the batch
// made for them before is dropped when a part changes its row (a hostname
// updated) or may have (any statement of its own), and read again.
func TestPrefetchSeesEarlierParts(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		prefetchFixture(t, s)
		var byLabel, account string
		expects := []storage.Expected{
			storage.ExpectLockedHostname("h_one"),
			storage.ExpectHostnameForMint("dom", "one", "acc", ""),
			storage.ExpectLockedHostname("h_two"),
			storage.ExpectAccountAndPool("acc", "three", ""),
		}
		fns := []func(ctx context.Context, tx *storage.Tx) error{
			func(ctx context.Context, tx *storage.Tx) error { // updates h_one
				h, err := tx.LockHostname(ctx, "h_one")
				if err != nil {
					return err
				}
				h.IP, h.Addrs = "192.0.2.2", "192.0.2.2"
				tx.UpdateHostnameLater(h)
				return tx.Changed(ctx, storage.KindHostname, h.ID)
			},
			func(ctx context.Context, tx *storage.Tx) error { // reads it by label
				h, err := tx.HostnameForMint(ctx, "dom", "one", "acc", "")
				if err != nil {
					return err
				}
				byLabel = h.IP
				return nil
			},
			func(ctx context.Context, tx *storage.Tx) error { // renames the account with a statement of its own
				if _, err := tx.LockHostname(ctx, "h_two"); err != nil {
					return err
				}
				a, err := tx.Account(ctx, "acc")
				if err != nil {
					return err
				}
				a.Name = "after"
				return tx.UpdateAccount(ctx, a)
			},
			func(ctx context.Context, tx *storage.Tx) error { // reads the account
				a, _, _, err := tx.AccountAndPool(ctx, "acc", "three", "")
				if err != nil {
					return err
				}
				account = a.Name
				return nil
			},
		}
		for i, err := range batchOf(t, s, expects, fns) {
			if err != nil {
				t.Errorf("part %d: %v", i, err)
			}
		}
		if byLabel != "192.0.2.2" {
			t.Errorf("a part read h_one at %q after the part before moved it to 192.0.2.2", byLabel)
		}
		if account != "after" {
			t.Errorf("a part read the account named %q after the part before renamed it", account)
		}
	})
}
