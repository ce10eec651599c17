package storage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// recorded are the hostname ids of the changes after id after.
func recorded(t *testing.T, s *storage.Store, after int64) (ids []string, last int64) {
	t.Helper()
	cs, err := s.Reader().ChangesAfter(t.Context(), after, nil, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Kind == storage.KindHostname {
			ids = append(ids, c.Ref)
		}
		last = c.ID
	}
	return ids, max(last, after)
}

// Each passed idle expiry is recorded once, in the order they pass, not
// before it has settled; names that never expire, are released or expired
// and were renewed are left alone; a tie of 2 500 names at one millisecond
// crosses batches without a name lost or recorded twice.
func TestRecordExpiries(t *testing.T) {
	now := time.UnixMilli(1_000_000_000)
	ms := now.UnixMilli()
	eachStore(t, func(t *testing.T, s *storage.Store) {
		ctx := t.Context()
		seed(t, s)
		insertHosts(t, s,
			host("h-never", acct, "never", storage.StatusLive, 0, 1),
			host("h-old", acct, "old", storage.StatusLive, ms-3_600_000, 1),
			host("h-recent", acct, "recent", storage.StatusLive, ms-5_000, 1),
			host("h-settling", acct, "settling", storage.StatusLive, ms-500, 1),
			host("h-later", acct, "later", storage.StatusLive, ms+60_000, 1),
			host("h-released", acct, "released", storage.StatusReleased, ms-5_000, 1),
		)
		_, last := recorded(t, s, 0)
		n, err := s.RecordExpiries(ctx, now)
		got, last := recorded(t, s, last)
		if want := []string{"h-old", "h-recent"}; err != nil || n != 2 || !slices.Equal(got, want) {
			t.Fatalf("first pass: %d %v, recorded %v; want %v", n, err, got, want)
		}
		if n, _ := s.RecordExpiries(ctx, now); n != 0 {
			t.Errorf("a second pass at the same time recorded %d", n)
		}
		n, _ = s.RecordExpiries(ctx, now.Add(2*time.Second))
		if got, last = recorded(t, s, last); n != 1 || !slices.Equal(got, []string{"h-settling"}) {
			t.Errorf("once settled: %d, %v; want h-settling", n, got)
		}

		// 2 500 names expiring in one millisecond, and one just after.
		var hs []*storage.Hostname
		for i := range 2500 {
			hs = append(hs, host(fmt.Sprintf("h-tie-%04d", i), other, fmt.Sprintf("tie%04d", i), storage.StatusLive, ms+30_000, 2))
		}
		hs = append(hs, host("h-after-tie", other, "aftertie", storage.StatusLive, ms+30_001, 2))
		insertHosts(t, s, hs...)
		n, err = s.RecordExpiries(ctx, now.Add(40*time.Second))
		got, last = recorded(t, s, last)
		if err != nil || n != 2501 || len(got) != 2501 || got[2500] != "h-after-tie" {
			t.Fatalf("the tie: %d %v, %d recorded (last %v); want 2501", n, err, len(got), got[len(got)-1:])
		}
		if len(slices.Compact(slices.Sorted(slices.Values(got)))) != 2501 {
			t.Error("a name of the tie was recorded twice")
		}

		// Renewed before its expiry: recorded when the new one passes.
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			h, err := tx.LockHostname(ctx, "h-later")
			if err != nil {
				return err
			}
			h.ExpiresAt = ms + 120_000
			return tx.UpdateHostname(ctx, h)
		})
		if n, _ := s.RecordExpiries(ctx, now.Add(90*time.Second)); n != 0 {
			t.Errorf("a renewed name was recorded at its old expiry (%d)", n)
		}
		n, _ = s.RecordExpiries(ctx, now.Add(130*time.Second))
		if got, _ := recorded(t, s, last); n != 1 || !slices.Contains(got, "h-later") {
			t.Errorf("the renewed name at its new expiry: %d, %v", n, got)
		}
	})
}
