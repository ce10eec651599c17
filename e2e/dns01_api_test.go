package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// DNS-01 publishing through the acme-dns-compatible API: credentials made
// with a key, challenge values published with them, and the values served at
// _acme-challenge.<hostname>, in both profiles and on both dialects.

// acmeUUID4 is the form of a credential's username.
var acmeUUID4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// acmeValue is a fresh value of the form ACME clients send: the
// unpadded base64url of a SHA-256 digest, 43 characters.
func acmeValue() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// acmeEnv is a server with an account (profile 1) or a team with a
// dedicated domain (profile 2) that mints hostnames, and a second one.
type acmeEnv struct {
	s          *server
	profile    int
	team       string // the account's id
	key        string // every scope on the whole account
	other      string // a key of another account
	hostDomain string // profile 2: the team's domain
	n          int
}

func newAcmeEnv(t *testing.T, s *server, profile int) *acmeEnv {
	t.Helper()
	e := &acmeEnv{s: s, profile: profile}
	if profile == 1 {
		e.team, e.key = s.account("pro")
		_, e.other = s.account("free")
		return e
	}
	e.hostDomain = "acme.example.net"
	e.team, e.key = s.team(t, e.hostDomain)
	_, e.other = s.team(t, "other.example.net")
	return e
}

// acmeHost is a minted hostname.
type acmeHost struct{ id, name, ip string }

// mint makes a hostname with key (the account's own key when "") and waits
// until it is live.
func (e *acmeEnv) mint(t *testing.T, key string) acmeHost {
	t.Helper()
	if key == "" {
		key = e.key
	}
	e.n++
	ip := fmt.Sprintf("198.41.0.%d", e.n)
	body := map[string]any{"ip": ip}
	if e.profile == 2 {
		body["subdomain"] = fmt.Sprintf("host%d", e.n)
	}
	h := e.s.must(201, "POST", "/api/v1/hostnames", key, body)
	if e.profile == 2 {
		e.s.live(t, key, h.str("id"))
	}
	return acmeHost{id: h.str("id"), name: h.str("hostname"), ip: ip}
}

// acmeCred is a DNS-01 credential as a client stores it.
type acmeCred struct{ user, pass, fulldomain string }

func acmeCredPath(id string) string { return "/api/v1/hostnames/" + id + "/acme-credential" }

// acmeCredential makes a credential for hostname id with key.
func (s *server) acmeCredential(t testing.TB, key, id string) acmeCred {
	t.Helper()
	r := s.must(201, "POST", acmeCredPath(id), key, nil)
	return acmeCred{user: r.str("username"), pass: r.str("password"), fulldomain: r.str("fulldomain")}
}

// acmeSend is a request with exactly the headers given (no Content-Type unless
// given) and body sent as is.
func (s *server) acmeSend(t testing.TB, method, path string, hdr map[string]string, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, s.api+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			t.Fatalf("%s %s: answer is not a JSON object: %v: %s", method, path, err, raw)
		}
	}
	return r
}

// headers are the credential headers of c, with a Content-Type if ctype is not "".
func (c acmeCred) headers(ctype string) map[string]string {
	h := map[string]string{"X-Api-User": c.user, "X-Api-Key": c.pass}
	if ctype != "" {
		h["Content-Type"] = ctype
	}
	return h
}

// acmeBody is an acme-dns update body with the given key names.
func acmeBody(subKey, sub, txtKey string, txt any) string {
	b, _ := json.Marshal(map[string]any{subKey: sub, txtKey: txt})
	return string(b)
}

// acmeUpdate publishes txt with c as acme.sh does (no Content-Type) and
// requires 200 {"txt": txt}.
func (s *server) acmeUpdate(t testing.TB, c acmeCred, txt string) {
	t.Helper()
	r := s.acmeSend(t, "POST", "/api/acme/update", c.headers(""), acmeBody("subdomain", c.user, "txt", txt))
	acmeCheckUpdated(t, r, txt)
}

// acmePost publishes v with c from any goroutine: an error unless 200.
func acmePost(api string, c acmeCred, v string) error {
	req, err := http.NewRequest("POST", api+"/api/acme/update", strings.NewReader(acmeBody("subdomain", c.user, "txt", v)))
	if err != nil {
		return err
	}
	for k, h := range c.headers("") {
		req.Header.Set(k, h)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return nil
}

// acmeCheckUpdated requires the answer clients take as success: exactly 200, a
// JSON body {"txt": value} with the value in double quotes.
func acmeCheckUpdated(t testing.TB, r response, txt string) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("update: status %d, want 200: %s", r.status, r.raw)
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("update: Content-Type %q", r.header.Get("Content-Type"))
	}
	if len(r.body) != 1 || r.str("txt") != txt || !strings.Contains(string(r.raw), `"`+txt+`"`) {
		t.Fatalf("update: body %s, want {\"txt\": %q}", r.raw, txt)
	}
}

