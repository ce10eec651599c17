package storage_test

import (
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// The feed's clock moves once an hour without writes while a domain is
// signed, and not at all while none is or changes come anyway.
func TestTickClock(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		ctx := t.Context()
		now := time.Now()
		seedChanges(t, s, 1, now.Add(-2*time.Hour))
		tick := func(want bool, when string) {
			t.Helper()
			wrote, err := s.TickClock(ctx, now)
			if err != nil || wrote != want {
				t.Fatalf("%s: wrote %v (%v), want %v", when, wrote, err, want)
			}
		}
		tick(false, "no domain signed")
		if err := s.Exec(ctx, "INSERT INTO domains (id, name, status, created_at, dnssec, dnskey, dnssec_key, catalog_version) VALUES ('d1', 'example.org', 'active', 1, TRUE, 'k', 'k', 1)"); err != nil {
			t.Fatal(err)
		}
		tick(true, "a signed domain, the newest change two hours old")
		c, err := s.Reader().NewestChange(ctx)
		if err != nil || c.Kind != storage.KindClock || c.Ref != "" {
			t.Fatalf("newest change %+v (%v), want a clock change", c, err)
		}
		tick(false, "in the same hour again")
	})
}
