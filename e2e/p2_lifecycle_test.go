package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// Every row of profile 2's state table, over HTTP and DNS.
func TestP2Lifecycle(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		_, key := s.team(t, "team.example.net")
		_, otherKey := s.team(t, "other.example.net")

		// (none) --create--> pending, served as soon as written; then live.
		h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "box"})
		id := h.str("id")
		if h.str("status") != "pending" || h.str("hostname") != "box.team.example.net" || h.str("certificate") != "self" {
			t.Fatalf("create: %s", h.raw)
		}
		if _, ok := h.body["expires_at"]; ok {
			t.Fatalf("profile 2 hostnames do not expire: %s", h.raw)
		}
		s.resolves("box.team.example.net", dns.TypeA, "198.41.0.4")
		s.live(t, key, id)

		// live --PUT same address--> unchanged.
		if p := s.must(200, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": "198.41.0.4"}); p.str("status") != "live" {
			t.Fatalf("PUT of the same address changed the status: %s", p.raw)
		}
		// live --PUT other address, same class--> pending, then live; A to AAAA is free.
		p := s.must(200, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": "2001:500:2::c"})
		if p.str("status") != "pending" || p.str("record_type") != "AAAA" {
			t.Fatalf("PUT: %s", p.raw)
		}
		s.resolves("box.team.example.net", dns.TypeAAAA, "2001:500:2::c")
		s.resolves("box.team.example.net", dns.TypeA)
		s.live(t, key, id)
		// Crossing the address class: 409, nothing changes.
		for _, ip := range []string{"10.1.2.3", "fd00::1", "127.0.0.1", "100.64.1.1"} {
			if c := s.must(409, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": ip}); c.str("code") != "CONFLICT" {
				t.Fatal(string(c.raw))
			}
		}
		s.resolves("box.team.example.net", dns.TypeAAAA, "2001:500:2::c")

		// suspended: not served, shown in lists, PUT and DELETE 403.
		if r := s.must(200, "POST", "/api/admin/hostnames/"+id+"/suspend", s.admin, nil); r.str("status") != "suspended" {
			t.Fatal(string(r.raw))
		}
		s.resolves("box.team.example.net", dns.TypeAAAA, "NXDOMAIN")
		if l := s.must(200, "GET", "/api/v1/hostnames", key, nil); !strings.Contains(string(l.raw), `"suspended"`) {
			t.Fatalf("a suspended hostname is listed: %s", l.raw)
		}
		for _, m := range []string{"PUT", "DELETE"} {
			if c := s.must(403, m, "/api/v1/hostnames/"+id, key, map[string]any{"ip": "198.41.0.9"}); c.str("code") != "FORBIDDEN" {
				t.Fatal(string(c.raw))
			}
		}
		// restore: address back, pending, then live.
		if r := s.must(200, "POST", "/api/admin/hostnames/"+id+"/restore", s.admin, nil); r.str("status") != "pending" || r.str("ip") != "2001:500:2::c" {
			t.Fatal(string(r.raw))
		}
		s.resolves("box.team.example.net", dns.TypeAAAA, "2001:500:2::c")
		s.live(t, key, id)
		s.must(409, "POST", "/api/admin/hostnames/"+id+"/restore", s.admin, nil)

		// DELETE: released, not served, idempotent; PUT 409; the team may mint the subdomain again, nobody else.
		s.must(200, "DELETE", "/api/v1/hostnames/"+id, key, nil)
		s.resolves("box.team.example.net", dns.TypeAAAA, "NXDOMAIN")
		if d := s.must(200, "DELETE", "/api/v1/hostnames/"+id, key, nil); d.body["released"] != true {
			t.Fatal(string(d.raw))
		}
		s.must(409, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": "198.41.0.4"})
		s.must(409, "POST", "/api/admin/hostnames/"+id+"/suspend", s.admin, nil)
		again := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.5", "subdomain": "box"})
		if again.str("id") == id || again.str("hostname") != "box.team.example.net" {
			t.Fatalf("re-mint: %s", again.raw)
		}
		s.resolves("box.team.example.net", dns.TypeA, "198.41.0.5")
		s.must(400, "POST", "/api/v1/hostnames", otherKey, map[string]any{"ip": "198.41.0.5", "subdomain": "box", "domain": "team.example.net"})

		// terminated: final; not listed; PUT and DELETE 409; the subdomain stays taken.
		tid := again.str("id")
		s.live(t, key, tid)
		if r := s.must(200, "POST", "/api/admin/hostnames/"+tid+"/terminate", s.admin, nil); r.str("status") != "terminated" {
			t.Fatal(string(r.raw))
		}
		s.must(200, "POST", "/api/admin/hostnames/"+tid+"/terminate", s.admin, nil)
		s.resolves("box.team.example.net", dns.TypeA, "NXDOMAIN")
		for _, m := range []string{"PUT", "DELETE"} {
			if c := s.must(409, m, "/api/v1/hostnames/"+tid, key, map[string]any{"ip": "198.41.0.9"}); c.str("code") != "CONFLICT" {
				t.Fatal(string(c.raw))
			}
		}
		s.must(409, "POST", "/api/admin/hostnames/"+tid+"/restore", s.admin, nil)
		s.must(409, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.5", "subdomain": "box"})
		if l := s.must(200, "GET", "/api/v1/hostnames", key, nil); strings.Contains(string(l.raw), tid) {
			t.Fatalf("a terminated hostname is listed: %s", l.raw)
		}
		s.must(404, "POST", "/api/admin/hostnames/h_none/suspend", s.admin, nil)
	})
}