// acmeCheckError requires status and an {error, code} JSON body with code.
func acmeCheckError(t testing.TB, what string, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d: %s", what, r.status, status, r.raw)
		return
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("%s: error body is not JSON (Content-Type %q): %s", what, r.header.Get("Content-Type"), r.raw)
		return
	}
	msg, _ := r.body["error"].(string)
	if len(r.body) != 2 || r.str("code") != code || msg == "" {
		t.Errorf("%s: error body %s, want {error, code: %s}", what, r.raw, code)
	}
}

// acmeServedTXT is the challenge values served at name over proto, sorted. The
// answer must be authoritative NOERROR, TXT only, one string each, TTL 1..60.
func acmeServedTXT(t testing.TB, s *server, name, proto string) []string {
	t.Helper()
	m := s.query(name, dns.TypeTXT, proto)
	if m.Rcode != dns.RcodeSuccess || !m.Authoritative {
		t.Fatalf("TXT %s over %s: rcode %s, aa %v, want an authoritative NOERROR:\n%v", name, proto, dns.RcodeToString[m.Rcode], m.Authoritative, m)
	}
	var out []string
	for _, rr := range m.Answer {
		txt, ok := rr.(*dns.TXT)
		if !ok || len(txt.Txt) != 1 || !strings.EqualFold(txt.Hdr.Name, dns.Fqdn(name)) {
			t.Fatalf("TXT %s over %s: unexpected record %v", name, proto, rr)
		}
		if txt.Hdr.Ttl == 0 || txt.Hdr.Ttl > 60 {
			t.Fatalf("TXT %s over %s: TTL %d, want 1..60", name, proto, txt.Hdr.Ttl)
		}
		out = append(out, txt.Txt[0])
	}
	slices.Sort(out)
	return out
}

// acmeServes requires name to serve exactly want over UDP and TCP, now: a value
// is served as soon as its update answered 200.
func acmeServes(t testing.TB, s *server, name string, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	for _, proto := range []string{"udp", "tcp"} {
		if got := acmeServedTXT(t, s, name, proto); !slices.Equal(got, want) {
			t.Fatalf("TXT %s over %s: %v, want %v", name, proto, got, want)
		}
	}
}

// acmeNoChallenge requires name to answer an authoritative NXDOMAIN over UDP and TCP.
func acmeNoChallenge(t testing.TB, s *server, name string) {
	t.Helper()
	for _, proto := range []string{"udp", "tcp"} {
		m := s.query(name, dns.TypeTXT, proto)
		if m.Rcode != dns.RcodeNameError || !m.Authoritative || len(m.Answer) != 0 {
			t.Fatalf("TXT %s over %s: want an authoritative NXDOMAIN, got:\n%v", name, proto, m)
		}
	}
}

// acmeEachProfile runs f on a fresh server per profile and dialect.
func acmeEachProfile(t *testing.T, o options, f func(t *testing.T, e *acmeEnv)) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprintf("p%d", p), func(t *testing.T) {
			t.Parallel()
			o := o
			o.profile = p
			eachDialect(t, o, func(t *testing.T, s *server) { f(t, newAcmeEnv(t, s, p)) })
		})
	}
}

