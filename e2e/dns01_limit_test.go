package e2e

import (
	"strconv"
	"testing"
)

// POST /api/acme/update is limited per credential: past the limit a
// minute, 429 RATE_LIMITED with Retry-After, and nothing is published;
// another credential of the same hostname keeps its own allowance.
func TestDNS01UpdateRateLimited(t *testing.T) {
	tests := []struct {
		name  string
		extra []string
		limit int
	}{
		{"default", nil, 30},
		{"acme_update_per_minute", []string{"acme_update_per_minute 3"}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachDialect(t, options{extra: tc.extra}, func(t *testing.T, s *server) {
				e := newAcmeEnv(t, s, 1)
				h := e.mint(t, "")
				c, c2 := s.acmeCredential(t, e.key, h.id), s.acmeCredential(t, e.key, h.id)
				var values []string
				for range tc.limit {
					v := acmeValue()
					s.acmeUpdate(t, c, v)
					values = append(values, v)
				}
				r := s.acmeSend(t, "POST", "/api/acme/update", c.headers(""), acmeBody("subdomain", c.user, "txt", acmeValue()))
				acmeCheckError(t, "one over the limit", r, 429, "RATE_LIMITED")
				if secs, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || secs < 1 || secs > 60 {
					t.Errorf("Retry-After %q, want 1..60 seconds", r.header.Get("Retry-After"))
				}
				acmeServes(t, s, c.fulldomain, values[len(values)-2:]...)

				v := acmeValue()
				s.acmeUpdate(t, c2, v)
				acmeServes(t, s, c.fulldomain, values[len(values)-1], v)
			})
		})
	}
}
