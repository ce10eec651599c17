package e2e

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func keys(m map[string]any) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}

// The admin API's fixed contract (shared/DESIGN.md).
func TestAdminAPI(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		// Admin calls need the admin token.
		for _, tok := range []string{"", "wrong-token-wrong-token", "svc_a_b"} {
			if r := s.must(401, "POST", "/api/admin/accounts", tok, map[string]any{"name": "x", "plan": "free"}); r.str("code") != "UNAUTHORIZED" {
				t.Fatal(string(r.raw))
			}
		}

		a := s.must(201, "POST", "/api/admin/accounts", s.admin, map[string]any{"name": "Acme", "plan": "free"})
		if got := keys(a.body); got != "billing,cap,closed_at,created_at,id,name,plan,plan_ends_at,status" {
			t.Fatalf("account fields %s", got)
		}
		if a.body["cap"] != float64(25) || a.body["billing"] != true {
			t.Fatalf("free plan defaults: %s", a.raw)
		}
		id := a.str("id")
		s.must(400, "POST", "/api/admin/accounts", s.admin, map[string]any{"name": "x", "plan": "gold"})
		s.must(400, "POST", "/api/admin/accounts", s.admin, map[string]any{"plan": "free"})
		s.must(400, "POST", "/api/admin/accounts", s.admin, map[string]any{"name": "x", "plan": "free", "cap": -1})
		s.must(404, "GET", "/api/admin/accounts/acc_none", s.admin, nil)
		p := s.must(200, "PATCH", "/api/admin/accounts/"+id, s.admin, map[string]any{"plan": "pro"})
		if p.str("plan") != "pro" || p.body["cap"] != float64(100) || p.str("name") != "Acme" {
			t.Fatalf("patch: %s", p.raw)
		}

		k := s.must(201, "POST", "/api/admin/accounts/"+id+"/keys", s.admin, map[string]any{"name": "ci"})
		if got := keys(k.body); got != "created_at,expires_at,id,key,name,scopes" {
			t.Fatalf("key fields %s", got)
		}
		if strings.Contains(k.str("id"), "_") || k.str("key") != "svc_"+k.str("id")+"_"+strings.SplitN(k.str("key"), "_", 3)[2] {
			t.Fatalf("key shape: %s", k.raw)
		}
		s.must(404, "POST", "/api/admin/accounts/acc_none/keys", s.admin, map[string]any{})
		s.must(400, "POST", "/api/admin/accounts/"+id+"/keys", s.admin, map[string]any{"expires_at": "2001-01-01T00:00:00Z"})
		s.must(400, "POST", "/api/admin/accounts/"+id+"/keys", s.admin, map[string]any{"expires_at": "tomorrow"})
		s.must(400, "POST", "/api/admin/accounts/"+id+"/keys", s.admin, map[string]any{"scopes": []any{map[string]any{"scope": "root"}}})

		l := s.must(200, "GET", "/api/admin/accounts/"+id+"/keys", s.admin, nil)
		if strings.Contains(string(l.raw), k.str("key")) || strings.Contains(string(l.raw), `"key"`) {
			t.Fatalf("key list shows a secret: %s", l.raw)
		}
		// The key works, then stops at once when revoked.
		s.must(200, "GET", "/api/v1/hostnames", k.str("key"), nil)
		if r := s.must(200, "DELETE", "/api/admin/keys/"+k.str("id"), s.admin, nil); r.body["revoked"] != true {
			t.Fatal(string(r.raw))
		}
		s.must(401, "GET", "/api/v1/hostnames", k.str("key"), nil)
		s.must(404, "DELETE", "/api/admin/keys/"+k.str("id"), s.admin, nil)

		// Domains: added at run time and served at once.
		d := s.must(201, "POST", "/api/admin/domains", s.admin, map[string]any{"name": "Extra.Example.NET."})
		if got := keys(d.body); got != "account_id,caa,created_at,dnssec,ds,ds_published,id,name,nsec3,rollover,rollover_at,status" {
			t.Fatalf("domain fields %s", got)
		}
		if d.str("name") != "extra.example.net" || d.str("status") != "active" || d.body["account_id"] != nil {
			t.Fatalf("domain: %s", d.raw)
		}
		s.resolves("extra.example.net", dns.TypeA) // NODATA at the new apex: served, not REFUSED
		if m := s.query("extra.example.net", dns.TypeSOA, "udp"); len(m.Answer) != 1 || !m.Authoritative {
			t.Fatalf("SOA of a new domain: %v", m)
		}
		if m := s.query("nothing.example.com", dns.TypeA, "udp"); m.Rcode != dns.RcodeRefused {
			t.Fatalf("outside our domains: %s", dns.RcodeToString[m.Rcode])
		}
		s.must(409, "POST", "/api/admin/domains", s.admin, map[string]any{"name": "extra.example.net"})
		for _, bad := range []string{"", "com", "-x.example", "a..b", "under_score.example"} {
			s.must(400, "POST", "/api/admin/domains", s.admin, map[string]any{"name": bad})
		}
		s.must(400, "POST", "/api/admin/domains", s.admin, map[string]any{"name": "x.example", "status": "gone"})
		s.must(400, "POST", "/api/admin/domains", s.admin, map[string]any{"name": "x.example", "account_id": "acc_none"})
		ds := s.must(200, "GET", "/api/admin/domains", s.admin, nil)
		var list struct{ Domains []map[string]any }
		json.Unmarshal(ds.raw, &list)
		if len(list.Domains) != 2 || list.Domains[0]["name"] != "example.org" {
			t.Fatalf("domains: %s", ds.raw)
		}
		pd := s.must(200, "PATCH", "/api/admin/domains/"+d.str("id"), s.admin, map[string]any{"status": "provisioning", "account_id": id})
		if pd.str("status") != "provisioning" || pd.str("account_id") != id {
			t.Fatalf("patch domain: %s", pd.raw)
		}
		s.must(404, "PATCH", "/api/admin/domains/dom_none", s.admin, map[string]any{"status": "active"})
		s.must(501, "PATCH", "/api/admin/domains/"+d.str("id"), s.admin, map[string]any{"dnssec": true})
	})
}