// The credential endpoint: the registration object, the limit of 5, and
// who may call it.
func TestDNS01Cred(t *testing.T) {
	acmeEachProfile(t, options{}, func(t *testing.T, e *acmeEnv) {
		s := e.s
		h := e.mint(t, "")

		// Five credentials, each a full acme-dns registration, then 400.
		seen := map[string]bool{}
		for i := 0; i < 5; i++ {
			r := s.must(201, "POST", acmeCredPath(h.id), e.key, nil)
			user, pass := r.str("username"), r.str("password")
			if !acmeUUID4.MatchString(user) {
				t.Errorf("username %q is not a UUID v4", user)
			}
			if len(pass) < 32 {
				t.Errorf("password %q is short", pass)
			}
			if seen[user] || seen[pass] {
				t.Errorf("credential %d repeats a username or password: %s", i, r.raw)
			}
			seen[user], seen[pass] = true, true
			if got := r.str("fulldomain"); got != "_acme-challenge."+h.name {
				t.Errorf("fulldomain %q, want _acme-challenge.%s", got, h.name)
			}
			if r.str("subdomain") != user {
				t.Errorf("subdomain %q, want the username %q", r.str("subdomain"), user)
			}
			if got := r.str("server_url"); got != s.api+"/api/acme" {
				t.Errorf("server_url %q, want %s/api/acme", got, s.api)
			}
			if af, ok := r.body["allowfrom"].([]any); !ok || len(af) != 0 {
				t.Errorf("allowfrom %v, want []", r.body["allowfrom"])
			}
			if want := []string{"allowfrom", "fulldomain", "password", "server_url", "subdomain", "username"}; !slices.Equal(slices.Sorted(maps.Keys(r.body)), want) {
				t.Errorf("credential fields %v, want %v", slices.Sorted(maps.Keys(r.body)), want)
			}
			// Each one publishes.
			s.acmeUpdate(t, acmeCred{user: user, pass: pass}, acmeValue())
		}
		acmeCheckError(t, "sixth credential", s.do("POST", acmeCredPath(h.id), e.key, nil), 400, "BAD_REQUEST")
		// Another hostname has its own five.
		h2 := e.mint(t, "")
		s.must(201, "POST", acmeCredPath(h2.id), e.key, nil)

		otherHost := e.mint(t, e.other)
		tests := []struct {
			name   string
			key    string
			id     string
			status int
			code   string
		}{
			{"no key", "", h2.id, 401, "UNAUTHORIZED"},
			{"unknown key", "svc_nokey_nosecret", h2.id, 401, "UNAUTHORIZED"},
			{"other team's hostname", e.key, otherHost.id, 404, "NOT_FOUND"},
			{"other team's key", e.other, h2.id, 404, "NOT_FOUND"},
			{"no such hostname", e.key, "h_none", 404, "NOT_FOUND"},
		}
		for _, tc := range tests {
			acmeCheckError(t, tc.name, s.do("POST", acmeCredPath(tc.id), tc.key, nil), tc.status, tc.code)
		}

		if e.profile != 2 {
			return
		}
		// Scopes: dns01:write narrowed to one hostname makes that
		// hostname's credentials and no other's; hostnames:write alone
		// makes none.
		own, sibling := e.mint(t, ""), e.mint(t, "")
		dns01Own := s.key(t, e.team, []map[string]any{{"scope": "dns01:write", "hostname": own.id}})
		dns01Team := s.key(t, e.team, []map[string]any{{"scope": "dns01:write", "domain": e.hostDomain}})
		writeOnly := s.key(t, e.team, []map[string]any{{"scope": "hostnames:write"}})
		readOnly := s.key(t, e.team, []map[string]any{{"scope": "hostnames:read"}})
		scoped := []struct {
			name   string
			key    string
			id     string
			status int
		}{
			{"dns01:write on the hostname", dns01Own, own.id, 201},
			{"dns01:write on another hostname", dns01Own, sibling.id, 403},
			{"dns01:write on the domain", dns01Team, sibling.id, 201},
			{"hostnames:write only", writeOnly, own.id, 403},
			{"hostnames:read only", readOnly, own.id, 403},
		}
		for _, tc := range scoped {
			r := s.do("POST", acmeCredPath(tc.id), tc.key, nil)
			if tc.status != 201 {
				acmeCheckError(t, tc.name, r, tc.status, "FORBIDDEN")
				continue
			}
			if r.status != 201 {
				t.Errorf("%s: status %d, want 201: %s", tc.name, r.status, r.raw)
				continue
			}
			// The narrowed key's credential publishes for its hostname.
			c := acmeCred{user: r.str("username"), pass: r.str("password")}
			v := acmeValue()
			s.acmeUpdate(t, c, v)
			if r.str("fulldomain") == "_acme-challenge."+own.name {
				acmeServes(t, s, "_acme-challenge."+own.name, v)
			}
		}
	})
}

