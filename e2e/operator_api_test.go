package e2e

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// ids lists the id field of each object in r's list field.
func ids(r response, field string) []string {
	var out []string
	list, _ := r.body[field].([]any)
	for _, v := range list {
		out = append(out, v.(map[string]any)["id"].(string))
	}
	return out
}

// The operators' account list: newest first, filtered by name and status,
// paged by cursor; bad filters are 400 and change nothing.
func TestOperatorAccountList(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		var made []string // oldest first
		for _, name := range []string{"Acme", "Beta", "Acme", "Gamma"} {
			made = append(made, s.must(201, "POST", "/api/admin/accounts", s.admin, map[string]any{"name": name, "plan": "free"}).str("id"))
			time.Sleep(2 * time.Millisecond) // distinct creation times, so newest first is the order made
		}
		s.must(200, "PATCH", "/api/admin/accounts/"+made[1], s.admin, map[string]any{"status": "suspended"})
		s.must(200, "DELETE", "/api/admin/accounts/"+made[3], s.admin, nil)

		list := func(q string) []string {
			return ids(s.must(200, "GET", "/api/admin/accounts"+q, s.admin, nil), "accounts")
		}
		for _, tc := range []struct {
			query string
			want  []int // indexes into made, newest first
		}{
			{"", []int{3, 2, 1, 0}},
			{"?name=Acme", []int{2, 0}},
			{"?name=acme", nil},
			{"?status=suspended", []int{1}},
			{"?status=closed", []int{3}},
			{"?status=active", []int{2, 0}},
			{"?status=active&name=Acme", []int{2, 0}},
			{"?status=ended", nil},
		} {
			var want []string
			for _, i := range tc.want {
				want = append(want, made[i])
			}
			if got := list(tc.query); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("GET /api/admin/accounts%s = %v, want %v", tc.query, got, want)
			}
		}

		// A page at a time, by the cursor each page hands out.
		var walked []string
		q := "?limit=1"
		for range 10 {
			r := s.must(200, "GET", "/api/admin/accounts"+q, s.admin, nil)
			walked = append(walked, ids(r, "accounts")...)
			next, _ := r.body["next_cursor"].(string)
			if next == "" {
				break
			}
			q = "?limit=1&cursor=" + url.QueryEscape(next)
		}
		if strings.Join(walked, ",") != strings.Join(list(""), ",") {
			t.Errorf("paged walk %v, want %v", walked, list(""))
		}

		for _, q := range []string{"?status=gone", "?cursor=zz", "?cursor=" + url.QueryEscape("MTIz"), "?limit=x"} {
			if r := s.must(400, "GET", "/api/admin/accounts"+q, s.admin, nil); r.str("code") != "BAD_REQUEST" {
				t.Errorf("%s: %s", q, r.raw)
			}
		}
		s.must(401, "GET", "/api/admin/accounts", "", nil)
	})
}

// Finding hostnames by name, by address and by account, with their owner.
func TestOperatorFindHostnames(t *testing.T) {
	eachDialect(t, options{}, func(t *testing.T, s *server) {
		a, keyA := s.account("business")
		b, keyB := s.account("business")
		h1 := s.must(201, "POST", "/api/v1/hostnames", keyA, map[string]any{"ip": "198.41.0.7", "label": "alpha"})
		h2 := s.must(201, "POST", "/api/v1/hostnames", keyA, map[string]any{"ip": "2001:500:2::7"})
		h3 := s.must(201, "POST", "/api/v1/hostnames", keyB, map[string]any{"ip": "198.41.0.7"})
		s.must(200, "DELETE", "/api/v1/hostnames/"+h1.str("id"), keyA, nil) // released: still found, as released

		find := func(q string) response { return s.must(200, "GET", "/api/admin/hostnames?"+q, s.admin, nil) }
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"hostname=ALPHA.example.org.", []string{h1.str("id")}},
			{"hostname=" + h3.str("hostname"), []string{h3.str("id")}},
			{"ip=198.41.0.7", []string{h3.str("id"), h1.str("id")}},
			{"ip=2001:0500:2:0::7", []string{h2.str("id")}},
			{"ip=::ffff:198.41.0.7", []string{h3.str("id"), h1.str("id")}},
			{"account_id=" + a, []string{h2.str("id"), h1.str("id")}},
			{"account_id=" + b, []string{h3.str("id")}},
			{"account_id=acc_none", nil},
			{"hostname=nothing.example.org", nil},
		} {
			if got := ids(find(tc.query), "hostnames"); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("find %s = %v, want %v", tc.query, got, tc.want)
			}
		}
		r := find("hostname=alpha.example.org")
		got := r.body["hostnames"].([]any)[0].(map[string]any)
		if got["account_id"] != a || got["status"] != "released" || got["hostname"] != "alpha.example.org" {
			t.Errorf("found %v, want alpha released, held by %s", got, a)
		}
		p := find("account_id=" + a + "&limit=1")
		next, _ := p.body["next_cursor"].(string)
		if len(ids(p, "hostnames")) != 1 || next == "" {
			t.Fatalf("first page: %s", p.raw)
		}
		if rest := ids(find("account_id="+a+"&limit=1&cursor="+url.QueryEscape(next)), "hostnames"); strings.Join(rest, ",") != h1.str("id") {
			t.Errorf("second page %v, want %s", rest, h1.str("id"))
		}

		for _, q := range []string{"", "hostname=a.example.org&ip=198.41.0.7", "ip=300.1.1.1", "ip=fe80::1%25eth0", "hostname=-bad-", "account_id=" + a + "&cursor=zz"} {
			if r := s.must(400, "GET", "/api/admin/hostnames?"+q, s.admin, nil); r.str("code") != "BAD_REQUEST" {
				t.Errorf("%q: %s", q, r.raw)
			}
		}
		s.must(401, "GET", "/api/admin/hostnames?ip=198.41.0.7", keyA, nil)
	})
}

