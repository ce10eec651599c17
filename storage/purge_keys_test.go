package storage_test

import (
	"context"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// Keys revoked before the cutoff go; live ones and those revoked since stay.
func TestPurgeRevokedKeys(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seed(t, s)
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			for _, k := range []struct {
				id      string
				revoked int64
			}{{"old", 10}, {"recent", 1000}, {"live", 0}} {
				if err := tx.InsertKey(ctx, &storage.APIKey{ID: k.id, AccountID: acct, SecretHash: "h", Scopes: "[]", RevokedAt: k.revoked, CreatedAt: 1}); err != nil {
					return err
				}
				if err := tx.InsertTSIGKey(ctx, &storage.TSIGKey{ID: "t" + k.id, AccountID: acct, KeyName: "t" + k.id + ".tsig", Algorithm: "hmac-sha256",
					SecretSealed: "x", Scopes: "[]", RevokedAt: k.revoked, CreatedAt: 1}); err != nil {
					return err
				}
			}
			return nil
		})
		n, err := s.PurgeRevokedKeys(t.Context(), 500)
		if err != nil || n != 2 {
			t.Fatalf("purged %d, %v; want 2 (an API key and a TSIG key)", n, err)
		}
		for _, id := range []string{"recent", "live"} {
			if _, err := s.Reader().Key(t.Context(), id); err != nil {
				t.Errorf("key %s: %v", id, err)
			}
			if _, err := s.Reader().TSIGKey(t.Context(), "t"+id); err != nil {
				t.Errorf("TSIG key t%s: %v", id, err)
			}
		}
		if _, err := s.Reader().Key(t.Context(), "old"); err == nil {
			t.Error("the key revoked before the cutoff is still there")
		}
	})
}
