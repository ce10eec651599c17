package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// A MAC is recorded once: alone (RecordMAC) or with a write
// (RecordMACLater), whose commit it fails, with nothing of the write,
// when it was recorded already.
func TestSeenMACs(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		ctx := t.Context()
		fresh, err := s.RecordMAC(ctx, &storage.SeenMAC{Digest: "alone", ExpiresAt: 1000})
		if err != nil || !fresh {
			t.Fatalf("recording a MAC: %v, %v", fresh, err)
		}
		if fresh, err := s.RecordMAC(ctx, &storage.SeenMAC{Digest: "alone", ExpiresAt: 1000}); err != nil || fresh {
			t.Fatalf("recording it again: %v, %v; want false", fresh, err)
		}
		tries := 0
		withWrite := func(digest string) error {
			tries++
			_, err := s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
				h := host(fmt.Sprintf("h%d", tries), acct, fmt.Sprintf("l%d", tries), storage.StatusLive, 0, 1)
				tx.InsertLater(storage.KindHostname, h.ID, h)
				tx.RecordMACLater(&storage.SeenMAC{Digest: digest, ExpiresAt: 2000})
				return tx.Changed(ctx, storage.KindHostname, h.ID)
			})
			return err
		}
		if err := withWrite("written"); err != nil {
			t.Fatalf("a write with its MAC: %v", err)
		}
		before, _ := s.Reader().LastChange(ctx)
		for _, digest := range []string{"written", "alone"} {
			if err := withWrite(digest); !errors.Is(err, storage.ErrSeenMAC) {
				t.Errorf("a write with the MAC %s, recorded already: %v, want ErrSeenMAC", digest, err)
			}
		}
		if after, _ := s.Reader().LastChange(ctx); after != before {
			t.Errorf("refused writes appended changes %d..%d", before, after)
		}
		if hosts, _ := s.Dump(ctx, "hostnames"); len(hosts) != 1 {
			t.Errorf("%d hostnames committed, want 1: a refused write's was", len(hosts))
		}
		// Expired ones go; the rest stay.
		if n, err := s.PurgeSeenMACs(ctx, 1500); err != nil || n != 1 {
			t.Fatalf("purged %d, %v; want 1", n, err)
		}
		if fresh, _ := s.RecordMAC(ctx, &storage.SeenMAC{Digest: "alone", ExpiresAt: 1000}); !fresh {
			t.Error("a purged MAC is still recorded")
		}
		if fresh, _ := s.RecordMAC(ctx, &storage.SeenMAC{Digest: "written", ExpiresAt: 2000}); fresh {
			t.Error("a MAC not expired was purged")
		}
	})
}

// Grouped writes of one key, two pairs of which record the same MAC (one
// pair arriving together, one apart): of each pair exactly one commits,
// and every other write commits as if alone (a batch a MAC breaks runs
// its writes again, one by one).
func TestSeenMACsGrouped(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		const n = 64
		pairs := map[int]string{0: "twice-0", 1: "twice-0", 40: "twice-1", 60: "twice-1"}
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				digest := fmt.Sprintf("mac-%d", i)
				if pair, ok := pairs[i]; ok {
					digest = pair
				}
				_, errs[i] = s.WriteGrouped(t.Context(), "key", func(ctx context.Context, tx *storage.Tx) error {
					h := host(fmt.Sprintf("h%02d", i), acct, fmt.Sprintf("l%02d", i), storage.StatusLive, 0, 1)
					tx.InsertLater(storage.KindHostname, h.ID, h)
					tx.RecordMACLater(&storage.SeenMAC{Digest: digest, ExpiresAt: 1000})
					return tx.Changed(ctx, storage.KindHostname, h.ID)
				})
			})
		}
		close(start)
		wg.Wait()
		twice := map[string]int{}
		for i, err := range errs {
			pair, paired := pairs[i]
			switch {
			case paired && err == nil:
				twice[pair]++
			case paired && !errors.Is(err, storage.ErrSeenMAC):
				t.Errorf("write %d, with a MAC recorded twice: %v", i, err)
			case !paired && err != nil:
				t.Errorf("write %d: %v", i, err)
			}
		}
		for _, pair := range []string{"twice-0", "twice-1"} {
			if twice[pair] != 1 {
				t.Errorf("MAC %s: %d writes committed, want 1", pair, twice[pair])
			}
		}
		hosts, _ := s.Dump(t.Context(), "hostnames")
		macs, _ := s.Dump(t.Context(), "seen_macs")
		if want := n - 2; len(hosts) != want || len(macs) != want {
			t.Errorf("%d hostnames and %d MACs committed, want %d of each", len(hosts), len(macs), want)
		}
		t.Logf("%d batches", s.Batches())
	})
}