// Private addresses are accepted on every plan, and keep their class.
func TestP2PrivateAddresses(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		_, key := s.team(t, "lan.example.net")
		h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "192.168.1.20", "subdomain": "nas"})
		s.resolves("nas.lan.example.net", dns.TypeA, "192.168.1.20")
		s.must(200, "PUT", "/api/v1/hostnames/"+h.str("id"), key, map[string]any{"ip": "fd12:3456::20"})
		s.resolves("nas.lan.example.net", dns.TypeAAAA, "fd12:3456::20")
		s.must(409, "PUT", "/api/v1/hostnames/"+h.str("id"), key, map[string]any{"ip": "198.41.0.4"})
	})
}

// Create in profile 2: every error of the spec's table for it, and the
// certificate fields.
func TestP2Create(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "cert.key")
	os.WriteFile(keyFile, []byte("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"), 0o600)
	// The CAs are never reached here: orders fail and are retried, quietly.
	cas := []string{"acme_ca letsencrypt https://127.0.0.1:9/dir", "acme_ca google https://127.0.0.1:9/dir2"}
	eachDialect(t, options{profile: 2, extra: append(cas, "cert_encryption_key_file "+keyFile)}, func(t *testing.T, s *server) {
		team, key := s.team(t, "a.example.net")
		s.must(201, "POST", "/api/admin/domains", s.admin, map[string]any{"name": "b.example.net", "account_id": team})

		unpaid := s.must(201, "POST", "/api/admin/accounts", s.admin, map[string]any{"name": "u", "plan": "team", "billing": false}).str("id")
		s.must(201, "POST", "/api/admin/domains", s.admin, map[string]any{"name": "unpaid.example.net", "account_id": unpaid})
		unpaidKey := s.key(t, unpaid, nil)
		_, bareKey := s.team(t, "")
		waiting, waitingKey := s.team(t, "")
		wd := s.must(201, "POST", "/api/admin/domains", s.admin, map[string]any{"name": "slow.example.net", "account_id": waiting, "status": "provisioning"})

		tests := []struct {
			name   string
			key    string
			body   map[string]any
			status int
			code   string
		}{
			{"no card on file", unpaidKey, map[string]any{"ip": "198.41.0.4"}, 402, "PAYMENT_REQUIRED"},
			{"no domain", bareKey, map[string]any{"ip": "198.41.0.4"}, 409, "NO_DOMAIN_AVAILABLE"},
			{"domain provisioning", waitingKey, map[string]any{"ip": "198.41.0.4"}, 409, "DOMAIN_PROVISIONING"},
			{"domain not the team's", key, map[string]any{"ip": "198.41.0.4", "domain": "unpaid.example.net"}, 400, "BAD_REQUEST"},
			{"label is profile 1", key, map[string]any{"ip": "198.41.0.4", "label": "abc"}, 400, "BAD_REQUEST"},
			{"subdomain with a period", key, map[string]any{"ip": "198.41.0.4", "subdomain": "a.b"}, 400, "BAD_REQUEST"},
			{"subdomain too short", key, map[string]any{"ip": "198.41.0.4", "subdomain": "ab"}, 400, "BAD_REQUEST"},
			{"subdomain with a leading hyphen", key, map[string]any{"ip": "198.41.0.4", "subdomain": "-abc"}, 400, "BAD_REQUEST"},
			{"certificate unknown", key, map[string]any{"ip": "198.41.0.4", "certificate": "mine"}, 400, "BAD_REQUEST"},
			{"ca with self", key, map[string]any{"ip": "198.41.0.4", "certificate": "self", "ca": "google"}, 400, "BAD_REQUEST"},
			{"ca without certificate", key, map[string]any{"ip": "198.41.0.4", "ca": "letsencrypt"}, 400, "BAD_REQUEST"},
			{"ca unknown", key, map[string]any{"ip": "198.41.0.4", "certificate": "csr", "ca": "acme"}, 400, "BAD_REQUEST"},
			{"ip missing", key, map[string]any{"subdomain": "abc"}, 400, "BAD_REQUEST"},
		}
		for _, tc := range tests {
			r := s.do("POST", "/api/v1/hostnames", tc.key, tc.body)
			if r.status != tc.status || r.str("code") != tc.code {
				t.Errorf("%s: %d %s, want %d %s", tc.name, r.status, r.raw, tc.status, tc.code)
			}
		}
		r := s.do("POST", "/api/v1/hostnames", waitingKey, map[string]any{"ip": "198.41.0.4"})
		if r.header.Get("Retry-After") == "" || r.header.Get("Location") != "/api/v1/domains/"+wd.str("id") {
			t.Fatalf("DOMAIN_PROVISIONING headers: %v", r.header)
		}
		if st := s.must(200, "GET", r.header.Get("Location"), waitingKey, nil); st.str("status") != "provisioning" || st.str("name") != "slow.example.net" {
			t.Fatalf("provisioning status: %s", st.raw)
		}
		s.must(401, "GET", r.header.Get("Location"), "", nil)
		s.must(404, "GET", r.header.Get("Location"), key, nil)
		s.must(200, "PATCH", "/api/admin/domains/"+wd.str("id"), s.admin, map[string]any{"status": "active"})
		if st := s.must(200, "GET", r.header.Get("Location"), waitingKey, nil); st.str("status") != "active" {
			t.Fatalf("after provisioning: %s", st.raw)
		}
		s.must(201, "POST", "/api/v1/hostnames", waitingKey, map[string]any{"ip": "198.41.0.4"})

		// The domain is chosen, or picked: the oldest active one.
		if h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"}); !strings.HasSuffix(h.str("hostname"), ".a.example.net") {
			t.Fatalf("picked domain: %s", h.raw)
		}
		b := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "domain": "B.Example.NET", "subdomain": "Web-1"})
		if b.str("hostname") != "web-1.b.example.net" {
			t.Fatalf("chosen domain: %s", b.raw)
		}
		s.resolves("web-1.b.example.net", dns.TypeA, "198.41.0.4")

		// Certificate modes are stored and returned.
		m := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "certificate": "managed"})
		if m.str("certificate") != "managed" || m.str("ca") != "letsencrypt" {
			t.Fatalf("managed: %s", m.raw)
		}
		c := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "certificate": "csr", "ca": "google"})
		if c.str("certificate") != "csr" || c.str("ca") != "google" {
			t.Fatalf("csr: %s", c.raw)
		}
		if g := s.must(200, "GET", "/api/v1/hostnames/"+c.str("id"), key, nil); g.str("ca") != "google" {
			t.Fatalf("read back: %s", g.raw)
		}
	})
}

