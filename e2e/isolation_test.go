package e2e

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// TestIsolationWalk walks every key-authenticated endpoint the server
// documents in /openapi.json (so an endpoint added later is walked too)
// with keys that must not reach one team's hostname: another team's key and
// keys of the same team whose scope or reach falls short. Every such
// request is refused (403 or 404) and afterwards nothing of the team has
// changed: the hostname, its records, its DNS answers, its DNS-01
// credential, its certificate state; lists and counts never show it.
func TestIsolationWalk(t *testing.T) {
	t.Parallel()
	o := updateOptions(t, storage.SQLite, 2) // TSIG keys exist: a key of the team's is what the walk must not reach
	s := start(t, o)
	const a, b, x = "a.iso.example.net", "b.iso.example.net", "x.iso.example.net"
	team, teamKey := s.team(t, a)
	s.must(201, "POST", "/api/admin/domains", s.admin, map[string]any{"name": b, "account_id": team})
	_, otherKey := s.team(t, x)

	mint := func(key, sub, domain, ip string) (id, name string) {
		h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": ip, "subdomain": sub, "domain": domain})
		return h.str("id"), h.str("hostname")
	}
	target, targetName := mint(teamKey, "target", a, "198.41.0.4")
	own, _ := mint(teamKey, "own", a, "198.41.0.5")
	mint(teamKey, "bee", b, "198.41.0.6")
	mint(otherKey, "exo", x, "198.41.0.7")
	s.live(t, teamKey, target)
	rec := s.must(201, "POST", "/api/v1/hostnames/"+target+"/records", teamKey, map[string]any{"type": "TXT", "name": "note", "text": "kept"}).str("id")
	cred := s.acmeCredential(t, teamKey, target)
	teamTSIG := s.tsig("/api/admin/accounts/"+team+"/tsig-keys", s.admin, nil)

	scope := func(name, domain, hostname string) map[string]any {
		m := map[string]any{"scope": name}
		if domain != "" {
			m["domain"] = domain
		}
		if hostname != "" {
			m["hostname"] = hostname
		}
		return m
	}
	// Each key with the scopes it holds that reach the target (none but
	// hostnames:read for "read"): a request needing any other is refused.
	keys := []struct {
		name, key string
		reaches   []string
	}{
		{"another team's", otherKey, nil},
		{"read-only", s.key(t, team, []map[string]any{scope("hostnames:read", "", "")}), []string{"hostnames:read"}},
		{"write on domain b", s.key(t, team, []map[string]any{scope("hostnames:write", b, "")}), nil},
		{"dns01 on another hostname", s.key(t, team, []map[string]any{scope("dns01:write", "", own)}), nil},
		{"read on another hostname", s.key(t, team, []map[string]any{scope("hostnames:read", "", own)}), nil},
	}
	// A valid body for each endpoint that takes one: refusals must come
	// from reach, not from a bad request.
	bodies := map[string]any{
		"POST /api/v1/hostnames":                         map[string]any{"ip": "198.41.0.9", "subdomain": "intruder", "domain": a},
		"PUT /api/v1/hostnames/{id}":                     map[string]any{"ip": "198.41.0.9"},
		"POST /api/v1/hostnames/{id}/records":            map[string]any{"type": "TXT", "name": "intruder", "text": "x"},
		"PUT /api/v1/hostnames/{id}/records/{record_id}": map[string]any{"type": "TXT", "name": "note", "text": "changed"},
		"POST /api/v1/hostnames/{id}/certificate":        map[string]any{"csr": "-----BEGIN CERTIFICATE REQUEST-----\nAA==\n-----END CERTIFICATE REQUEST-----\n"},
		"POST /api/v1/tsig-keys":                         map[string]any{"scopes": []map[string]any{scope("hostnames:write", "", target)}},
	}
	domainA := s.domainID(t, a)
	paths := func(p string) string {
		p = strings.ReplaceAll(p, "{record_id}", rec)
		if strings.HasPrefix(p, "/api/v1/domains/") {
			return strings.ReplaceAll(p, "{id}", domainA)
		}
		if strings.HasPrefix(p, "/api/v1/tsig-keys/") {
			return strings.ReplaceAll(p, "{key_id}", teamTSIG.id)
		}
		return strings.ReplaceAll(p, "{id}", target)
	}

	before := isoState(t, s, teamKey, target, targetName)
	walked := 0
	for _, op := range isoOperations(t, s) {
		for _, k := range keys {
			if op.scope != "" && slices.Contains(k.reaches, op.scope) {
				continue // allowed: other tests cover what it does
			}
			if op.scope == "" && k.key != otherKey {
				continue // the team's domains, readable by any of its keys
			}
			body, ok := bodies[op.method+" "+op.path]
			if op.hasBody && !ok {
				t.Fatalf("%s %s takes a body: give the walk a valid one", op.method, op.path)
			}
			r := s.do(op.method, paths(op.path), k.key, body)
			walked++
			switch {
			case op.method == "GET" && (op.path == "/api/v1/hostnames" || op.path == "/api/v1/domains"):
				if raw := string(r.raw); r.status == 200 && (strings.Contains(raw, target) || strings.Contains(raw, targetName) ||
					k.key == otherKey && strings.Contains(raw, domainA)) {
					t.Errorf("%s key: %s %s lists the team's objects: %s", k.name, op.method, op.path, r.raw)
				}
			case op.method == "GET" && op.path == "/api/v1/tsig-keys":
				if r.status == 200 && strings.Contains(string(r.raw), teamTSIG.id) {
					t.Errorf("%s key: %s %s lists a TSIG key beyond its reach: %s", k.name, op.method, op.path, r.raw)
				}
			case op.method == "POST" && (op.path == "/api/v1/hostnames" || op.path == "/api/v1/tsig-keys"):
				if r.status < 400 {
					t.Errorf("%s key: %s %s made what reaches the team's hostname: %d %s", k.name, op.method, op.path, r.status, r.raw)
				}
			case r.status != 403 && r.status != 404:
				t.Errorf("%s key: %s %s answered %d, want 403 or 404: %s", k.name, op.method, op.path, r.status, r.raw)
			}
			if r.status >= 400 && r.str("code") == "" {
				t.Errorf("%s key: %s %s: %d without an error code: %s", k.name, op.method, op.path, r.status, r.raw)
			}
		}
	}
	if walked < 40 {
		t.Fatalf("walked only %d requests: is /openapi.json read right?", walked)
	}

	// A DNS-01 credential is bound to its own hostname: another team's
	// credential, or this one's name with a wrong password, publishes nothing.
	otherHost, _ := mint(otherKey, "exo2", x, "198.41.0.8")
	s.live(t, otherKey, otherHost)
	otherCred := s.acmeCredential(t, otherKey, otherHost)
	for _, c := range []acmeCred{{user: cred.user, pass: otherCred.pass}, {user: otherCred.user, pass: cred.pass}} {
		if r := s.acmeSend(t, "POST", "/api/acme/update", c.headers(""), acmeBody("subdomain", cred.user, "txt", strings.Repeat("i", 43))); r.status < 400 {
			t.Errorf("acme-dns update across credentials answered %d: %s", r.status, r.raw)
		}
	}
	if after := isoState(t, s, teamKey, target, targetName); after != before {
		t.Errorf("the team's hostname changed under refused requests:\nbefore %s\nafter  %s", before, after)
	}
	if n := s.listTotal(otherKey); n != 2 {
		t.Errorf("another team's list total is %d, want its own 2", n)
	}
	s.acmeUpdate(t, cred, strings.Repeat("k", 43)) // the credential was not rotated
}

