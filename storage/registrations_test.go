package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// A registration keeps its two newest values (a value sent again keeps the
// other), is served from when its newest was written, and is purged by when
// it was last used; rate events are purged by age.
func TestRegistrations(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			for _, r := range []storage.Registration{
				{ID: "u-old", Subdomain: "s-old", Name: "s-old.auth.example.org", PasswordHash: "h", UsedAt: 10, CreatedAt: 10},
				{ID: "u-new", Subdomain: "s-new", Name: "s-new.auth.example.org", PasswordHash: "h", AllowFrom: "192.0.2.0/24", UsedAt: 10, CreatedAt: 10},
			} {
				if err := tx.InsertRegistration(ctx, &r); err != nil {
					return err
				}
			}
			for i, v := range []string{"a", "b", "b", "c"} {
				if err := tx.PublishRegistration(ctx, "u-new", v, int64(100+i)); err != nil {
					return err
				}
			}
			if err := tx.PublishRegistration(ctx, "nobody", "a", 1); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("publishing for no registration: %v, want ErrNotFound", err)
			}
			for _, at := range []int64{5, 5000} {
				if err := tx.AddRateEvent(ctx, &storage.RateEvent{AccountID: "network:192.0.2.0/24", Kind: "acme-register", At: at}); err != nil {
					return err
				}
			}
			return nil
		})
		r, err := s.Reader().Registration(t.Context(), "u-new")
		if err != nil || r.TXTNew != "c" || r.TXTOld != "b" || r.TXTAt != 103 || r.UsedAt != 103 || r.AllowFrom != "192.0.2.0/24" {
			t.Fatalf("registration %+v, %v; want values c, b at 103", r, err)
		}
		var served []string
		if err := s.Reader().ScanServedRegistrations(t.Context(), 50, func(r *storage.Registration) error {
			served = append(served, r.ID)
			return nil
		}); err != nil || len(served) != 1 || served[0] != "u-new" {
			t.Fatalf("served %v, %v; want [u-new]", served, err)
		}
		if n, err := s.PurgeUnusedRegistrations(t.Context(), 50); err != nil || n != 1 {
			t.Fatalf("purged %d, %v; want 1", n, err)
		}
		if list, err := s.Reader().Registrations(t.Context(), "", 10); err != nil || len(list) != 1 || list[0].ID != "u-new" || list[0].PasswordHash != "" {
			t.Fatalf("list %+v, %v; want u-new alone, without its hash", list, err)
		}
		if n, err := s.PurgeRateEvents(t.Context(), 1000); err != nil || n != 1 {
			t.Fatalf("purged %d rate events, %v; want 1", n, err)
		}
		write(t, s, func(ctx context.Context, tx *storage.Tx) error {
			if err := tx.DeleteRegistration(ctx, "u-new"); err != nil {
				return err
			}
			if err := tx.DeleteRegistration(ctx, "u-new"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("deleting twice: %v, want ErrNotFound", err)
			}
			return nil
		})
	})
}
