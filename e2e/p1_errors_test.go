package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// Every P1 error of the spec's table, each with the status, the {error,
// code} body, and nothing changed by it.
func TestP1Errors(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		acct, free := s.account("free")
		_, other := s.account("business")
		_, pro := s.account("pro")
		mine := s.must(201, "POST", "/api/v1/hostnames", free, map[string]any{"ip": "198.41.0.4"}).str("id")
		theirs := s.must(201, "POST", "/api/v1/hostnames", other, map[string]any{"ip": "198.41.0.4", "label": "taken-one"}).str("id")
		released := s.must(201, "POST", "/api/v1/hostnames", free, map[string]any{"ip": "198.41.0.4"}).str("id")
		s.must(200, "DELETE", "/api/v1/hostnames/"+released, free, nil)

		revokedKey := s.must(201, "POST", "/api/admin/accounts/"+acct+"/keys", s.admin, map[string]any{}).body
		s.must(200, "DELETE", "/api/admin/keys/"+revokedKey["id"].(string), s.admin, nil)

		big := `{"ip":"198.41.0.4","label":"` + strings.Repeat("a", 5000) + `"}`
		tests := []struct {
			name         string
			method, path string
			token        string
			body         any
			status       int
			code         string
			msg          string // part of the message, if it matters
		}{
			{"invalid JSON", "POST", "/api/v1/hostnames", free, `{"ip":`, 400, "BAD_REQUEST", "JSON"},
			{"not an object", "POST", "/api/v1/hostnames", free, `["198.41.0.4"]`, 400, "BAD_REQUEST", ""},
			{"empty body", "POST", "/api/v1/hostnames", free, "", 400, "BAD_REQUEST", "empty"},
			{"body over 4KB", "POST", "/api/v1/hostnames", free, big, 400, "BAD_REQUEST", "4KB"},
			{"ip missing", "POST", "/api/v1/hostnames", free, map[string]any{}, 400, "BAD_REQUEST", "ip is required"},
			{"ip not a string", "POST", "/api/v1/hostnames", free, `{"ip":17}`, 400, "BAD_REQUEST", "ip"},
			{"ip does not parse", "POST", "/api/v1/hostnames", free, map[string]any{"ip": "300.1.1.1"}, 400, "BAD_REQUEST", "300.1.1.1"},
			{"ip with zone", "POST", "/api/v1/hostnames", free, map[string]any{"ip": "fe80::1%eth0"}, 400, "BAD_REQUEST", ""},
			{"unknown field", "POST", "/api/v1/hostnames", free, map[string]any{"ip": "198.41.0.4", "colour": "red"}, 400, "BAD_REQUEST", "colour"},
			{"trailing data", "POST", "/api/v1/hostnames", free, `{"ip":"198.41.0.4"} {}`, 400, "BAD_REQUEST", ""},
			{"label malformed", "POST", "/api/v1/hostnames", pro, map[string]any{"ip": "198.41.0.4", "label": "-bad"}, 400, "BAD_REQUEST", "label"},
			{"label too short", "POST", "/api/v1/hostnames", pro, map[string]any{"ip": "198.41.0.4", "label": "ab"}, 400, "BAD_REQUEST", "label"},
			{"label with a period", "POST", "/api/v1/hostnames", pro, map[string]any{"ip": "198.41.0.4", "label": "a.b.c"}, 400, "BAD_REQUEST", "label"},
			{"label reserved", "POST", "/api/v1/hostnames", pro, map[string]any{"ip": "198.41.0.4", "label": "www"}, 400, "BAD_REQUEST", "reserved"},
			{"label impersonating", "POST", "/api/v1/hostnames", pro, map[string]any{"ip": "198.41.0.4", "label": "paypa1-login"}, 400, "BAD_REQUEST", "reserved"},
			{"label of a nameserver", "POST", "/api/v1/hostnames", pro, map[string]any{"ip": "198.41.0.4", "label": "ns1"}, 400, "BAD_REQUEST", ""},
			{"no Authorization", "GET", "/api/v1/hostnames", "", nil, 401, "UNAUTHORIZED", "Missing or invalid API key"},
			{"malformed key", "GET", "/api/v1/hostnames", "not-a-key", nil, 401, "UNAUTHORIZED", "Missing or invalid API key"},
			{"unknown key", "GET", "/api/v1/hostnames", "svc_abcdefgh_ijklmnop", nil, 401, "UNAUTHORIZED", "Missing or invalid API key"},
			{"wrong secret", "GET", "/api/v1/hostnames", wrongSecret(free), nil, 401, "UNAUTHORIZED", "Missing or invalid API key"},
			{"revoked key", "GET", "/api/v1/hostnames", revokedKey["key"].(string), nil, 401, "UNAUTHORIZED", "Missing or invalid API key"},
			{"admin token is not an API key", "GET", "/api/v1/hostnames", s.admin, nil, 401, "UNAUTHORIZED", ""},
			{"private ip on free", "POST", "/api/v1/hostnames", free, map[string]any{"ip": "192.168.1.10"}, 403, "FORBIDDEN", "Business"},
			{"reserved ip on pro", "POST", "/api/v1/hostnames", pro, map[string]any{"ip": "2001:db8::1"}, 403, "FORBIDDEN", "Business"},
			{"loopback on free", "POST", "/api/v1/hostnames", free, map[string]any{"ip": "127.0.0.1"}, 403, "FORBIDDEN", ""},
			{"PUT private on free", "PUT", "/api/v1/hostnames/" + mine, free, map[string]any{"ip": "10.1.2.3"}, 403, "FORBIDDEN", ""},
			{"custom label on free", "POST", "/api/v1/hostnames", free, map[string]any{"ip": "198.41.0.4", "label": "my-label"}, 403, "FORBIDDEN", "Pro"},
			{"another account's hostname (GET)", "GET", "/api/v1/hostnames/" + theirs, free, nil, 404, "NOT_FOUND", "Hostname not found"},
			{"another account's hostname (PUT)", "PUT", "/api/v1/hostnames/" + theirs, free, map[string]any{"ip": "198.41.0.5"}, 404, "NOT_FOUND", "Hostname not found"},
			{"another account's hostname (renew)", "POST", "/api/v1/hostnames/" + theirs + "/renew", free, nil, 404, "NOT_FOUND", "Hostname not found"},
			{"another account's hostname (DELETE)", "DELETE", "/api/v1/hostnames/" + theirs, free, nil, 404, "NOT_FOUND", "Hostname not found"},
			{"no such hostname", "GET", "/api/v1/hostnames/h_nothere", free, nil, 404, "NOT_FOUND", "Hostname not found"},
			{"no such endpoint", "GET", "/api/v1/nothing", free, nil, 404, "NOT_FOUND", ""},
			{"no such endpoint, no auth", "GET", "/nothing", "", nil, 404, "NOT_FOUND", ""},
			{"method not allowed", "PATCH", "/api/v1/hostnames", free, nil, 405, "METHOD_NOT_ALLOWED", ""},
			{"PUT released", "PUT", "/api/v1/hostnames/" + released, free, map[string]any{"ip": "198.41.0.4"}, 409, "CONFLICT", "register a new"},
			{"renew released", "POST", "/api/v1/hostnames/" + released + "/renew", free, nil, 409, "CONFLICT", "register a new"},
			{"label taken", "POST", "/api/v1/hostnames", pro, map[string]any{"ip": "198.41.0.4", "label": "taken-one"}, 409, "CONFLICT", "taken"},
		}
		before := s.must(200, "GET", "/api/v1/hostnames", free, nil).raw
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				r := s.do(tc.method, tc.path, tc.token, tc.body)
				if r.status != tc.status || r.str("code") != tc.code {
					t.Fatalf("status %d code %q, want %d %q: %s", r.status, r.str("code"), tc.status, tc.code, r.raw)
				}
				if r.str("error") == "" || len(r.body) != 2 {
					t.Fatalf("error body is not exactly {error, code}: %s", r.raw)
				}
				if !strings.Contains(r.str("error"), tc.msg) {
					t.Fatalf("message %q does not mention %q", r.str("error"), tc.msg)
				}
			})
		}
		if after := s.must(200, "GET", "/api/v1/hostnames", free, nil).raw; string(after) != string(before) {
			t.Fatalf("refused requests changed the account:\nbefore %s\nafter  %s", before, after)
		}
		if r := s.do("PATCH", "/api/v1/hostnames", free, nil); !strings.Contains(r.header.Get("Allow"), "GET") {
			t.Fatalf("405 without an Allow header: %v", r.header)
		}
		// The business plan may register private addresses.
		s.must(201, "POST", "/api/v1/hostnames", other, map[string]any{"ip": "192.168.1.10"})
	})
}