// isoOp is one documented key-authenticated endpoint.
type isoOp struct {
	method, path, scope string
	hasBody             bool
}

var scopeRe = regexp.MustCompile(`Scope (hostnames:read|hostnames:write|dns01:write)`)

func isoOperations(t *testing.T, s *server) []isoOp {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			Description string                `json:"description"`
			Security    []map[string][]string `json:"security"`
			RequestBody any                   `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(s.must(200, "GET", "/openapi.json", "", nil).raw, &doc); err != nil {
		t.Fatal(err)
	}
	var ops []isoOp
	for path, methods := range doc.Paths {
		if !strings.HasPrefix(path, "/api/v1/") {
			continue
		}
		for method, op := range methods {
			if len(op.Security) == 0 || op.Security[0]["apiKey"] == nil {
				continue
			}
			o := isoOp{method: strings.ToUpper(method), path: path, hasBody: op.RequestBody != nil}
			if m := scopeRe.FindStringSubmatch(op.Description); m != nil {
				o.scope = m[1]
			}
			ops = append(ops, o)
		}
	}
	// Writes that end things last, so that what comes before meets them.
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].method != "DELETE" && ops[j].method == "DELETE" })
	return ops
}

// isoState is what a refused request could have changed about a hostname.
func isoState(t *testing.T, s *server, key, id, name string) string {
	t.Helper()
	h := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil)
	recs := s.must(200, "GET", "/api/v1/hostnames/"+id+"/records", key, nil)
	cert := s.do("GET", "/api/v1/hostnames/"+id+"/certificate", key, nil)
	var txt []string
	for _, rr := range s.query("note."+name, dns.TypeTXT, "udp").Answer {
		txt = append(txt, rr.String())
	}
	return strings.Join([]string{h.str("status"), h.str("ip"), h.str("updated_at"), string(recs.raw),
		cert.str("code"), strings.Join(addrs(s.query(name, dns.TypeA, "udp")), ","), strings.Join(txt, ";")}, " | ")
}
