package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// Answers older than the cutoff go, in batches, through the index; newer
// ones stay; a claim of a key that is taken is ErrConflict.
func TestIdempotencyKeys(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		const old = 5003 // more than a purge batch
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			for i := range old + 3 {
				at := int64(1000 + i)
				if i >= old {
					at = 100000
				}
				k := &storage.IdempotencyKey{Scope: "admin", Key: fmt.Sprint("k", i), Fingerprint: "f", Status: 201, Answer: "{}", CreatedAt: at}
				if err := tx.ClaimIdempotencyKey(ctx, k, 0); err != nil {
					return err
				}
			}
			return nil
		})
		_, err := s.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error {
			return tx.ClaimIdempotencyKey(ctx, &storage.IdempotencyKey{Scope: "admin", Key: "k1", CreatedAt: 100001}, 0)
		})
		if !errors.Is(err, storage.ErrConflict) {
			t.Errorf("claiming a taken key: %v, want ErrConflict", err)
		}
		n, err := s.PurgeIdempotencyKeys(t.Context(), 50000)
		if err != nil || n != old {
			t.Fatalf("purged %d, %v; want %d", n, err, old)
		}
		for i, want := range map[int]bool{0: false, old - 1: false, old: true, old + 2: true} {
			_, err := s.Reader().IdempotencyKey(t.Context(), "admin", fmt.Sprint("k", i), 0)
			if got := err == nil; got != want {
				t.Errorf("key k%d kept: %v (%v), want %v", i, got, err, want)
			}
		}
	})
}
