package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// withT is s reporting to t, so a subtest can call s.must and s.do (they
// fail the test they were given, which must be the one running).
func (s *server) withT(t testing.TB) *server {
	c := *s
	c.t = t
	return &c
}

// accessHost is a hostname made for the access table.
type accessHost struct{ id, name, ip string }

// accessRow is one call of the scope × reach table and what it must answer.
type accessRow struct {
	key    string // who calls: a name in the test's keys
	method string
	path   string
	body   any
	status int

	// 403: the scope the message names, and what the key is limited to:
	// domain names, or fixture names of hostnames (found in the message by
	// id or by FQDN). None for a team-wide key.
	scope string
	limit []string

	domain  string   // 201 create: the domain the name is minted on; 200 GET domain: its name
	list    []string // 200 list: the fixtures listed (all of them unless the query pages) and counted in total
	active  int      // 200 list: the active count
	domains []string // 200 GET /api/v1/domains: the names listed
}

// Every profile-2 key endpoint against keys of every scope and reach: a team
// with two dedicated domains, hostnames on both, and another team. A key
// that lacks the scope or the reach gets 403 FORBIDDEN naming the scope and
// what it is limited to; another team's key gets 404, never 403; lists and
// their counts hold only what the key may read; refusals change nothing.
// Then a key with a lifetime stops with 401 KEY_EXPIRED.
func TestP2AccessScopes(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		const (
			R, W, D = "hostnames:read", "hostnames:write", "dns01:write"
			a, b, x = "a.example.net", "b.example.net", "other.example.net"
		)
		// a is the team's oldest domain, so a create without `domain` lands
		// on it unless the key's reach says otherwise.
		team, teamKey := s.team(t, a)
		s.must(201, "POST", "/api/admin/domains", s.admin, map[string]any{"name": b, "account_id": team})
		_, otherKey := s.team(t, x)
		domID := map[string]string{}
		for _, d := range s.must(200, "GET", "/api/admin/domains", s.admin, nil).body["domains"].([]any) {
			d := d.(map[string]any)
			domID[d["name"].(string)] = d["id"].(string)
		}

		n := 0
		nextIP := func() string { n++; return fmt.Sprintf("10.7.%d.%d", n/250, n%250+1) }
		hosts := map[string]*accessHost{}
		mintFixture := func(name, sub, domain, key string) {
			ip := nextIP()
			h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": ip, "subdomain": sub, "domain": domain})
			hosts[name] = &accessHost{id: h.str("id"), name: h.str("hostname"), ip: ip}
		}
		mintFixture("a1", "a-one", a, teamKey)
		mintFixture("a2", "a-two", a, teamKey)
		mintFixture("own", "mine", a, teamKey) // the one hostname-reach keys reach
		mintFixture("held", "a-held", a, teamKey)
		mintFixture("gone", "a-gone", a, teamKey)
		mintFixture("b1", "b-one", b, teamKey)
		mintFixture("b2", "b-two", b, teamKey)
		mintFixture("x1", "x-one", x, otherKey)
		// held is suspended: counted in total, not in active. gone is
		// released: neither listed nor counted.
		s.must(200, "POST", "/api/admin/hostnames/"+hosts["held"].id+"/suspend", s.admin, nil)
		s.must(200, "DELETE", "/api/v1/hostnames/"+hosts["gone"].id, teamKey, nil)
		released := map[string]bool{"gone": true}

		scope := func(name, domain, host string) map[string]any {
			m := map[string]any{"scope": name}
			if domain != "" {
				m["domain"] = domain
			}
			if host != "" {
				m["hostname"] = hosts[host].id
			}
			return m
		}
		keys := map[string]string{
			"all":      s.key(t, team, []map[string]any{scope(R, "", ""), scope(W, "", ""), scope(D, "", "")}),
			"default":  teamKey, // made without scopes: all three team-wide
			"read":     s.key(t, team, []map[string]any{scope(R, "", "")}),
			"writeA":   s.key(t, team, []map[string]any{scope(W, a, "")}),
			"writeB":   s.key(t, team, []map[string]any{scope(W, b, "")}),
			"readA":    s.key(t, team, []map[string]any{scope(R, a, ""), scope(R, "", "b1")}),
			"dns01Own": s.key(t, team, []map[string]any{scope(D, "", "own")}),
			"writeOwn": s.key(t, team, []map[string]any{scope(W, "", "own")}),
			"other":    otherKey,
		}

		const list, domains = "/api/v1/hostnames", "/api/v1/domains"
		h := func(name string) string { return "/api/v1/hostnames/" + hosts[name].id }
		dom := func(name string) string { return "/api/v1/domains/" + domID[name] }
		put := func() any { return map[string]any{"ip": nextIP()} }
		mint := func(domain string) any {
			if domain == "" {
				return map[string]any{"ip": nextIP()}
			}
			return map[string]any{"ip": nextIP(), "domain": domain}
		}
		teamAll := []string{"a1", "a2", "own", "held", "b1", "b2"}
		readA := []string{"a1", "a2", "own", "held", "b1"}

		// In order: reads and lists first (they count the fixtures as set
		// up), then updates, creates, and releases last.
		rows := []accessRow{
			// List: only what the read scope reaches, listed and counted.
			{key: "all", method: "GET", path: list, status: 200, list: teamAll, active: 5},
			{key: "default", method: "GET", path: list, status: 200, list: teamAll, active: 5},
			{key: "read", method: "GET", path: list, status: 200, list: teamAll, active: 5},
			{key: "readA", method: "GET", path: list, status: 200, list: readA, active: 4},
			{key: "readA", method: "GET", path: list + "?limit=1", status: 200, list: readA, active: 4},
			{key: "writeA", method: "GET", path: list, status: 403, scope: R, limit: []string{a}},
			{key: "dns01Own", method: "GET", path: list, status: 403, scope: R, limit: []string{"own"}},
			{key: "writeOwn", method: "GET", path: list, status: 403, scope: R, limit: []string{"own"}},
			{key: "other", method: "GET", path: list, status: 200, list: []string{"x1"}, active: 1},

			// Domains: those some scope of the key reaches.
			{key: "all", method: "GET", path: domains, status: 200, domains: []string{a, b}},
			{key: "default", method: "GET", path: domains, status: 200, domains: []string{a, b}},
			{key: "read", method: "GET", path: domains, status: 200, domains: []string{a, b}},
			{key: "writeA", method: "GET", path: domains, status: 200, domains: []string{a}},
			{key: "writeB", method: "GET", path: domains, status: 200, domains: []string{b}},
			{key: "readA", method: "GET", path: domains, status: 200, domains: []string{a}},
			{key: "dns01Own", method: "GET", path: domains, status: 200, domains: []string{}},
			{key: "writeOwn", method: "GET", path: domains, status: 200, domains: []string{}},
			{key: "other", method: "GET", path: domains, status: 200, domains: []string{x}},
			{key: "all", method: "GET", path: dom(a), status: 200, domain: a},
			{key: "all", method: "GET", path: dom(b), status: 200, domain: b},
			{key: "read", method: "GET", path: dom(b), status: 200, domain: b},
			{key: "writeA", method: "GET", path: dom(a), status: 200, domain: a},
			{key: "writeA", method: "GET", path: dom(b), status: 403, scope: R, limit: []string{a}},
			{key: "readA", method: "GET", path: dom(a), status: 200, domain: a},
			{key: "readA", method: "GET", path: dom(b), status: 403, scope: R, limit: []string{a, "b1"}},
			{key: "dns01Own", method: "GET", path: dom(a), status: 403, scope: R, limit: []string{"own"}},
			{key: "writeOwn", method: "GET", path: dom(a), status: 403, scope: R, limit: []string{"own"}},
			{key: "all", method: "GET", path: dom(x), status: 404},
			{key: "other", method: "GET", path: dom(a), status: 404},
			{key: "other", method: "GET", path: dom(x), status: 200, domain: x},

			// Read one hostname.
			{key: "all", method: "GET", path: h("a1"), status: 200},
			{key: "all", method: "GET", path: h("held"), status: 200},
			{key: "default", method: "GET", path: h("b2"), status: 200},
			{key: "read", method: "GET", path: h("a1"), status: 200},
			{key: "read", method: "GET", path: h("b1"), status: 200},
			{key: "readA", method: "GET", path: h("own"), status: 200},
			{key: "readA", method: "GET", path: h("b1"), status: 200},
			{key: "readA", method: "GET", path: h("b2"), status: 403, scope: R, limit: []string{a, "b1"}},
			{key: "writeA", method: "GET", path: h("a1"), status: 403, scope: R, limit: []string{a}},
			{key: "dns01Own", method: "GET", path: h("own"), status: 403, scope: R, limit: []string{"own"}},
			{key: "writeOwn", method: "GET", path: h("own"), status: 403, scope: R, limit: []string{"own"}},
			{key: "all", method: "GET", path: h("x1"), status: 404},
			{key: "other", method: "GET", path: h("a1"), status: 404},
			{key: "other", method: "GET", path: h("b1"), status: 404},
			{key: "other", method: "GET", path: h("x1"), status: 200},

			// Repoint.
			{key: "all", method: "PUT", path: h("a1"), body: put(), status: 200},
			{key: "default", method: "PUT", path: h("b1"), body: put(), status: 200},
			{key: "read", method: "PUT", path: h("a1"), body: put(), status: 403, scope: W},
			{key: "writeA", method: "PUT", path: h("a2"), body: put(), status: 200},
			{key: "writeA", method: "PUT", path: h("b1"), body: put(), status: 403, scope: W, limit: []string{a}},
			{key: "writeB", method: "PUT", path: h("b1"), body: put(), status: 200},
			{key: "writeB", method: "PUT", path: h("a1"), body: put(), status: 403, scope: W, limit: []string{b}},
			{key: "readA", method: "PUT", path: h("a1"), body: put(), status: 403, scope: W, limit: []string{a, "b1"}},
			{key: "dns01Own", method: "PUT", path: h("own"), body: put(), status: 403, scope: W, limit: []string{"own"}},
			{key: "writeOwn", method: "PUT", path: h("own"), body: put(), status: 200},
			{key: "writeOwn", method: "PUT", path: h("a1"), body: put(), status: 403, scope: W, limit: []string{"own"}},
			{key: "all", method: "PUT", path: h("x1"), body: put(), status: 404},
			{key: "other", method: "PUT", path: h("a1"), body: put(), status: 404},

			// Mint, with and without `domain`.
			{key: "all", method: "POST", path: list, body: mint(""), status: 201, domain: a},
			{key: "all", method: "POST", path: list, body: mint(b), status: 201, domain: b},
			{key: "default", method: "POST", path: list, body: mint(""), status: 201, domain: a},
			{key: "default", method: "POST", path: list, body: mint(b), status: 201, domain: b},
			{key: "read", method: "POST", path: list, body: mint(""), status: 403, scope: W},
			{key: "read", method: "POST", path: list, body: mint(a), status: 403, scope: W},
			{key: "writeA", method: "POST", path: list, body: mint(""), status: 201, domain: a},
			{key: "writeA", method: "POST", path: list, body: mint(a), status: 201, domain: a},
			{key: "writeA", method: "POST", path: list, body: mint(b), status: 403, scope: W, limit: []string{a}},
			{key: "writeB", method: "POST", path: list, body: mint(""), status: 201, domain: b}, // not the oldest: the one it reaches
			{key: "writeB", method: "POST", path: list, body: mint(a), status: 403, scope: W, limit: []string{b}},
			{key: "readA", method: "POST", path: list, body: mint(""), status: 403, scope: W, limit: []string{a, "b1"}},
			{key: "dns01Own", method: "POST", path: list, body: mint(""), status: 403, scope: W, limit: []string{"own"}},
			{key: "dns01Own", method: "POST", path: list, body: mint(a), status: 403, scope: W, limit: []string{"own"}},
			{key: "writeOwn", method: "POST", path: list, body: mint(""), status: 403, scope: W, limit: []string{"own"}},
			{key: "writeOwn", method: "POST", path: list, body: mint(a), status: 403, scope: W, limit: []string{"own"}},
			{key: "other", method: "POST", path: list, body: mint(""), status: 201, domain: x},
			{key: "other", method: "POST", path: list, body: mint(a), status: 400}, // not "ours but forbidden"

			// Release.
			{key: "read", method: "DELETE", path: h("a2"), status: 403, scope: W},
			{key: "writeA", method: "DELETE", path: h("b2"), status: 403, scope: W, limit: []string{a}},
			{key: "writeB", method: "DELETE", path: h("a1"), status: 403, scope: W, limit: []string{b}},
			{key: "readA", method: "DELETE", path: h("a1"), status: 403, scope: W, limit: []string{a, "b1"}},
			{key: "dns01Own", method: "DELETE", path: h("own"), status: 403, scope: W, limit: []string{"own"}},
			{key: "writeOwn", method: "DELETE", path: h("a1"), status: 403, scope: W, limit: []string{"own"}},
			{key: "all", method: "DELETE", path: h("x1"), status: 404},
			{key: "other", method: "DELETE", path: h("a1"), status: 404},
			{key: "writeA", method: "DELETE", path: h("a2"), status: 200},
			{key: "writeOwn", method: "DELETE", path: h("own"), status: 200},
			{key: "all", method: "DELETE", path: h("b2"), status: 200},
			{key: "other", method: "DELETE", path: h("own"), status: 404}, // released, and still not theirs
		}

		// Subtest names show fixture names, not ids.
		var pairs []string
		for name, f := range hosts {
			pairs = append(pairs, f.id, name)
		}
		for name, id := range domID {
			pairs = append(pairs, id, name)
		}
		pairs = append(pairs, "/api/v1/", "", "/", " ")
		names := strings.NewReplacer(pairs...)
		// mentions reports whether msg names l: a domain, or a fixture by id or FQDN.
		mentions := func(msg, l string) bool {
			if f, ok := hosts[l]; ok {
				return strings.Contains(msg, f.id) || strings.Contains(msg, f.name)
			}
			return strings.Contains(msg, l)
		}
		codes := map[int]string{400: "BAD_REQUEST", 403: "FORBIDDEN", 404: "NOT_FOUND"}
		minted := map[string]int{} // "team" or "other": created by the table

		for _, r := range rows {
			name := r.key + " " + r.method + " " + names.Replace(r.path)
			if m, ok := r.body.(map[string]any); ok && r.method == "POST" && m["domain"] != nil {
				name += " on " + m["domain"].(string)
			}
			t.Run(name, func(t *testing.T) {
				s := s.withT(t)
				resp := s.do(r.method, r.path, keys[r.key], r.body)
				if resp.status != r.status {
					t.Fatalf("status %d, want %d: %s", resp.status, r.status, resp.raw)
				}
				msg := resp.str("error")
				if code := codes[r.status]; code != "" && resp.str("code") != code {
					t.Fatalf("code %q, want %s: %s", resp.str("code"), code, resp.raw)
				}
				target := ""
				if strings.HasPrefix(r.path, "/api/v1/hostnames/") {
					target = strings.TrimPrefix(r.path, "/api/v1/hostnames/")
				}
				switch r.status {
				case 403:
					if !strings.Contains(msg, r.scope) {
						t.Errorf("403 message %q does not name the scope %s", msg, r.scope)
					}
					for _, l := range r.limit {
						switch {
						case mentions(msg, l):
						default:
							t.Errorf("403 message %q does not name %s, which the key is limited to", msg, l)
						}
					}
				case 404:
					want := "Hostname not found"
					if strings.HasPrefix(r.path, "/api/v1/domains/") {
						want = "Domain not found"
					}
					if msg != want {
						t.Errorf("404 message %q, want %q", msg, want)
					}
				case 200, 201:
					if target != "" && r.method != "DELETE" && resp.str("id") != target {
						t.Errorf("answered hostname %s, want %s: %s", resp.str("id"), target, resp.raw)
					}
				}
				if resp.status >= 300 {
					return
				}
				body, _ := r.body.(map[string]any)
				switch {
				case r.method == "POST":
					if !strings.HasSuffix(resp.str("hostname"), "."+r.domain) {
						t.Errorf("minted %s, want a name on %s", resp.str("hostname"), r.domain)
					}
					if r.key == "other" {
						minted["other"]++
					} else {
						minted["team"]++
					}
				case r.method == "PUT":
					if resp.str("ip") != body["ip"] {
						t.Errorf("PUT answered ip %s, want %s", resp.str("ip"), body["ip"])
					}
					hosts[fixtureOf(hosts, target)].ip = body["ip"].(string)
				case r.method == "DELETE":
					if resp.body["released"] != true {
						t.Errorf("DELETE: %s", resp.raw)
					}
					released[fixtureOf(hosts, target)] = true
				case r.path == domains:
					var got []string
					for _, d := range resp.body["domains"].([]any) {
						got = append(got, d.(map[string]any)["name"].(string))
					}
					if slices.Sort(got); !slices.Equal(got, r.domains) {
						t.Errorf("domains listed %v, want %v", got, r.domains)
					}
				case strings.HasPrefix(r.path, "/api/v1/domains/"):
					if resp.str("name") != r.domain {
						t.Errorf("domain %s, want %s", resp.str("name"), r.domain)
					}
				case strings.HasPrefix(r.path, list) && target == "":
					want := map[string]string{} // id -> fixture
					for _, f := range r.list {
						want[hosts[f].id] = f
					}
					var got []string
					for _, v := range resp.body["hostnames"].([]any) {
						id := v.(map[string]any)["id"].(string)
						if _, ok := want[id]; !ok {
							t.Errorf("listed %s (%s), out of the key's read reach", names.Replace(id), v.(map[string]any)["hostname"])
						}
						got = append(got, id)
					}
					paged := strings.Contains(r.path, "limit=")
					if !paged && len(got) != len(want) {
						t.Errorf("listed %d hostnames, want %v", len(got), r.list)
					}
					if total := resp.body["total"]; total != float64(len(r.list)) {
						t.Errorf("total %v, want %d (in reach, not released)", total, len(r.list))
					}
					if active := resp.body["active"]; active != float64(r.active) {
						t.Errorf("active %v, want %d (in reach, live or pending)", active, r.active)
					}
				}
			})
		}

		// Refusals changed nothing: every fixture holds the address the
		// allowed PUTs gave it, and only the allowed DELETEs released one.
		t.Run("nothing else changed", func(t *testing.T) {
			s := s.withT(t)
			for name, f := range hosts {
				key := teamKey
				if name == "x1" {
					key = otherKey
				}
				g := s.must(200, "GET", "/api/v1/hostnames/"+f.id, key, nil)
				want := []string{"pending", "live"}
				switch {
				case released[name]:
					want = []string{"released"}
				case name == "held":
					want = []string{"suspended"}
				}
				if g.str("ip") != f.ip || !slices.Contains(want, g.str("status")) {
					t.Errorf("%s: ip %s status %s, want ip %s status %v", name, g.str("ip"), g.str("status"), f.ip, want)
				}
			}
			// Totals: the fixtures left, and what the table's creates minted.
			left := map[string]int{}
			for name := range hosts {
				who := "team"
				if name == "x1" {
					who = "other"
				}
				if !released[name] {
					left[who]++
				}
			}
			for who, key := range map[string]string{"team": teamKey, "other": otherKey} {
				l := s.must(200, "GET", "/api/v1/hostnames", key, nil)
				if want := left[who] + minted[who]; l.body["total"] != float64(want) {
					t.Errorf("%s: total %v, want %d (%d fixtures left, %d minted by the table)", who, l.body["total"], want, left[who], minted[who])
				}
			}
		})

		// A key with a lifetime works until it passes, then answers 401
		// KEY_EXPIRED naming the expiry and telling the caller what to do.
		t.Run("key expiry", func(t *testing.T) {
			s := s.withT(t)
			exp := time.Now().Add(1500 * time.Millisecond)
			k := s.must(201, "POST", "/api/admin/accounts/"+team+"/keys", s.admin, map[string]any{"name": "short", "expires_at": exp})
			token, shown := k.str("key"), k.str("expires_at")
			if want := exp.UTC().Format("2006-01-02T15:04:05.000Z"); shown != want {
				t.Errorf("key expires_at %q, want %q", shown, want)
			}
			s.must(200, "GET", "/api/v1/hostnames", token, nil)
			s.must(200, "GET", "/api/v1/hostnames/"+hosts["a1"].id, token, nil)
			var r response
			eventually(t, 5*time.Second, func() bool {
				r = s.do("GET", "/api/v1/hostnames", token, nil)
				return r.status != 200
			}, "the key still works after %s", shown)
			if time.Now().Before(exp.Truncate(time.Millisecond)) {
				t.Errorf("the key stopped before %s", shown)
			}
			calls := []struct {
				method, path string
				body         any
			}{
				{"GET", "/api/v1/hostnames", nil},
				{"GET", "/api/v1/hostnames/" + hosts["a1"].id, nil},
				{"PUT", "/api/v1/hostnames/" + hosts["a1"].id, map[string]any{"ip": "10.7.255.1"}},
				{"POST", "/api/v1/hostnames", map[string]any{"ip": "10.7.255.2", "subdomain": "too-late"}},
				{"DELETE", "/api/v1/hostnames/" + hosts["a1"].id, nil},
				{"GET", "/api/v1/domains", nil},
			}
			for i, c := range calls {
				if i > 0 {
					r = s.do(c.method, c.path, token, c.body)
				}
				msg := r.str("error")
				if r.status != 401 || r.str("code") != "KEY_EXPIRED" {
					t.Errorf("%s %s with an expired key: %d %s", c.method, c.path, r.status, r.raw)
				} else if !strings.Contains(msg, shown) || !strings.Contains(strings.ToLower(msg), "create a new key") {
					t.Errorf("KEY_EXPIRED message %q does not name %s and say to create a new key", msg, shown)
				}
			}
			if g := s.must(200, "GET", "/api/v1/hostnames/"+hosts["a1"].id, teamKey, nil); g.str("ip") != hosts["a1"].ip || g.str("status") == "released" {
				t.Errorf("an expired key changed a hostname: %s", g.raw)
			}
		})
	})
}

// fixtureOf is the name of the fixture with id.
func fixtureOf(hosts map[string]*accessHost, id string) string {
	for name, f := range hosts {
		if f.id == id {
			return name
		}
	}
	return id
}

// A 403 names the hostname a key is limited to by the name a person
// recognises, its id in brackets.
func TestP2AccessForbiddenNamesHostname(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		acc, key := s.team(t, "named.example.net")
		h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "web"})
		narrow := s.key(t, acc, []map[string]any{{"scope": "dns01:write", "hostname": h.str("id")}})
		r := s.do("PUT", "/api/v1/hostnames/"+h.str("id"), narrow, map[string]any{"ip": "198.41.0.5"})
		want := "hostname web.named.example.net (" + h.str("id") + ")"
		if r.status != 403 || !strings.Contains(r.str("error"), want) {
			t.Errorf("PUT with a key limited to dns01:write on the hostname: %d %s, want 403 naming %s", r.status, r.raw, want)
		}
	})
}