// Closing an account: its names stop answering, its credentials stop
// working, on every node; it stays readable, closed, and takes no change.
func TestOperatorCloseAccount(t *testing.T) {
	eachDialect(t, options{extra: []string{certKeyFile(t)}}, func(t *testing.T, s *server) {
		nodes := []*server{s}
		if s.dialect == storage.Postgres {
			nodes = append(nodes, start(t, options{dialect: storage.Postgres, dsn: s.dsn, extra: []string{certKeyFile(t)}}))
		}
		id, key := s.account("pro")
		_, other := s.account("pro")
		h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.20", "label": "closing"})
		s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.21"})
		kept := s.must(201, "POST", "/api/v1/hostnames", other, map[string]any{"ip": "198.41.0.22", "label": "staying"})
		s.must(201, "POST", "/api/admin/accounts/"+id+"/tsig-keys", s.admin, map[string]any{"name": "ddns"})
		s.must(201, "POST", "/api/admin/accounts/"+id+"/signin-links", s.admin, nil)
		for _, n := range nodes {
			n.resolves("closing.example.org", dns.TypeA, "198.41.0.20")
			n.must(200, "GET", "/api/v1/hostnames", key, nil) // the key is in every node's cache
		}

		c := s.must(200, "DELETE", "/api/admin/accounts/"+id, s.admin, nil)
		if got := keys(c.body); got != "closed,hostnames_released,keys_revoked,sessions_ended,signin_links_ended,tsig_keys_revoked" {
			t.Fatalf("close answer fields %s", got)
		}
		for k, want := range map[string]float64{"hostnames_released": 2, "keys_revoked": 1, "tsig_keys_revoked": 1, "signin_links_ended": 1} {
			if c.body[k] != want {
				t.Errorf("close: %s = %v, want %v (%s)", k, c.body[k], want, c.raw)
			}
		}
		if c.body["closed"] != true {
			t.Fatalf("close: %s", c.raw)
		}
		for _, n := range nodes {
			eventually(t, 2*time.Second, func() bool {
				return n.query("closing.example.org", dns.TypeA, "udp").Rcode == dns.RcodeNameError
			}, "a closed account's hostname still answers")
			eventually(t, 2*time.Second, func() bool {
				return n.do("GET", "/api/v1/hostnames", key, nil).status == 401
			}, "a closed account's key still works")
			n.resolves("staying.example.org", dns.TypeA, "198.41.0.22")
		}
		s.must(200, "GET", "/api/v1/hostnames/"+kept.str("id"), other, nil)

		acct := s.must(200, "GET", "/api/admin/accounts/"+id, s.admin, nil)
		if acct.str("status") != "closed" || acct.str("closed_at") == "" {
			t.Fatalf("closed account reads %s", acct.raw)
		}
		if got := s.must(200, "GET", "/api/admin/accounts/"+id+"/tsig-keys", s.admin, nil).body["tsig_keys"]; len(got.([]any)) != 0 {
			t.Errorf("TSIG keys left: %v", got)
		}
		found := s.must(200, "GET", "/api/admin/hostnames?hostname=closing.example.org", s.admin, nil)
		if hs := found.body["hostnames"].([]any); len(hs) != 1 || hs[0].(map[string]any)["status"] != "released" || hs[0].(map[string]any)["id"] != h.str("id") {
			t.Errorf("the closed account's hostname is found as %s", found.raw)
		}

		// Nothing more: no change, key or link; a second close is the same answer, changing nothing.
		for _, w := range []struct{ method, path string }{
			{"PATCH", "/api/admin/accounts/" + id},
			{"POST", "/api/admin/accounts/" + id + "/keys"},
			{"POST", "/api/admin/accounts/" + id + "/tsig-keys"},
			{"POST", "/api/admin/accounts/" + id + "/signin-links"},
			{"POST /domains", "/api/admin/domains"},
		} {
			body := map[string]any{}
			switch w.method {
			case "PATCH":
				body["status"] = "active"
			case "POST /domains":
				w.method, body["name"], body["account_id"] = "POST", "closed.example.net", id
			}
			if r := s.must(409, w.method, w.path, s.admin, body); !strings.Contains(r.str("error"), "closed") {
				t.Errorf("%s %s: %s", w.method, w.path, r.raw)
			}
		}
		again := s.must(200, "DELETE", "/api/admin/accounts/"+id, s.admin, nil)
		if again.body["closed"] != true || again.body["hostnames_released"] != float64(0) {
			t.Errorf("second close: %s", again.raw)
		}
		s.must(404, "DELETE", "/api/admin/accounts/acc_none", s.admin, nil)

		// The audit log names the account the close acted on.
		audit := s.must(200, "GET", "/api/admin/audit?action="+url.QueryEscape("DELETE /api/admin/accounts/{id}"), s.admin, nil)
		entries := audit.body["entries"].([]any)
		if len(entries) == 0 || entries[len(entries)-1].(map[string]any)["object"] != "account:"+id {
			t.Errorf("audit of the close: %s", audit.raw)
		}
	})
}
