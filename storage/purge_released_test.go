package storage_test

import (
	"context"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// Released hostnames go after the retention with their finished
// certificates; one whose certificate is still being revoked, newer ones
// and live ones stay.
func TestPurgeReleased(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		old := func(id string) *storage.Hostname {
			h := host(id, acct, id, storage.StatusReleased, 0, 1)
			h.ReleasedAt = 10
			return h
		}
		recent := host("recent", acct, "recent", storage.StatusReleased, 0, 1)
		recent.ReleasedAt = 1000
		insertHosts(t, s, old("gone"), old("revoked"), old("revoking"), recent, host("live", acct, "live", storage.StatusLive, 0, 1))
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			for id, status := range map[string]string{"revoked": storage.CertRevoked, "revoking": storage.CertRevoking} {
				if err := tx.SaveCertificate(ctx, &storage.Certificate{HostnameID: id, Status: status, UpdatedAt: 1}); err != nil {
					return err
				}
			}
			return nil
		})
		n, err := s.PurgeReleased(t.Context(), 500)
		if err != nil || n != 2 {
			t.Fatalf("purged %d, %v; want 2", n, err)
		}
		for id, kept := range map[string]bool{"gone": false, "revoked": false, "revoking": true, "recent": true, "live": true} {
			_, err := s.Reader().Hostname(t.Context(), id)
			if (err == nil) != kept {
				t.Errorf("%s: kept %v (%v), want %v", id, err == nil, err, kept)
			}
		}
	})
}
