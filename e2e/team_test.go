package e2e

import "testing"

// team makes a profile-2 team (plan "team", card on file) with an active
// dedicated domain, and a key with every scope team-wide.
func (s *server) team(t testing.TB, domain string) (id, key string) {
	t.Helper()
	id = s.must(201, "POST", "/api/admin/accounts", s.admin, map[string]any{"name": "team " + domain, "plan": "team"}).str("id")
	if domain != "" {
		s.must(201, "POST", "/api/admin/domains", s.admin, map[string]any{"name": domain, "account_id": id})
	}
	return id, s.key(t, id, nil)
}

// key makes a key for account with scopes (nil: all three team-wide).
func (s *server) key(t testing.TB, account string, scopes []map[string]any) string {
	t.Helper()
	body := map[string]any{"name": "k"}
	if scopes != nil {
		body["scopes"] = scopes
	}
	return s.must(201, "POST", "/api/admin/accounts/"+account+"/keys", s.admin, body).str("key")
}

// live waits until the hostname reads live.
func (s *server) live(t testing.TB, key, id string) response {
	t.Helper()
	var r response
	eventually(t, 5e9, func() bool {
		r = s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil)
		return r.str("status") == "live"
	}, "hostname %s never went live", id)
	return r
}