// Credentials are made for live hostnames only: [P1] expired or released,
// [P2] suspended, released or terminated hostnames get 409.
func TestDNS01CredNotLive(t *testing.T) {
	t.Run("p1", func(t *testing.T) {
		t.Parallel()
		eachDialect(t, options{profile: 1, idle: "2s"}, func(t *testing.T, s *server) {
			e := newAcmeEnv(t, s, 1)
			idle, gone := e.mint(t, ""), e.mint(t, "")
			s.must(200, "DELETE", "/api/v1/hostnames/"+gone.id, e.key, nil)
			acmeCheckError(t, "released", s.do("POST", acmeCredPath(gone.id), e.key, nil), 409, "CONFLICT")
			g := s.must(200, "GET", "/api/v1/hostnames/"+idle.id, e.key, nil)
			time.Sleep(time.Until(parseTime(t, g.str("expires_at"))) + 200*time.Millisecond)
			acmeCheckError(t, "expired", s.do("POST", acmeCredPath(idle.id), e.key, nil), 409, "CONFLICT")
			// Renewed, it may have credentials again.
			s.must(200, "POST", "/api/v1/hostnames/"+idle.id+"/renew", e.key, nil)
			s.must(201, "POST", acmeCredPath(idle.id), e.key, nil)
		})
	})
	t.Run("p2", func(t *testing.T) {
		t.Parallel()
		eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
			e := newAcmeEnv(t, s, 2)
			sus, gone, term := e.mint(t, ""), e.mint(t, ""), e.mint(t, "")
			s.must(200, "POST", "/api/admin/hostnames/"+sus.id+"/suspend", s.admin, nil)
			s.must(200, "DELETE", "/api/v1/hostnames/"+gone.id, e.key, nil)
			s.must(200, "POST", "/api/admin/hostnames/"+term.id+"/terminate", s.admin, nil)
			for _, tc := range []struct{ name, id string }{{"suspended", sus.id}, {"released", gone.id}, {"terminated", term.id}} {
				acmeCheckError(t, tc.name, s.do("POST", acmeCredPath(tc.id), e.key, nil), 409, "CONFLICT")
			}
			// Restored and live again: credentials can be made.
			s.must(200, "POST", "/api/admin/hostnames/"+sus.id+"/restore", s.admin, nil)
			s.live(t, e.key, sus.id)
			s.must(201, "POST", acmeCredPath(sus.id), e.key, nil)
		})
	})
}

