package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// A hostname's update put off to the transaction's end lands with it, after
// the inserts queued before it (perhaps of the same row), and not at all
// when the transaction rolls back; in a batch each part's lands.
func TestUpdateHostnameLater(t *testing.T) {
	refused := errors.New("refused")
	moved := func(h *storage.Hostname) *storage.Hostname {
		c := *h
		c.IP, c.Addrs = "198.51.100.7", "198.51.100.7"
		return &c
	}
	cases := []struct {
		name   string
		fn     func(ctx context.Context, tx *storage.Tx, h *storage.Hostname) error
		want   error
		wantIP string // of h after
	}{
		{"alone", func(ctx context.Context, tx *storage.Tx, h *storage.Hostname) error {
			tx.UpdateHostnameLater(moved(h))
			return tx.Changed(ctx, storage.KindHostname, h.ID)
		}, nil, "198.51.100.7"},
		{"after its own insert", func(ctx context.Context, tx *storage.Tx, h *storage.Hostname) error {
			n := host("h-new", acct, "new", storage.StatusLive, 0, 1)
			tx.InsertLater(storage.KindHostname, n.ID, n)
			tx.UpdateHostnameLater(moved(n))
			tx.UpdateHostnameLater(moved(h))
			return tx.Changed(ctx, storage.KindHostname, n.ID)
		}, nil, "198.51.100.7"},
		{"rolled back", func(ctx context.Context, tx *storage.Tx, h *storage.Hostname) error {
			tx.UpdateHostnameLater(moved(h))
			return refused
		}, refused, "192.0.2.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, s *storage.Store) {
				seed(t, s)
				h := host("h-1", acct, "one", storage.StatusLive, 0, 1)
				insertHosts(t, s, h)
				if _, err := s.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error { return c.fn(ctx, tx, h) }); !errors.Is(err, c.want) && (err != nil || c.want != nil) {
					t.Fatalf("write: %v, want %v", err, c.want)
				}
				got, err := s.Reader().Hostname(t.Context(), h.ID)
				if err != nil || got.IP != c.wantIP {
					t.Errorf("h-1 points at %v (%v), want %s", got.IP, err, c.wantIP)
				}
				if c.name == "after its own insert" {
					if n, err := s.Reader().Hostname(t.Context(), "h-new"); err != nil || n.IP != "198.51.100.7" {
						t.Errorf("h-new: %+v %v, want it inserted and moved", n, err)
					}
				}
			})
		})
	}
	t.Run("batch", func(t *testing.T) {
		eachStore(t, func(t *testing.T, s *storage.Store) {
			seed(t, s)
			const n = 48
			hs := make([]*storage.Hostname, n)
			for i := range hs {
				hs[i] = host(fmt.Sprintf("h-%02d", i), acct, fmt.Sprintf("l%02d", i), storage.StatusLive, 0, 1)
			}
			insertHosts(t, s, hs...)
			var wg sync.WaitGroup
			for i, h := range hs {
				wg.Go(func() {
					_, err := s.WriteGrouped(t.Context(), "k", func(ctx context.Context, tx *storage.Tx) error {
						if i%3 == 2 {
							tx.UpdateHostnameLater(moved(h))
							return refused
						}
						if _, err := tx.LockHostname(ctx, h.ID); err != nil {
							return err
						}
						tx.UpdateHostnameLater(moved(h))
						return tx.Changed(ctx, storage.KindHostname, h.ID)
					})
					if want := map[bool]error{true: refused, false: nil}[i%3 == 2]; !errors.Is(err, want) && (err != nil || want != nil) {
						t.Errorf("write %d: %v, want %v", i, err, want)
					}
				})
			}
			wg.Wait()
			for i, h := range hs {
				want := map[bool]string{true: "192.0.2.1", false: "198.51.100.7"}[i%3 == 2]
				if got, err := s.Reader().Hostname(t.Context(), h.ID); err != nil || got.IP != want {
					t.Errorf("%s points at %v (%v), want %s", h.ID, got.IP, err, want)
				}
			}
		})
	})
}
