package e2e

import (
	"testing"
	"time"
)

// [P1] A GET renews the hostname, but a client reading it 100 times a
// minute costs at most one write (one change row) a minute; each answer
// shows the stored expiry, within a minute of a fresh one.
func TestP1ReadsRenewOnceAMinute(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		_, key := s.account("pro")
		h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
		id := h.str("id")
		before := maxChange(t, s.dialect, s.dsn)
		start := time.Now()
		for range 100 {
			g := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil)
			exp := parseTime(t, g.str("expires_at"))
			if fresh := time.Now().Add(168 * time.Hour); exp.After(fresh) || exp.Before(fresh.Add(-time.Minute)) {
				t.Fatalf("GET shows expires_at %s, not within a minute of %s", exp, fresh)
			}
		}
		if elapsed := time.Since(start); elapsed > time.Minute {
			t.Skipf("100 GETs took %s, over the minute under test", elapsed)
		}
		if writes := maxChange(t, s.dialect, s.dsn) - before; writes > 1 {
			t.Fatalf("100 GETs of one hostname wrote %d changes, want at most 1", writes)
		}
		// Listing renews nothing either.
		for range 10 {
			s.must(200, "GET", "/api/v1/hostnames", key, nil)
		}
		if writes := maxChange(t, s.dialect, s.dsn) - before; writes > 1 {
			t.Fatalf("listing wrote %d changes", writes)
		}
	})
}