// The update call as acme-dns clients make it, its refusals, and what DNS
// acmeServes: the two newest values, at once, over UDP and TCP.
func TestDNS01Update(t *testing.T) {
	acmeEachProfile(t, options{}, func(t *testing.T, e *acmeEnv) {
		s := e.s
		h := e.mint(t, "")
		c := s.acmeCredential(t, e.key, h.id)
		c2 := s.acmeCredential(t, e.key, h.id) // a second credential of the same hostname
		other := s.acmeCredential(t, e.key, e.mint(t, "").id)
		name := c.fulldomain

		// Before any update the name does not exist; the hostname resolves.
		acmeNoChallenge(t, s, name)
		s.resolves(h.name, dns.TypeA, h.ip)

		// Every way clients send an update works, and each value is served
		// as soon as the call answers: the two newest.
		var values []string
		ok := []struct {
			name, ctype, subKey, txtKey string
		}{
			{"no Content-Type (acme.sh)", "", "subdomain", "txt"},
			{"text/plain", "text/plain", "subdomain", "txt"},
			{"application/json", "application/json", "subdomain", "txt"},
			{"SubDomain/Txt (old goacmedns)", "application/json", "SubDomain", "Txt"},
			{"SubDomain/Txt, no Content-Type", "", "SubDomain", "Txt"},
		}
		for _, tc := range ok {
			v := acmeValue()
			r := s.acmeSend(t, "POST", "/api/acme/update", c.headers(tc.ctype), acmeBody(tc.subKey, c.user, tc.txtKey, v))
			if r.status != 200 {
				t.Fatalf("%s: status %d, want 200: %s", tc.name, r.status, r.raw)
			}
			acmeCheckUpdated(t, r, v)
			values = append(values, v)
			acmeServes(t, s, name, values[max(0, len(values)-2):]...)
		}
		// A second credential of the hostname publishes to the same name.
		v := acmeValue()
		s.acmeUpdate(t, c2, v)
		values = append(values, v)
		newest := values[len(values)-2:]
		acmeServes(t, s, name, newest...)
		s.resolves(h.name, dns.TypeA, h.ip)

		// The answer is authoritative, a positive one with nothing else, and
		// other types at the name answer NODATA.
		m := s.query(name, dns.TypeTXT, "udp")
		if !m.Authoritative || len(m.Answer) != 2 {
			t.Fatalf("TXT %s: %v", name, m)
		}
		if a := s.query(name, dns.TypeA, "udp"); a.Rcode != dns.RcodeSuccess || len(a.Answer) != 0 || !a.Authoritative {
			t.Fatalf("A %s: want an authoritative NODATA: %v", name, a)
		}

		// Refusals: each an {error, code} JSON body; none publishes.
		good := acmeValue()
		body := func(txt any) string { return acmeBody("subdomain", c.user, "txt", txt) }
		refusals := []struct {
			name   string
			hdr    map[string]string
			body   string
			status int
			code   string
		}{
			{"42 characters", c.headers(""), body(good[:42]), 400, "BAD_REQUEST"},
			{"44 characters", c.headers(""), body(good + "A"), 400, "BAD_REQUEST"},
			{"with a dot", c.headers(""), body(good[:42] + "."), 400, "BAD_REQUEST"},
			{"with =", c.headers(""), body(good[:42] + "="), 400, "BAD_REQUEST"},
			{"with a space", c.headers(""), body(good[:20] + " " + good[21:]), 400, "BAD_REQUEST"},
			{"empty txt", c.headers(""), body(""), 400, "BAD_REQUEST"},
			{"txt a number", c.headers(""), body(42), 400, "BAD_REQUEST"},
			{"no txt", c.headers(""), `{"subdomain":"` + c.user + `"}`, 400, "BAD_REQUEST"},
			{"not JSON", c.headers(""), "subdomain=" + c.user + "&txt=" + good, 400, "BAD_REQUEST"},
			{"not JSON, text/plain", c.headers("text/plain"), good, 400, "BAD_REQUEST"},
			{"empty body", c.headers(""), "", 400, "BAD_REQUEST"},
			{"JSON array", c.headers(""), `[]`, 400, "BAD_REQUEST"},
			{"body over 4KB", c.headers(""), body(good + strings.Repeat("A", 5000)), 400, "BAD_REQUEST"},
			{"unknown user", acmeCred{user: "6f1c2a3e-4b5d-4e6f-8a7b-9c0d1e2f3a4b", pass: c.pass}.headers(""), acmeBody("subdomain", "6f1c2a3e-4b5d-4e6f-8a7b-9c0d1e2f3a4b", "txt", good), 401, "UNAUTHORIZED"},
			{"user not a UUID", acmeCred{user: "nobody", pass: c.pass}.headers(""), acmeBody("subdomain", "nobody", "txt", good), 401, "UNAUTHORIZED"},
			{"wrong key", acmeCred{user: c.user, pass: c2.pass}.headers(""), body(good), 401, "UNAUTHORIZED"},
			{"empty key", acmeCred{user: c.user}.headers(""), body(good), 401, "UNAUTHORIZED"},
			{"no X-Api-Key", map[string]string{"X-Api-User": c.user}, body(good), 401, "UNAUTHORIZED"},
			{"no X-Api-User", map[string]string{"X-Api-Key": c.pass}, body(good), 401, "UNAUTHORIZED"},
			{"no headers", nil, body(good), 401, "UNAUTHORIZED"},
			{"bearer key instead", map[string]string{"Authorization": "Bearer " + e.key}, body(good), 401, "UNAUTHORIZED"},
			{"subdomain of the hostname's other credential", c.headers(""), acmeBody("subdomain", c2.user, "txt", good), 403, "FORBIDDEN"},
			{"subdomain of another hostname's credential", c.headers(""), acmeBody("subdomain", other.user, "txt", good), 403, "FORBIDDEN"},
			{"subdomain unknown", c.headers(""), acmeBody("subdomain", "6f1c2a3e-4b5d-4e6f-8a7b-9c0d1e2f3a4b", "txt", good), 403, "FORBIDDEN"},
			{"subdomain the fulldomain", c.headers(""), acmeBody("subdomain", c.fulldomain, "txt", good), 403, "FORBIDDEN"},
			// The field is required: its absence is a bad request, not a
			// foreign subdomain.
			{"no subdomain", c.headers(""), `{"txt":"` + good + `"}`, 400, "BAD_REQUEST"},
			{"empty subdomain", c.headers(""), acmeBody("subdomain", "", "txt", good), 400, "BAD_REQUEST"},
		}
		for _, tc := range refusals {
			acmeCheckError(t, tc.name, s.acmeSend(t, "POST", "/api/acme/update", tc.hdr, tc.body), tc.status, tc.code)
		}
		acmeServes(t, s, name, newest...)

		// Names are case-insensitive.
		if m := s.query(strings.ToUpper(name), dns.TypeTXT, "tcp"); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 2 {
			t.Fatalf("TXT %s: %v", strings.ToUpper(name), m)
		}

		// Two clients at once (an apex and a wildcard value published in
		// parallel): both are served.
		for round := 0; round < 5; round++ {
			va, vb := acmeValue(), acmeValue()
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, p := range []struct {
				c acmeCred
				v string
			}{{c, va}, {c2, vb}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = acmePost(s.api, p.c, p.v)
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatalf("concurrent update: %v", err)
				}
			}
			acmeServes(t, s, name, va, vb)
			newest = []string{va, vb}
		}

		// Another hostname's credential publishes at its own name only.
		v = acmeValue()
		s.acmeUpdate(t, other, v)
		acmeServes(t, s, other.fulldomain, v)
		acmeServes(t, s, name, newest...)
	})
}