// Managed certificates need a certificate encryption key, and both modes a
// CA: 501 without them.
func TestP2ManagedWithoutKey(t *testing.T) {
	s := start(t, options{profile: 2, extra: []string{"acme_ca letsencrypt https://127.0.0.1:9/dir"}})
	_, key := s.team(t, "a.example.net")
	if r := s.must(501, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "certificate": "managed"}); r.str("code") != "NOT_IMPLEMENTED" {
		t.Fatal(string(r.raw))
	}
	s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "certificate": "csr"})
	s.must(400, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "certificate": "csr", "ca": "google"})

	bare := start(t, options{profile: 2})
	_, key = bare.team(t, "b.example.net")
	for _, mode := range []string{"csr", "managed"} {
		if r := bare.must(501, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "certificate": mode}); r.str("code") != "NOT_IMPLEMENTED" {
			t.Fatal(string(r.raw))
		}
	}
}

// The profile-2 list envelope.
func TestP2ListEnvelope(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		team, key := s.team(t, "a.example.net")
		s.must(200, "PATCH", "/api/admin/accounts/"+team, s.admin, map[string]any{"cap": 10})
		var ids []string
		for range 5 {
			ids = append(ids, s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"}).str("id"))
		}
		s.must(200, "DELETE", "/api/v1/hostnames/"+ids[0], key, nil)
		s.must(200, "POST", "/api/admin/hostnames/"+ids[1]+"/terminate", s.admin, nil)
		s.must(200, "POST", "/api/admin/hostnames/"+ids[2]+"/suspend", s.admin, nil)
		l := s.must(200, "GET", "/api/v1/hostnames?limit=1&skip=-4", key, nil)
		want := map[string]float64{"total": 3, "active": 2, "cap": 10, "limit": 1, "skip": 0}
		for k, v := range want {
			if l.body[k] != v {
				t.Errorf("%s = %v, want %v: %s", k, l.body[k], v, l.raw)
			}
		}
		if hs := l.body["hostnames"].([]any); len(hs) != 1 || hs[0].(map[string]any)["id"] != ids[4] {
			t.Fatalf("page: %s", l.raw)
		}
		l = s.must(200, "GET", "/api/v1/hostnames?limit=9999&skip=1", key, nil)
		if l.body["limit"] != float64(500) || l.body["skip"] != float64(1) || len(l.body["hostnames"].([]any)) != 2 {
			t.Fatalf("clamped: %s", l.raw)
		}
	})
}
