package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// eachDialect runs f on a fresh server per storage dialect.
func eachDialect(t *testing.T, o options, f func(t *testing.T, s *server)) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			o := o
			o.dialect = d
			f(t, start(t, o))
		})
	}
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse("2006-01-02T15:04:05.000Z", s)
	if err != nil {
		t.Fatalf("timestamp %q is not in the decided form: %v", s, err)
	}
	return v
}

// Every row of profile 1's state table, over HTTP and DNS.
func TestP1Lifecycle(t *testing.T) {
	eachDialect(t, options{idle: "3s"}, func(t *testing.T, s *server) {
		_, key := s.account("pro")

		// (none) --create--> live, expires_at = now + idle, served at once.
		before := time.Now()
		h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
		id, name := h.str("id"), h.str("hostname")
		if h.str("status") != "live" || h.str("record_type") != "A" || h.str("ip") != "198.41.0.4" {
			t.Fatalf("create: %s", h.raw)
		}
		if exp := parseTime(t, h.str("expires_at")); exp.Before(before.Add(2*time.Second)) || exp.After(time.Now().Add(3*time.Second)) {
			t.Fatalf("expires_at %s is not idle_expiry from now", exp)
		}
		s.resolves(name, dns.TypeA, "198.41.0.4")
		s.resolves(name, dns.TypeAAAA) // NODATA

		// live --GET--> live, expires_at slides.
		time.Sleep(50 * time.Millisecond)
		g := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil)
		if !parseTime(t, g.str("expires_at")).After(parseTime(t, h.str("expires_at"))) {
			t.Fatalf("GET did not slide expires_at: %s then %s", h.str("expires_at"), g.str("expires_at"))
		}
		// Listing renews nothing.
		l := s.must(200, "GET", "/api/v1/hostnames", key, nil)
		if got := l.body["hostnames"].([]any)[0].(map[string]any)["expires_at"]; got != g.str("expires_at") {
			t.Fatalf("list shows expires_at %v, want %s", got, g.str("expires_at"))
		}

		// live --idle--> expired: stops resolving on time, with nobody calling.
		exp := parseTime(t, g.str("expires_at"))
		time.Sleep(time.Until(exp) + 300*time.Millisecond)
		s.resolves(name, dns.TypeA, "NXDOMAIN")
		l = s.must(200, "GET", "/api/v1/hostnames", key, nil)
		if st := l.body["hostnames"].([]any)[0].(map[string]any)["status"]; st != "expired" {
			t.Fatalf("list shows %v, want expired", st)
		}
		// GET of an expired hostname does not revive it.
		g2 := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil)
		if g2.str("status") != "expired" || g2.str("expires_at") != g.str("expires_at") {
			t.Fatalf("GET revived or moved an expired hostname: %s", g2.raw)
		}
		s.resolves(name, dns.TypeA, "NXDOMAIN")

		// expired --PUT--> live; the record type follows the address.
		p := s.must(200, "PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": "2001:500:2::c"})
		if p.str("status") != "live" || p.str("record_type") != "AAAA" || p.str("ip") != "2001:500:2::c" {
			t.Fatalf("PUT: %s", p.raw)
		}
		s.resolves(name, dns.TypeAAAA, "2001:500:2::c")
		s.resolves(name, dns.TypeA)

		// expired --renew--> live.
		time.Sleep(time.Until(parseTime(t, p.str("expires_at"))) + 300*time.Millisecond)
		s.resolves(name, dns.TypeAAAA, "NXDOMAIN")
		r := s.must(200, "POST", "/api/v1/hostnames/"+id+"/renew", key, nil)
		if r.str("status") != "live" {
			t.Fatalf("renew: %s", r.raw)
		}
		s.resolves(name, dns.TypeAAAA, "2001:500:2::c")

		// live --renew--> live, expires_at slides.
		time.Sleep(50 * time.Millisecond)
		r2 := s.must(200, "POST", "/api/v1/hostnames/"+id+"/renew", key, nil)
		if r2.str("status") != "live" || !parseTime(t, r2.str("expires_at")).After(parseTime(t, r.str("expires_at"))) {
			t.Fatalf("renew of a live hostname: %s", r2.raw)
		}

		// non-released --DELETE--> released; DNS stops at once.
		d := s.must(200, "DELETE", "/api/v1/hostnames/"+id, key, nil)
		if d.body["released"] != true {
			t.Fatalf("DELETE: %s", d.raw)
		}
		s.resolves(name, dns.TypeAAAA, "NXDOMAIN")
		// released --DELETE--> released, same answer.
		if d2 := s.must(200, "DELETE", "/api/v1/hostnames/"+id, key, nil); string(d2.raw) != string(d.raw) {
			t.Fatalf("repeated DELETE: %s, first %s", d2.raw, d.raw)
		}
		// GET answers 200 released; the list leaves it out.
		if g := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil); g.str("status") != "released" {
			t.Fatalf("GET released: %s", g.raw)
		}
		if l := s.must(200, "GET", "/api/v1/hostnames", key, nil); len(l.body["hostnames"].([]any)) != 0 {
			t.Fatalf("list shows a released hostname: %s", l.raw)
		}
		// released --PUT or renew--> 409, unchanged.
		for _, req := range []struct{ method, path string }{{"PUT", "/api/v1/hostnames/" + id}, {"POST", "/api/v1/hostnames/" + id + "/renew"}} {
			c := s.must(409, req.method, req.path, key, map[string]any{"ip": "198.41.0.4"})
			if c.str("code") != "CONFLICT" {
				t.Fatalf("%s released: %s", req.method, c.raw)
			}
		}
		s.resolves(name, dns.TypeAAAA, "NXDOMAIN")
	})
}