// An update body that is a valid object padded past 4KB, or followed by
// anything at all, is refused (400): the whole body is read, not only its
// first JSON value.
func TestDNS01UpdatePaddedBody(t *testing.T) {
	s := start(t, options{profile: 1})
	e := newAcmeEnv(t, s, 1)
	c := s.acmeCredential(t, e.key, e.mint(t, "").id)
	b := acmeBody("subdomain", c.user, "txt", acmeValue())
	acmeCheckError(t, "padded past 4KB", s.acmeSend(t, "POST", "/api/acme/update", c.headers(""), b+strings.Repeat(" ", 5000)), 400, "BAD_REQUEST")
	acmeCheckError(t, "trailing data", s.acmeSend(t, "POST", "/api/acme/update", c.headers(""), b+"garbage"), 400, "BAD_REQUEST")
	acmeNoChallenge(t, s, c.fulldomain)
}

// The hostname's state decides whether its credentials work and its values
// are served: released and expired (P1) and terminated (P2) refuse with
// 401; suspended (P2) refuses with 403 and comes back on restore.
func TestDNS01UpdateStates(t *testing.T) {
	t.Run("p1", func(t *testing.T) {
		t.Parallel()
		eachDialect(t, options{profile: 1, idle: "2s"}, func(t *testing.T, s *server) {
			e := newAcmeEnv(t, s, 1)
			idle, gone := e.mint(t, ""), e.mint(t, "")
			ci, cg := s.acmeCredential(t, e.key, idle.id), s.acmeCredential(t, e.key, gone.id)
			vi, vg := acmeValue(), acmeValue()
			s.acmeUpdate(t, ci, vi)
			s.acmeUpdate(t, cg, vg)
			acmeServes(t, s, ci.fulldomain, vi)
			acmeServes(t, s, cg.fulldomain, vg)

			// Released: the credential is invalid, the values gone.
			s.must(200, "DELETE", "/api/v1/hostnames/"+gone.id, e.key, nil)
			acmeCheckError(t, "released", s.acmeSend(t, "POST", "/api/acme/update", cg.headers(""), acmeBody("subdomain", cg.user, "txt", acmeValue())), 401, "UNAUTHORIZED")
			acmeNoChallenge(t, s, cg.fulldomain)

			// Expired: the values stop with the hostname, with nobody
			// calling; the credential is invalid.
			g := s.must(200, "GET", "/api/v1/hostnames/"+idle.id, e.key, nil)
			time.Sleep(time.Until(parseTime(t, g.str("expires_at"))) + 200*time.Millisecond)
			acmeNoChallenge(t, s, ci.fulldomain)
			acmeCheckError(t, "expired", s.acmeSend(t, "POST", "/api/acme/update", ci.headers(""), acmeBody("subdomain", ci.user, "txt", acmeValue())), 401, "UNAUTHORIZED")
			acmeNoChallenge(t, s, ci.fulldomain)
			s.resolves(idle.name, dns.TypeA, "NXDOMAIN")
		})
	})
	t.Run("p2", func(t *testing.T) {
		t.Parallel()
		eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
			e := newAcmeEnv(t, s, 2)
			sus, gone, term := e.mint(t, ""), e.mint(t, ""), e.mint(t, "")
			cs, cg, ct := s.acmeCredential(t, e.key, sus.id), s.acmeCredential(t, e.key, gone.id), s.acmeCredential(t, e.key, term.id)
			v1, v2 := acmeValue(), acmeValue()
			s.acmeUpdate(t, cs, v1)
			s.acmeUpdate(t, cs, v2)
			s.acmeUpdate(t, cg, acmeValue())
			s.acmeUpdate(t, ct, acmeValue())

			// Suspended: 403, nothing served; the values come back on restore
			// and the credential works again.
			s.must(200, "POST", "/api/admin/hostnames/"+sus.id+"/suspend", s.admin, nil)
			acmeCheckError(t, "suspended", s.acmeSend(t, "POST", "/api/acme/update", cs.headers(""), acmeBody("subdomain", cs.user, "txt", acmeValue())), 403, "FORBIDDEN")
			acmeNoChallenge(t, s, cs.fulldomain)
			s.resolves(sus.name, dns.TypeA, "NXDOMAIN")
			// The suspended hostname's refused value was not stored.
			s.must(200, "POST", "/api/admin/hostnames/"+sus.id+"/restore", s.admin, nil)
			acmeServes(t, s, cs.fulldomain, v1, v2)
			v3 := acmeValue()
			s.acmeUpdate(t, cs, v3) // pending after restore: still publishes
			acmeServes(t, s, cs.fulldomain, v2, v3)
			s.live(t, e.key, sus.id)
			acmeServes(t, s, cs.fulldomain, v2, v3)
			s.resolves(sus.name, dns.TypeA, sus.ip)

			// Terminated: 401, nothing served.
			s.must(200, "POST", "/api/admin/hostnames/"+term.id+"/terminate", s.admin, nil)
			acmeCheckError(t, "terminated", s.acmeSend(t, "POST", "/api/acme/update", ct.headers(""), acmeBody("subdomain", ct.user, "txt", acmeValue())), 401, "UNAUTHORIZED")
			acmeNoChallenge(t, s, ct.fulldomain)

			// Released: 401, nothing served; the subdomain minted again is a
			// new hostname, which the old credential does not reach and
			// whose challenge name starts empty.
			s.must(200, "DELETE", "/api/v1/hostnames/"+gone.id, e.key, nil)
			acmeCheckError(t, "released", s.acmeSend(t, "POST", "/api/acme/update", cg.headers(""), acmeBody("subdomain", cg.user, "txt", acmeValue())), 401, "UNAUTHORIZED")
			acmeNoChallenge(t, s, cg.fulldomain)
			label, _, _ := strings.Cut(gone.name, ".")
			again := s.must(201, "POST", "/api/v1/hostnames", e.key, map[string]any{"ip": gone.ip, "subdomain": label})
			if again.str("hostname") != gone.name {
				t.Fatalf("minted again: %s", again.raw)
			}
			s.live(t, e.key, again.str("id"))
			acmeNoChallenge(t, s, cg.fulldomain)
			acmeCheckError(t, "released, minted again", s.acmeSend(t, "POST", "/api/acme/update", cg.headers(""), acmeBody("subdomain", cg.user, "txt", acmeValue())), 401, "UNAUTHORIZED")
			fresh := s.acmeCredential(t, e.key, again.str("id"))
			v := acmeValue()
			s.acmeUpdate(t, fresh, v)
			acmeServes(t, s, cg.fulldomain, v)
		})
	})
}