// An account holds at most 20 keys; revoked ones do not count.
func TestKeyLimit(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		acct, _ := s.account("free") // key 1
		var last string
		for i := 2; i <= 20; i++ {
			last = s.must(201, "POST", "/api/admin/accounts/"+acct+"/keys", s.admin, map[string]any{"name": fmt.Sprint(i)}).str("id")
		}
		if c := s.must(409, "POST", "/api/admin/accounts/"+acct+"/keys", s.admin, map[string]any{}); c.str("code") != "CONFLICT" {
			t.Fatal(string(c.raw))
		}
		s.must(200, "DELETE", "/api/admin/keys/"+last, s.admin, nil)
		s.must(201, "POST", "/api/admin/accounts/"+acct+"/keys", s.admin, map[string]any{})
		if l := s.must(200, "GET", "/api/admin/accounts/"+acct+"/keys", s.admin, nil); len(l.body["keys"].([]any)) != 20 {
			t.Fatalf("want 20 keys listed: %s", l.raw)
		}
	})
}

// wrongSecret is key with the last character of its secret changed (a
// fixed replacement would leave a key that already ends in it whole).
func wrongSecret(key string) string {
	last := "z"
	if strings.HasSuffix(key, last) {
		last = "y"
	}
	return key[:len(key)-1] + last
}