// Labels: custom ones on pro/business, never reused once released (by
// anyone), reserved for their account while expired.
func TestP1Labels(t *testing.T) {
	eachDialect(t, options{idle: "2s"}, func(t *testing.T, s *server) {
		_, pro := s.account("pro")
		_, biz := s.account("business")
		_, free := s.account("free")

		h := s.must(201, "POST", "/api/v1/hostnames", pro, map[string]any{"ip": "198.41.0.4", "label": "My-Box"})
		if h.str("hostname") != "my-box.example.org" {
			t.Fatalf("custom label: %s", h.raw)
		}
		s.resolves("MY-BOX.example.org", dns.TypeA, "198.41.0.4")

		// Taken: 409 for anyone.
		for _, key := range []string{pro, biz} {
			if c := s.must(409, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "my-box"}); c.str("code") != "CONFLICT" {
				t.Fatal(string(c.raw))
			}
		}
		// Expired: still reserved for its account.
		time.Sleep(time.Until(parseTime(t, h.str("expires_at"))) + 200*time.Millisecond)
		s.must(409, "POST", "/api/v1/hostnames", biz, map[string]any{"ip": "198.41.0.4", "label": "my-box"})
		// Released: retired for good, for everyone, the releasing account too.
		s.must(200, "DELETE", "/api/v1/hostnames/"+h.str("id"), pro, nil)
		for _, key := range []string{pro, biz} {
			c := s.must(409, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "my-box"})
			if c.str("code") != "CONFLICT" {
				t.Fatal(string(c.raw))
			}
		}
		// Free plan: no custom labels.
		if c := s.must(403, "POST", "/api/v1/hostnames", free, map[string]any{"ip": "198.41.0.4", "label": "free-box"}); c.str("code") != "FORBIDDEN" {
			t.Fatal(string(c.raw))
		}
		// Opaque labels are distinct and resolvable.
		seen := map[string]bool{}
		for i := 0; i < 5; i++ {
			o := s.must(201, "POST", "/api/v1/hostnames", free, map[string]any{"ip": fmt.Sprintf("198.41.0.%d", i+1)})
			if seen[o.str("hostname")] {
				t.Fatalf("opaque label repeated: %s", o.str("hostname"))
			}
			seen[o.str("hostname")] = true
			s.resolves(o.str("hostname"), dns.TypeA, fmt.Sprintf("198.41.0.%d", i+1))
		}
	})
}