// On a signed domain the challenge TXT is signed: an RRSIG with DO, none
// without, and delv validates it from the zone's key.
func TestDNS01UpdateSigned(t *testing.T) {
	acmeEachProfile(t, options{extra: []string{certKeyFile(t)}}, func(t *testing.T, e *acmeEnv) {
		s := e.s
		zone := "example.org"
		if e.profile == 2 {
			zone = e.hostDomain
		}
		s.must(200, "PATCH", "/api/admin/domains/"+s.domainID(t, zone), s.admin, map[string]any{"dnssec": true})
		h := e.mint(t, "")
		c := s.acmeCredential(t, e.key, h.id)
		v1, v2 := acmeValue(), acmeValue()
		s.acmeUpdate(t, c, v1)
		s.acmeUpdate(t, c, v2)

		m := s.queryDO(c.fulldomain, dns.TypeTXT)
		var txts, sigs int
		for _, rr := range m.Answer {
			switch r := rr.(type) {
			case *dns.TXT:
				txts++
			case *dns.RRSIG:
				if r.TypeCovered == dns.TypeTXT {
					sigs++
				}
			}
		}
		if m.Rcode != dns.RcodeSuccess || txts != 2 || sigs != 1 {
			t.Fatalf("TXT %s with DO: want 2 TXT and their RRSIG:\n%v", c.fulldomain, m)
		}
		if plain := s.query(c.fulldomain, dns.TypeTXT, "udp"); hasType(plain, dns.TypeRRSIG) {
			t.Fatalf("RRSIG without DO:\n%v", plain)
		}
		acmeServes(t, s, c.fulldomain, v1, v2)

		// The signature validates from the zone's key.
		k := s.query(zone, dns.TypeDNSKEY, "udp")
		if len(k.Answer) != 1 {
			t.Fatalf("DNSKEY: %v", k)
		}
		key := k.Answer[0].(*dns.DNSKEY)
		anchor := filepath.Join(t.TempDir(), "anchor")
		os.WriteFile(anchor, []byte(fmt.Sprintf("trust-anchors { %s static-key %d %d %d %q; };\n",
			dns.Fqdn(zone), key.Flags, key.Protocol, key.Algorithm, key.PublicKey)), 0o600)
		if out := delv(t, s, anchor, zone, c.fulldomain, "TXT"); !strings.Contains(out, "; fully validated") ||
			!strings.Contains(out, v1) || !strings.Contains(out, v2) {
			t.Errorf("delv %s TXT:\n%s", c.fulldomain, out)
		}
	})
}

