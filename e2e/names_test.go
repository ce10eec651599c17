package e2e

import (
	"testing"

	"github.com/miekg/dns"
)

// Labels: the spec's syntax (3-63 of a-z 0-9 -, no hyphen at either end)
// and nothing more on a team's own domain; [P1]'s shared pool domains also
// refuse blocked and impersonating terms, internationalised (xn--) names
// among them. A nameserver's own name is never a hostname.
func TestLabelRules(t *testing.T) {
	t.Parallel()
	t.Run("profile 2", func(t *testing.T) {
		t.Parallel()
		s := start(t, options{profile: 2, extra: []string{"nameserver ns2.coll.example.net"}})
		_, key := s.team(t, "own.example.net")
		_, other := s.team(t, "coll.example.net")
		for _, c := range []struct {
			key, sub, domain string
			status           int
		}{
			{key, "www", "own.example.net", 201}, // blocked on a pool domain, the team's own here
			{key, "admin", "own.example.net", 201},
			{key, "my--host", "own.example.net", 201},
			{key, "xn--bcher-kva", "own.example.net", 201},
			{key, "ns1", "own.example.net", 201}, // ns1.example.org is elsewhere
			{other, "ns2", "coll.example.net", 409},
			{key, "-ab", "own.example.net", 400},
		} {
			r := s.do("POST", "/api/v1/hostnames", c.key, map[string]any{"ip": "198.41.0.4", "subdomain": c.sub, "domain": c.domain})
			if r.status != c.status {
				t.Errorf("subdomain %s on %s: %d %s, want %d", c.sub, c.domain, r.status, r.raw, c.status)
			}
		}
	})
	t.Run("profile 1", func(t *testing.T) {
		t.Parallel()
		s := start(t, options{})
		_, key := s.account("pro")
		for _, c := range []struct {
			label  string
			status int
		}{
			{"my--host", 201},
			{"xn--bcher-kva", 400},
			{"www", 400},
		} {
			r := s.do("POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": c.label})
			if r.status != c.status {
				t.Errorf("label %s: %d %s, want %d", c.label, r.status, r.raw, c.status)
			}
		}
	})
}

// A record's name may be sent as the API answers it (fully qualified, with
// or without the final dot) or relative to the hostname.
func TestRecordNames(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2})
	_, key := s.team(t, "names.example.net")
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "box"})
	id, name := h.str("id"), h.str("hostname")
	s.live(t, key, id)
	path := "/api/v1/hostnames/" + id + "/records"
	for _, c := range []struct{ sent, stored string }{
		{"info", "info." + name},
		{"fq." + name, "fq." + name},
		{"dot." + name + ".", "dot." + name},
		{name, name},
		{"UP." + name, "up." + name},
	} {
		r := s.must(201, "POST", path, key, map[string]any{"type": "TXT", "name": c.sent, "text": "v=1 " + c.sent})
		if r.str("name") != c.stored {
			t.Errorf("name %q stored as %s, want %s", c.sent, r.str("name"), c.stored)
			continue
		}
		// PUT may repeat the name as it was answered.
		u := s.must(200, "PUT", path+"/"+r.str("id"), key, map[string]any{"type": "TXT", "name": r.str("name"), "text": "v=2"})
		if u.str("name") != c.stored {
			t.Errorf("PUT with name %s: %s", r.str("name"), u.raw)
		}
	}
	if m := s.query("fq."+name, dns.TypeTXT, "udp"); len(m.Answer) != 1 || m.Answer[0].(*dns.TXT).Txt[0] != "v=2" {
		t.Errorf("fq.%s TXT: %v", name, m.Answer)
	}
	r := s.must(201, "POST", path, key, map[string]any{"type": "TXT", "name": "other", "text": "x"})
	s.must(400, "PUT", path+"/"+r.str("id"), key, map[string]any{"type": "TXT", "name": "info." + name, "text": "y"})
}

// Record values: no control character in TXT or CAA text (C1 included), a
// null MX stands alone at its name (RFC 7505), and a target is a host name.
func TestRecordValueRules(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2})
	_, key := s.team(t, "values.example.net")
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "box"})
	id := h.str("id")
	s.live(t, key, id)
	path := "/api/v1/hostnames/" + id + "/records"
	s.must(400, "POST", path, key, map[string]any{"type": "TXT", "text": "a\u0085b"})
	s.must(400, "POST", path, key, map[string]any{"type": "CAA", "flags": 0, "tag": "issue", "value": "ca.example\u009b"})

	null := s.must(201, "POST", path, key, map[string]any{"type": "MX", "name": "nomail", "preference": 0, "exchange": "."})
	s.must(409, "POST", path, key, map[string]any{"type": "MX", "name": "nomail", "preference": 10, "exchange": "mx.example.com"})
	mx := s.must(201, "POST", path, key, map[string]any{"type": "MX", "name": "mail", "preference": 10, "exchange": "mx.example.com"})
	s.must(409, "POST", path, key, map[string]any{"type": "MX", "name": "mail", "preference": 0, "exchange": "."})
	s.must(201, "POST", path, key, map[string]any{"type": "MX", "name": "mail", "preference": 20, "exchange": "mx2.example.com"})
	s.must(409, "PUT", path+"/"+mx.str("id"), key, map[string]any{"type": "MX", "preference": 0, "exchange": "."})
	s.must(200, "PUT", path+"/"+null.str("id"), key, map[string]any{"type": "MX", "preference": 0, "exchange": "."})
	if m := s.query("nomail."+h.str("hostname"), dns.TypeMX, "udp"); len(m.Answer) != 1 || m.Answer[0].(*dns.MX).Mx != "." {
		t.Errorf("nomail MX: %v", m.Answer)
	}

	for _, target := range []string{"198.41.0.9", "[2001:db8::1]"} {
		if r := s.do("PUT", "/api/v1/hostnames/"+id, key, map[string]any{"target": target}); r.status != 400 {
			t.Errorf("target %s: %d %s, want 400", target, r.status, r.raw)
		}
	}
}