// Caps: 25 on free; the admin cap overrides; reviving counts.
func TestP1Caps(t *testing.T) {
	eachDialect(t, options{idle: "2s"}, func(t *testing.T, s *server) {
		_, free := s.account("free")
		for i := 0; i < 25; i++ {
			s.must(201, "POST", "/api/v1/hostnames", free, map[string]any{"ip": "198.41.0.4"})
		}
		c := s.must(429, "POST", "/api/v1/hostnames", free, map[string]any{"ip": "198.41.0.4"})
		if c.str("code") != "RATE_LIMITED" {
			t.Fatal(string(c.raw))
		}

		acct, capped := s.account("business", 1)
		if a := s.must(200, "GET", "/api/admin/accounts/"+acct, s.admin, nil); a.body["cap"] != float64(1) {
			t.Fatalf("cap: %s", a.raw)
		}
		first := s.must(201, "POST", "/api/v1/hostnames", capped, map[string]any{"ip": "10.0.0.1"})
		s.must(429, "POST", "/api/v1/hostnames", capped, map[string]any{"ip": "10.0.0.2"})
		// Released names free their slot.
		s.must(200, "DELETE", "/api/v1/hostnames/"+first.str("id"), capped, nil)
		second := s.must(201, "POST", "/api/v1/hostnames", capped, map[string]any{"ip": "10.0.0.2"})
		// Expired names free it too, and reviving one over the cap is refused.
		time.Sleep(time.Until(parseTime(t, second.str("expires_at"))) + 200*time.Millisecond)
		s.must(201, "POST", "/api/v1/hostnames", capped, map[string]any{"ip": "10.0.0.3"})
		s.must(429, "POST", "/api/v1/hostnames/"+second.str("id")+"/renew", capped, nil)
		s.must(429, "PUT", "/api/v1/hostnames/"+second.str("id"), capped, map[string]any{"ip": "10.0.0.4"})
		// Raising the cap through the admin API lets it back.
		s.must(200, "PATCH", "/api/admin/accounts/"+acct, s.admin, map[string]any{"cap": 5})
		s.must(200, "POST", "/api/v1/hostnames/"+second.str("id")+"/renew", capped, nil)
	})
}

// Listing: newest first, limit clamped to 1..500, skip below 0 taken as 0,
// non-integers refused.
func TestP1List(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		_, key := s.account("business")
		var ids []string
		for i := 0; i < 4; i++ {
			ids = append(ids, s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"}).str("id"))
		}
		list := func(q string) []string {
			l := s.must(200, "GET", "/api/v1/hostnames"+q, key, nil)
			var out []string
			for _, h := range l.body["hostnames"].([]any) {
				out = append(out, h.(map[string]any)["id"].(string))
			}
			return out
		}
		tests := []struct {
			query string
			want  []string
		}{
			{"", []string{ids[3], ids[2], ids[1], ids[0]}},
			{"?limit=2", []string{ids[3], ids[2]}},
			{"?limit=2&skip=1", []string{ids[2], ids[1]}},
			{"?limit=0", []string{ids[3]}},
			{"?limit=-5", []string{ids[3]}},
			{"?limit=100000", []string{ids[3], ids[2], ids[1], ids[0]}},
			{"?skip=-3", []string{ids[3], ids[2], ids[1], ids[0]}},
			{"?skip=3", []string{ids[0]}},
			{"?skip=9", nil},
		}
		for _, tc := range tests {
			if got := list(tc.query); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("list%s = %v, want %v", tc.query, got, tc.want)
			}
		}
		for _, q := range []string{"?limit=abc", "?skip=1.5", "?limit=", "?limit=2e3"} {
			if q == "?limit=" {
				continue // empty means default
			}
			if c := s.must(400, "GET", "/api/v1/hostnames"+q, key, nil); c.str("code") != "BAD_REQUEST" {
				t.Errorf("list%s: %s", q, c.raw)
			}
		}
	})
}

// The same data is there after a restart.
func TestRestartKeepsData(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			o := options{dialect: d}
			s := start(t, o)
			_, key := s.account("pro")
			h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "keeper"})
			s.stop()
			// Shutdown released the API listener (and with it the store).
			if l, err := net.Listen("tcp", strings.TrimPrefix(s.api, "http://")); err != nil {
				t.Fatalf("the API address is still held after shutdown: %v", err)
			} else {
				l.Close()
			}

			o.dir, o.dsn = s.dir, s.dsn
			s2 := start(t, o)
			s2.resolves("keeper.example.org", dns.TypeA, "198.41.0.4")
			if g := s2.must(200, "GET", "/api/v1/hostnames/"+h.str("id"), key, nil); g.str("hostname") != "keeper.example.org" {
				t.Fatalf("after restart: %s", g.raw)
			}
			if s2.admin != s.admin {
				t.Fatal("the admin token changed across a restart")
			}
			_ = storage.SQLite
		})
	}
}