// The rest of the acme-dns surface: health, and register pointing at the
// credential endpoint.
func TestDNS01API(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprintf("p%d", p), func(t *testing.T) {
			t.Parallel()
			s := start(t, options{profile: p})
			if r := s.acmeSend(t, "GET", "/api/acme/health", nil, ""); r.status != 200 {
				t.Errorf("health: %d %s", r.status, r.raw)
			}
			for _, body := range []string{"", `{}`, `{"allowfrom":[]}`} {
				r := s.acmeSend(t, "POST", "/api/acme/register", map[string]string{"Content-Type": "application/json"}, body)
				acmeCheckError(t, "register "+body, r, 501, "NOT_IMPLEMENTED")
				if !strings.Contains(r.str("error"), "/api/v1/hostnames/{id}/acme-credential") {
					t.Errorf("register does not point at the credential endpoint: %s", r.raw)
				}
			}
		})
	}
}

// Two nodes on one PostgreSQL: a value published on one is served by the
// other within a second, both ways; a credential made on one works on the
// other.
func TestDNS01UpdateTwoNodes(t *testing.T) {
	a, _ := spawn(t, options{dialect: storage.Postgres})
	b, _ := spawn(t, options{dialect: storage.Postgres, dsn: a.dsn})
	_, key := a.account("pro")
	h := a.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
	c := a.acmeCredential(t, key, h.str("id"))

	reaches := func(from, to *server, want ...string) {
		t.Helper()
		t0 := time.Now()
		slices.Sort(want)
		acmeServes(t, from, c.fulldomain, want...)
		eventually(t, time.Second, func() bool {
			for _, proto := range []string{"udp", "tcp"} {
				m := to.query(c.fulldomain, dns.TypeTXT, proto)
				if m.Rcode != dns.RcodeSuccess {
					return false
				}
				var got []string
				for _, rr := range m.Answer {
					if txt, ok := rr.(*dns.TXT); ok {
						got = append(got, txt.Txt...)
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					return false
				}
			}
			return true
		}, "the challenge values %v never reached the other node within a second", want)
		t.Logf("challenge propagated in %v", time.Since(t0))
	}
	v1, v2, v3 := acmeValue(), acmeValue(), acmeValue()
	a.acmeUpdate(t, c, v1)
	reaches(a, b, v1)
	b.acmeUpdate(t, c, v2)
	reaches(b, a, v1, v2)
	a.acmeUpdate(t, c, v3)
	reaches(a, b, v2, v3)
	acmeServes(t, b, c.fulldomain, v2, v3)
}

// A value published again (a client retrying an update that had in fact
// succeeded) is the same record: it must not be served twice in the RRset
// (RFC 2181 §5), nor push out the other value an apex + wildcard order
// needs; on a signed domain the answer must validate.
func TestDNS01UpdateRepeatedValue(t *testing.T) {
	s := start(t, options{profile: 2, extra: []string{certKeyFile(t)}})
	e := newAcmeEnv(t, s, 2)
	s.must(200, "PATCH", "/api/admin/domains/"+s.domainID(t, e.hostDomain), s.admin, map[string]any{"dnssec": true})
	c := s.acmeCredential(t, e.key, e.mint(t, "").id)
	apex, wild := acmeValue(), acmeValue()
	s.acmeUpdate(t, c, apex)
	s.acmeUpdate(t, c, wild)
	s.acmeUpdate(t, c, wild) // the retry
	k := s.query(e.hostDomain, dns.TypeDNSKEY, "udp").Answer[0].(*dns.DNSKEY)
	anchor := filepath.Join(t.TempDir(), "anchor")
	os.WriteFile(anchor, []byte(fmt.Sprintf("trust-anchors { %s static-key %d %d %d %q; };\n",
		dns.Fqdn(e.hostDomain), k.Flags, k.Protocol, k.Algorithm, k.PublicKey)), 0o600)
	if out := delv(t, s, anchor, e.hostDomain, c.fulldomain, "TXT"); !strings.Contains(out, "; fully validated") {
		t.Errorf("delv %s TXT:\n%s", c.fulldomain, out)
	}
	acmeServes(t, s, c.fulldomain, apex, wild)
}
