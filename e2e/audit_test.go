package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// The audit log end to end: every kind of write through the API, the
// acme-dns update, dyndns2 and the dashboard records one entry naming who,
// for whom, which route and which object; refusals by a known caller record
// their error code; 401s and input refused before the caller is known record
// nothing; GET /api/admin/audit filters and pages; no entry holds a secret;
// audit_retention purges old entries at start.

// auditRow is one entry as GET /api/admin/audit answers it.
type auditRow struct {
	ID        int64  `json:"id"`
	At        string `json:"at"`
	Actor     string `json:"actor"`
	AccountID string `json:"account_id"`
	Action    string `json:"action"`
	Object    string `json:"object"`
	Result    string `json:"result"`
	Status    int    `json:"status"`
	Address   string `json:"address"`
	Detail    string `json:"detail"`
}

func (e auditRow) String() string {
	return fmt.Sprintf("#%d %s actor=%s account=%q %q object=%q %s %d addr=%s",
		e.ID, e.At, e.Actor, e.AccountID, e.Action, e.Object, e.Result, e.Status, e.Address)
}

type auditPage struct {
	Entries    []auditRow `json:"entries"`
	NextCursor *int64     `json:"next_cursor"`
}

// auditList reads one page of GET /api/admin/audit?query.
func (s *server) auditList(t testing.TB, query string) auditPage {
	t.Helper()
	r := s.withT(t).must(200, "GET", "/api/admin/audit?"+query, s.admin, nil)
	var p auditPage
	if err := json.Unmarshal(r.raw, &p); err != nil {
		t.Fatalf("audit page: %v: %s", err, r.raw)
	}
	if p.Entries == nil {
		t.Fatalf("audit page without an entries array: %s", r.raw)
	}
	return p
}

// auditWalk follows next_cursor from the first page of query (pages of
// limit) to the last and returns every entry, newest first.
func (s *server) auditWalk(t testing.TB, query string, limit int) []auditRow {
	t.Helper()
	var out []auditRow
	cursor := int64(0)
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("audit paging never ends")
		}
		p := s.auditList(t, fmt.Sprintf("%s&limit=%d&cursor=%d", query, limit, cursor))
		if len(p.Entries) > limit {
			t.Fatalf("page of %d entries, limit %d", len(p.Entries), limit)
		}
		out = append(out, p.Entries...)
		if p.NextCursor == nil {
			return out
		}
		cursor = *p.NextCursor
	}
}

// auditMark is the id of the newest entry, 0 for none.
func (s *server) auditMark(t testing.TB) int64 {
	t.Helper()
	if p := s.auditList(t, "limit=1"); len(p.Entries) > 0 {
		return p.Entries[0].ID
	}
	return 0
}

// auditAfter is every entry newer than mark, oldest first.
func (s *server) auditAfter(t testing.TB, mark int64) []auditRow {
	t.Helper()
	var out []auditRow
	for _, e := range s.auditWalk(t, "", 500) {
		if e.ID > mark {
			out = append([]auditRow{e}, out...)
		}
	}
	return out
}

// auditWant is what an entry must read; address "" is 127.0.0.1.
type auditWant struct {
	actor, account, action, object, result string
	status                                 int
	address                                string
}

func auditOK(actor, account, action, object string, status int) auditWant {
	return auditWant{actor: actor, account: account, action: action, object: object, result: "ok", status: status}
}

// auditCase is one request and the entries it must leave: none for a
// request that must not be recorded.
type auditCase struct {
	name string
	do   func(t *testing.T) []auditWant
	bug  string // a known bug of the production code: the case is skipped
}

// runAudit runs the cases in order on s, each checking that exactly the
// entries it names were added, and returns the entries seen.
func runAudit(t *testing.T, s *server, cases []auditCase) []auditRow {
	t.Helper()
	var seen []auditRow
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.bug != "" {
				t.Skip("bug: " + c.bug)
			}
			mark := s.auditMark(t)
			want := c.do(t)
			got := s.auditAfter(t, mark)
			seen = append(seen, got...)
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d:\n%s", len(got), len(want), auditText(got))
			}
			for i, w := range want {
				g := got[i]
				if w.address == "" {
					w.address = "127.0.0.1"
				}
				if g.Actor != w.actor || g.AccountID != w.account || g.Action != w.action || g.Object != w.object ||
					g.Result != w.result || g.Status != w.status || g.Address != w.address {
					t.Errorf("entry %s,\nwant actor=%s account=%q %q object=%q %s %d addr=%s", g, w.actor, w.account,
						w.action, w.object, w.result, w.status, w.address)
				}
				if _, err := time.Parse(time.RFC3339Nano, g.At); err != nil {
					t.Errorf("entry %s: at is not RFC 3339: %v", g, err)
				}
				// A refusal through the API says why in the words the caller
				// read; a write that committed says nothing more. (A dashboard
				// form's refusal is on the page it draws again.)
				if !strings.HasPrefix(g.Actor, "session:") && (g.Result == "ok") != (g.Detail == "") {
					t.Errorf("entry %s: detail %q", g, g.Detail)
				}
			}
		})
	}
	return seen
}

func auditText(es []auditRow) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString("  " + e.String() + "\n")
	}
	return b.String()
}

// dashClient is a browser on the dashboard: its own cookies, redirects not
// followed.
type dashClient struct {
	s      *server
	client *http.Client
}

var dashCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (s *server) dashboard() *dashClient {
	jar, _ := cookiejar.New(nil)
	return &dashClient{s: s, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// send GETs path (form nil) or POSTs form to it; it answers the status, the
// Location and the csrf field of the page.
func (b *dashClient) send(t testing.TB, path string, form url.Values) (status int, location, csrf string) {
	t.Helper()
	method, body := "GET", ""
	if form != nil {
		method, body = "POST", form.Encode()
	}
	req, _ := http.NewRequest(method, b.s.api+path, strings.NewReader(body))
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if m := dashCSRF.FindSubmatch(page); m != nil {
		csrf = string(m[1])
	}
	return resp.StatusCode, resp.Header.Get("Location"), csrf
}

// signIn signs the browser in on the form at path (the operator's with the
// admin token, or a sign-in link's with its token) and returns the form
// token of the page it lands on.
func (b *dashClient) signIn(t testing.TB, path, token string) string {
	t.Helper()
	_, _, csrf := b.send(t, path+"?token="+url.QueryEscape(token), nil)
	status, loc, _ := b.send(t, path, url.Values{"csrf": {csrf}, "token": {token}})
	if status != http.StatusSeeOther {
		t.Fatalf("signing in at %s: %d", path, status)
	}
	_, _, csrf = b.send(t, loc, nil)
	if csrf == "" {
		t.Fatalf("no form token on %s after signing in", loc)
	}
	return csrf
}

// linkToken issues a sign-in link for account and returns its token.
func (s *server) linkToken(t testing.TB, account string) (token string, raw []byte) {
	t.Helper()
	r := s.withT(t).must(201, "POST", "/api/admin/accounts/"+account+"/signin-links", s.admin, nil)
	u, err := url.Parse(r.str("url"))
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("sign-in link without a token: %s", r.raw)
	}
	return u.Query().Get("token"), r.raw
}

// The core: every write of profile 1 and its refusals, on both dialects.
func TestAuditWritesP1(t *testing.T) {
	eachDialect(t, options{profile: 1}, func(t *testing.T, s *server) {
		const admin = "admin"
		var acct, keyID, key, revokeID, hid, hname, domainID string
		var cred acmeCred
		var dash *dashClient
		var csrf string
		freeAcct, freeKey := s.account("free")
		freeKeyID := keyIDOf(t, freeKey)
		hostState := func(t *testing.T) string {
			return s.withT(t).must(200, "GET", "/api/v1/hostnames/"+hid, key, nil).str("status")
		}
		cases := []auditCase{
			{name: "admin creates an account", do: func(t *testing.T) []auditWant {
				acct = s.withT(t).must(201, "POST", "/api/admin/accounts", s.admin, map[string]any{"name": "Audited", "plan": "pro"}).str("id")
				return []auditWant{auditOK(admin, "", "POST /api/admin/accounts", "account:"+acct, 201)}
			}},
			{name: "admin patches the account", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "PATCH", "/api/admin/accounts/"+acct, s.admin, map[string]any{"plan": "business"})
				return []auditWant{auditOK(admin, acct, "PATCH /api/admin/accounts/{id}", "account:"+acct, 200)}
			}},
			{name: "admin creates a key", do: func(t *testing.T) []auditWant {
				r := s.withT(t).must(201, "POST", "/api/admin/accounts/"+acct+"/keys", s.admin, map[string]any{"name": "ci"})
				keyID, key = r.str("id"), r.str("key")
				return []auditWant{auditOK(admin, acct, "POST /api/admin/accounts/{id}/keys", "key:"+keyID, 201)}
			}},
			{name: "admin creates a second key", do: func(t *testing.T) []auditWant {
				revokeID = s.withT(t).must(201, "POST", "/api/admin/accounts/"+acct+"/keys", s.admin, map[string]any{"name": "old"}).str("id")
				return []auditWant{auditOK(admin, acct, "POST /api/admin/accounts/{id}/keys", "key:"+revokeID, 201)}
			}},
			{name: "admin revokes it", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "DELETE", "/api/admin/keys/"+revokeID, s.admin, nil)
				return []auditWant{auditOK(admin, "", "DELETE /api/admin/keys/{key_id}", "key:"+revokeID, 200)}
			}},
			{name: "admin issues a sign-in link", do: func(t *testing.T) []auditWant {
				s.linkToken(t, acct)
				return []auditWant{auditOK(admin, acct, "POST /api/admin/accounts/{id}/signin-links", "account:"+acct, 201)}
			}},
			{name: "admin adds a domain", do: func(t *testing.T) []auditWant {
				domainID = s.withT(t).must(201, "POST", "/api/admin/domains", s.admin, map[string]any{"name": "audit.example.net"}).str("id")
				return []auditWant{auditOK(admin, "", "POST /api/admin/domains", "domain:"+domainID, 201)}
			}},
			{name: "key creates a hostname", do: func(t *testing.T) []auditWant {
				r := s.withT(t).must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "audited"})
				hid, hname = r.str("id"), r.str("hostname")
				return []auditWant{auditOK("key:"+keyID, acct, "POST /api/v1/hostnames", "hostname:"+hid, 201)}
			}},
			{name: "reads are not recorded", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "GET", "/api/v1/hostnames/"+hid, key, nil)
				s.withT(t).must(200, "GET", "/api/v1/hostnames", key, nil)
				s.withT(t).must(200, "GET", "/api/admin/accounts/"+acct, s.admin, nil)
				return nil
			}},
			{name: "key updates it", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "PUT", "/api/v1/hostnames/"+hid, key, map[string]any{"ip": "198.41.0.5"})
				return []auditWant{auditOK("key:"+keyID, acct, "PUT /api/v1/hostnames/{id}", "hostname:"+hid, 200)}
			}},
			{name: "key renews it", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "POST", "/api/v1/hostnames/"+hid+"/renew", key, nil)
				return []auditWant{auditOK("key:"+keyID, acct, "POST /api/v1/hostnames/{id}/renew", "hostname:"+hid, 200)}
			}},
			{name: "key creates a DNS-01 credential", do: func(t *testing.T) []auditWant {
				cred = s.acmeCredential(t, key, hid)
				return []auditWant{auditOK("key:"+keyID, acct, "POST /api/v1/hostnames/{id}/acme-credential", "credential:"+cred.user, 201)}
			}},
			{name: "acme-dns update", do: func(t *testing.T) []auditWant {
				s.acmeUpdate(t, cred, acmeValue())
				return []auditWant{auditOK("acme:"+cred.user, acct, "POST /api/acme/update", "credential:"+cred.user, 200)}
			}},
			{name: "acme-dns: a bad value by a known credential", do: func(t *testing.T) []auditWant {
				if r := s.acmeSend(t, "POST", "/api/acme/update", cred.headers(""), acmeBody("subdomain", cred.user, "txt", "short")); r.status != 400 {
					t.Fatalf("acme-dns update of a bad value: %d %s", r.status, r.raw)
				}
				return []auditWant{{actor: "acme:" + cred.user, account: acct, action: "POST /api/acme/update", object: "credential:" + cred.user, result: "BAD_REQUEST", status: 400}}
			}},
			{name: "X-Forwarded-For from an untrusted peer is not the address", do: func(t *testing.T) []auditWant {
				r := s.acmeSend(t, "POST", "/api/v1/hostnames", map[string]string{"Authorization": "Bearer " + key, "X-Forwarded-For": "203.0.113.9"}, `{"ip": "198.41.0.20"}`)
				if r.status != 201 {
					t.Fatalf("create: %d %s", r.status, r.raw)
				}
				return []auditWant{auditOK("key:"+keyID, acct, "POST /api/v1/hostnames", "hostname:"+r.str("id"), 201)}
			}},
			{name: "dyndns2 update", do: func(t *testing.T) []auditWant {
				if a := s.dyn(t, "/nic/update", key, "hostname="+hname+"&myip=198.41.0.6", nil); a.body != "good 198.41.0.6" {
					t.Fatalf("dyndns2: %d %q", a.status, a.body)
				}
				return []auditWant{auditOK("key:"+keyID, acct, "GET /nic/update", "hostname:"+hid, 200)}
			}},
			{name: "dyndns2 nohost is a refusal", do: func(t *testing.T) []auditWant {
				if a := s.dyn(t, "/nic/update", key, "hostname=nothing.example.org&myip=198.41.0.6", nil); a.body != "nohost" {
					t.Fatalf("dyndns2: %d %q", a.status, a.body)
				}
				return []auditWant{{actor: "key:" + keyID, account: acct, action: "GET /nic/update", result: "NOT_FOUND", status: 200}}
			}},
			{name: "403 by a known key", do: func(t *testing.T) []auditWant {
				s.recFails(t, 403, "FORBIDDEN", "POST", "/api/v1/hostnames", freeKey, map[string]any{"ip": "10.0.0.1"})
				if n := s.withT(t).must(200, "GET", "/api/v1/hostnames", freeKey, nil).body["hostnames"].([]any); len(n) != 0 {
					t.Errorf("the refused create made a hostname: %v", n)
				}
				return []auditWant{{actor: "key:" + freeKeyID, account: freeAcct, action: "POST /api/v1/hostnames", result: "FORBIDDEN", status: 403}}
			}},
			{name: "400 by a known key", do: func(t *testing.T) []auditWant {
				s.recFails(t, 400, "BAD_REQUEST", "PUT", "/api/v1/hostnames/"+hid, key, map[string]any{"ip": "not-an-address"})
				if ip := s.withT(t).must(200, "GET", "/api/v1/hostnames/"+hid, key, nil).str("ip"); ip != "198.41.0.6" {
					t.Errorf("the refused update changed the address to %s", ip)
				}
				return []auditWant{{actor: "key:" + keyID, account: acct, action: "PUT /api/v1/hostnames/{id}", object: "hostname:" + hid, result: "BAD_REQUEST", status: 400}}
			}},
			{name: "404 by a known key", do: func(t *testing.T) []auditWant {
				s.recFails(t, 404, "NOT_FOUND", "PUT", "/api/v1/hostnames/hn_none", key, map[string]any{"ip": "198.41.0.7"})
				return []auditWant{{actor: "key:" + keyID, account: acct, action: "PUT /api/v1/hostnames/{id}", object: "hostname:hn_none", result: "NOT_FOUND", status: 404}}
			}},
			{name: "409 by the admin", do: func(t *testing.T) []auditWant {
				s.recFails(t, 409, "CONFLICT", "POST", "/api/admin/domains", s.admin, map[string]any{"name": "audit.example.net"})
				return []auditWant{{actor: admin, action: "POST /api/admin/domains", result: "CONFLICT", status: 409}}
			}},
			{name: "key releases the hostname", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "DELETE", "/api/v1/hostnames/"+hid, key, nil)
				return []auditWant{auditOK("key:"+keyID, acct, "DELETE /api/v1/hostnames/{id}", "hostname:"+hid, 200)}
			}},
			{name: "409 by a known key", do: func(t *testing.T) []auditWant {
				s.recFails(t, 409, "CONFLICT", "PUT", "/api/v1/hostnames/"+hid, key, map[string]any{"ip": "198.41.0.8"})
				if st := hostState(t); st != "released" {
					t.Errorf("the refused update left the hostname %s", st)
				}
				return []auditWant{{actor: "key:" + keyID, account: acct, action: "PUT /api/v1/hostnames/{id}", object: "hostname:" + hid, result: "CONFLICT", status: 409}}
			}},
			{name: "401s are not recorded", do: func(t *testing.T) []auditWant {
				s.recFails(t, 401, "UNAUTHORIZED", "POST", "/api/v1/hostnames", key+"x", map[string]any{"ip": "198.41.0.9"})
				s.recFails(t, 401, "UNAUTHORIZED", "POST", "/api/admin/accounts", s.admin+"x", map[string]any{"name": "x", "plan": "free"})
				s.recFails(t, 401, "UNAUTHORIZED", "DELETE", "/api/admin/keys/"+keyID, key, nil)
				if a := s.dyn(t, "/nic/update", key+"x", "hostname="+hname, nil); a.status != 401 {
					t.Errorf("dyndns2 with a wrong key: %d %q", a.status, a.body)
				}
				bad := cred
				bad.pass += "x"
				unknown := acmeCred{user: "00000000-0000-4000-8000-000000000000", pass: cred.pass}
				for _, c := range []acmeCred{bad, unknown} {
					for _, txt := range []string{acmeValue(), "short"} {
						if r := s.acmeSend(t, "POST", "/api/acme/update", c.headers(""), acmeBody("subdomain", c.user, "txt", txt)); r.status != 401 {
							t.Errorf("acme-dns update as %s with a wrong password, txt %q: %d %s", c.user, txt, r.status, r.raw)
						}
					}
				}
				return nil
			}},
			{name: "bad acme-dns input before the credential is checked", do: func(t *testing.T) []auditWant {
				for _, body := range []string{"not json", "", `{"subdomain": 1}`} {
					if r := s.acmeSend(t, "POST", "/api/acme/update", cred.headers(""), body); r.status != 400 {
						t.Errorf("acme-dns update with body %q: %d %s", body, r.status, r.raw)
					}
				}
				return nil
			}},
			{name: "dashboard: the operator creates an account", do: func(t *testing.T) []auditWant {
				dash = s.dashboard()
				csrf = dash.signIn(t, "/dashboard/signin", s.admin)
				status, loc, _ := dash.send(t, "/dashboard/operator/accounts", url.Values{"csrf": {csrf}, "name": {"Made in the dashboard"}, "plan": {"free"}})
				if status != 303 || loc != "/dashboard/operator" {
					t.Fatalf("dashboard create account: %d to %q", status, loc)
				}
				// The new account's id is known only from its entry: check
				// that it names the account the form made.
				p := s.auditList(t, "actor=session:operator&limit=1")
				if len(p.Entries) != 1 || !strings.HasPrefix(p.Entries[0].Object, "account:") {
					t.Fatalf("no entry of the operator's session: %v", p.Entries)
				}
				made := strings.TrimPrefix(p.Entries[0].Object, "account:")
				if a := s.withT(t).must(200, "GET", "/api/admin/accounts/"+made, s.admin, nil); a.str("name") != "Made in the dashboard" {
					t.Fatalf("the entry names account %s: %s", made, a.raw)
				}
				return []auditWant{auditOK("session:operator", "", "POST /dashboard/operator/accounts", "account:"+made, 303)}
			}},
			{name: "dashboard: the operator's refused form", do: func(t *testing.T) []auditWant {
				if status, _, _ := dash.send(t, "/dashboard/operator/accounts", url.Values{"csrf": {csrf}, "name": {"x"}, "plan": {"free"}, "cap": {"lots"}}); status != 400 {
					t.Fatalf("dashboard create account with a bad cap: %d", status)
				}
				return []auditWant{{actor: "session:operator", action: "POST /dashboard/operator/accounts", result: "REFUSED", status: 400}}
			}},
			{name: "dashboard: a refused update stays refused though the page renews the hostname", do: func(t *testing.T) []auditWant {
				// In profile 1 drawing the hostname page again is a read that
				// renews (a write of its own): it must not stand for the form.
				r := s.withT(t).must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.50"})
				id := r.str("id")
				token, _ := s.linkToken(t, acct)
				member := s.dashboard()
				mcsrf := member.signIn(t, "/dashboard/signin/link", token)
				if status, _, _ := member.send(t, "/dashboard/team/hostnames/"+id+"/update", url.Values{"csrf": {mcsrf}, "ip": {"not-an-ip"}}); status != 400 {
					t.Fatalf("dashboard update with a bad address: %d", status)
				}
				return []auditWant{auditOK("key:"+keyID, acct, "POST /api/v1/hostnames", "hostname:"+id, 201),
					auditOK(admin, acct, "POST /api/admin/accounts/{id}/signin-links", "account:"+acct, 201),
					{actor: "session:" + acct, account: acct, action: "POST /dashboard/team/hostnames/{id}/update", object: "hostname:" + id, result: "REFUSED", status: 400}}
			}},
		}
		runAudit(t, s, cases)
	})
}

// The core of profile 2: its own writes (records, domains, abuse actions),
// a refusal by a key without the scope, and a team's dashboard form, on
// both dialects; then no entry and no row holds a secret handed out.
func TestAuditWritesP2(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		const admin, domain = "admin", "audit.example.net"
		team, key := s.team(t, domain)
		keyID := keyIDOf(t, key)
		readKey := s.key(t, team, []map[string]any{{"scope": "hostnames:read"}})
		domainID := s.recDomainID(t, domain)
		var hid, hname, rid, dashHost, linkToken, linkRaw string
		var cred acmeCred
		var dash *dashClient
		var csrf string
		k := "key:" + keyID
		cases := []auditCase{
			{name: "admin patches a domain", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "PATCH", "/api/admin/domains/"+domainID, s.admin, map[string]any{"caa": []string{`0 issue "ca.example"`}})
				return []auditWant{auditOK(admin, "", "PATCH /api/admin/domains/{id}", "domain:"+domainID, 200)}
			}},
			{name: "key creates a hostname", do: func(t *testing.T) []auditWant {
				r := s.withT(t).must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "box"})
				hid, hname = r.str("id"), r.str("hostname")
				s.live(t, key, hid)
				return []auditWant{auditOK(k, team, "POST /api/v1/hostnames", "hostname:"+hid, 201)}
			}},
			{name: "key creates a record", do: func(t *testing.T) []auditWant {
				rid = s.withT(t).must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "text": "one"}).str("id")
				return []auditWant{auditOK(k, team, "POST /api/v1/hostnames/{id}/records", "record:"+rid, 201)}
			}},
			{name: "key changes the record", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "PUT", recPath(hid, rid), key, recObj{"type": "TXT", "text": "two"})
				return []auditWant{auditOK(k, team, "PUT /api/v1/hostnames/{id}/records/{record_id}", "record:"+rid, 200)}
			}},
			{name: "key deletes the record", do: func(t *testing.T) []auditWant {
				s.withT(t).must(204, "DELETE", recPath(hid, rid), key, nil)
				return []auditWant{auditOK(k, team, "DELETE /api/v1/hostnames/{id}/records/{record_id}", "record:"+rid, 204)}
			}},
			{name: "key updates the hostname", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "PUT", "/api/v1/hostnames/"+hid, key, map[string]any{"ip": "198.41.0.5"})
				return []auditWant{auditOK(k, team, "PUT /api/v1/hostnames/{id}", "hostname:"+hid, 200)}
			}},
			{name: "key creates a DNS-01 credential", do: func(t *testing.T) []auditWant {
				s.live(t, key, hid)
				cred = s.acmeCredential(t, key, hid)
				return []auditWant{auditOK(k, team, "POST /api/v1/hostnames/{id}/acme-credential", "credential:"+cred.user, 201)}
			}},
			{name: "acme-dns update", do: func(t *testing.T) []auditWant {
				s.acmeUpdate(t, cred, acmeValue())
				return []auditWant{auditOK("acme:"+cred.user, team, "POST /api/acme/update", "credential:"+cred.user, 200)}
			}},
			{name: "acme-dns update of another subdomain is a refusal", do: func(t *testing.T) []auditWant {
				r := s.acmeSend(t, "POST", "/api/acme/update", cred.headers(""), acmeBody("subdomain", "not-this-one", "txt", acmeValue()))
				if r.status != 403 {
					t.Fatalf("acme-dns update of another subdomain: %d %s", r.status, r.raw)
				}
				return []auditWant{{actor: "acme:" + cred.user, account: team, action: "POST /api/acme/update", object: "credential:" + cred.user, result: r.str("code"), status: 403}}
			}},
			{name: "dyndns2 update", do: func(t *testing.T) []auditWant {
				if a := s.dyn(t, "/api/nic/update", key, "hostname="+hname+"&myip=198.41.0.6", nil); a.body != "good 198.41.0.6" {
					t.Fatalf("dyndns2: %d %q", a.status, a.body)
				}
				return []auditWant{auditOK(k, team, "GET /api/nic/update", "hostname:"+hid, 200)}
			}},
			{name: "dyndns2 update of two hostnames: one entry each", do: func(t *testing.T) []auditWant {
				r := s.withT(t).must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "two"})
				two := r.str("id")
				if a := s.dyn(t, "/nic/update", key, "hostname="+hname+","+r.str("hostname")+"&myip=198.41.0.11", nil); a.body != "good 198.41.0.11\ngood 198.41.0.11" {
					t.Fatalf("dyndns2: %d %q", a.status, a.body)
				}
				return []auditWant{auditOK(k, team, "POST /api/v1/hostnames", "hostname:"+two, 201),
					auditOK(k, team, "GET /nic/update", "hostname:"+hid, 200), auditOK(k, team, "GET /nic/update", "hostname:"+two, 200)}
			}},
			{name: "dyndns2 nochg and the same address again write nothing", do: func(t *testing.T) []auditWant {
				if a := s.dyn(t, "/nic/update", key, "hostname="+hname+"&myip=198.41.0.11", nil); a.body != "nochg 198.41.0.11" {
					t.Fatalf("dyndns2 again: %d %q", a.status, a.body)
				}
				s.withT(t).must(200, "PUT", "/api/v1/hostnames/"+hid, key, map[string]any{"ip": "198.41.0.11"})
				return nil
			}},
			{name: "admin suspends the hostname", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "POST", "/api/admin/hostnames/"+hid+"/suspend", s.admin, nil)
				return []auditWant{auditOK(admin, "", "POST /api/admin/hostnames/{id}/suspend", "hostname:"+hid, 200)}
			}},
			{name: "403: a suspended hostname", do: func(t *testing.T) []auditWant {
				s.recFails(t, 403, "FORBIDDEN", "PUT", "/api/v1/hostnames/"+hid, key, map[string]any{"ip": "198.41.0.7"})
				if g := s.withT(t).must(200, "GET", "/api/v1/hostnames/"+hid, key, nil); g.str("status") != "suspended" || g.str("ip") != "198.41.0.11" {
					t.Errorf("the refused update changed the hostname: %s", g.raw)
				}
				return []auditWant{{actor: k, account: team, action: "PUT /api/v1/hostnames/{id}", object: "hostname:" + hid, result: "FORBIDDEN", status: 403}}
			}},
			{name: "admin restores it", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "POST", "/api/admin/hostnames/"+hid+"/restore", s.admin, nil)
				return []auditWant{auditOK(admin, "", "POST /api/admin/hostnames/{id}/restore", "hostname:"+hid, 200)}
			}},
			{name: "409 by the admin: restore what is not suspended", do: func(t *testing.T) []auditWant {
				s.recFails(t, 409, "CONFLICT", "POST", "/api/admin/hostnames/"+hid+"/restore", s.admin, nil)
				return []auditWant{{actor: admin, action: "POST /api/admin/hostnames/{id}/restore", object: "hostname:" + hid, result: "CONFLICT", status: 409}}
			}},
			{name: "403: a key without the scope", do: func(t *testing.T) []auditWant {
				before := s.listTotal(key)
				s.recFails(t, 403, "FORBIDDEN", "POST", "/api/v1/hostnames", readKey, map[string]any{"ip": "198.41.0.8", "subdomain": "nope"})
				if after := s.listTotal(key); after != before {
					t.Errorf("the refused create changed the team's hostnames: %d, was %d", after, before)
				}
				return []auditWant{{actor: "key:" + keyIDOf(t, readKey), account: team, action: "POST /api/v1/hostnames", result: "FORBIDDEN", status: 403}}
			}},
			{name: "admin terminates the hostname", do: func(t *testing.T) []auditWant {
				s.withT(t).must(200, "POST", "/api/admin/hostnames/"+hid+"/terminate", s.admin, nil)
				return []auditWant{auditOK(admin, "", "POST /api/admin/hostnames/{id}/terminate", "hostname:"+hid, 200)}
			}},
			{name: "409: a terminated hostname", do: func(t *testing.T) []auditWant {
				s.recFails(t, 409, "CONFLICT", "DELETE", "/api/v1/hostnames/"+hid, key, nil)
				return []auditWant{{actor: k, account: team, action: "DELETE /api/v1/hostnames/{id}", object: "hostname:" + hid, result: "CONFLICT", status: 409}}
			}},
			{name: "a member signs in with a link", do: func(t *testing.T) []auditWant {
				var raw []byte
				linkToken, raw = s.linkToken(t, team)
				linkRaw = string(raw)
				dash = s.dashboard()
				csrf = dash.signIn(t, "/dashboard/signin/link", linkToken)
				// Signing in is no form post of a session: only the link's issue is recorded.
				return []auditWant{auditOK(admin, team, "POST /api/admin/accounts/{id}/signin-links", "account:"+team, 201)}
			}},
			{name: "dashboard: the team creates a hostname", do: func(t *testing.T) []auditWant {
				status, loc, _ := dash.send(t, "/dashboard/team/hostnames", url.Values{"csrf": {csrf}, "ip": {"198.41.0.9"}, "subdomain": {"dash"}})
				dashHost = strings.TrimPrefix(loc, "/dashboard/team/hostnames/")
				if status != 303 || dashHost == loc || dashHost == "" {
					t.Fatalf("dashboard create: %d to %q", status, loc)
				}
				if h := s.withT(t).must(200, "GET", "/api/v1/hostnames/"+dashHost, key, nil); h.str("hostname") != "dash."+domain {
					t.Fatalf("dashboard create made %s", h.raw)
				}
				return []auditWant{auditOK("session:"+team, team, "POST /dashboard/team/hostnames", "hostname:"+dashHost, 303)}
			}},
			{name: "dashboard: a refused form", do: func(t *testing.T) []auditWant {
				status, _, _ := dash.send(t, "/dashboard/team/hostnames", url.Values{"csrf": {csrf}, "ip": {"not-an-address"}, "subdomain": {"bad"}})
				if status != 400 {
					t.Fatalf("dashboard create with a bad address: %d", status)
				}
				return []auditWant{{actor: "session:" + team, account: team, action: "POST /dashboard/team/hostnames", result: "REFUSED", status: 400}}
			}},
			{name: "dashboard: a diagnose report is no write", do: func(t *testing.T) []auditWant {
				if status, _, _ := dash.send(t, "/dashboard/team/hostnames/"+dashHost+"/diagnose", url.Values{"csrf": {csrf}}); status != 200 {
					t.Fatalf("dashboard diagnose: %d", status)
				}
				return nil
			}},
			{name: "dashboard: a write that answers with a page records that status", do: func(t *testing.T) []auditWant {
				s.live(t, key, dashHost)
				status, _, _ := dash.send(t, "/dashboard/team/hostnames/"+dashHost+"/credential", url.Values{"csrf": {csrf}})
				if status != 201 {
					t.Fatalf("dashboard credential: %d", status)
				}
				p := s.auditList(t, "limit=1")
				if len(p.Entries) != 1 || !strings.HasPrefix(p.Entries[0].Object, "credential:") {
					t.Fatalf("no entry of the credential: %v", p.Entries)
				}
				return []auditWant{auditOK("session:"+team, team, "POST /dashboard/team/hostnames/{id}/credential", p.Entries[0].Object, 201)}
			}},
			{name: "dashboard: a form without its token is not recorded", do: func(t *testing.T) []auditWant {
				if status, _, _ := dash.send(t, "/dashboard/team/hostnames", url.Values{"csrf": {"forged"}, "ip": {"198.41.0.10"}}); status != 403 {
					t.Fatalf("dashboard create without the form token: %d", status)
				}
				return nil
			}},
		}
		seen := runAudit(t, s, cases)
		if t.Failed() {
			return
		}

		// Nothing secret: the key, the DNS-01 password and the sign-in token
		// are in no entry and no row of the store.
		secrets := map[string]string{
			"API key":         key,
			"API key secret":  secretOf(t, key),
			"read key secret": secretOf(t, readKey),
			"DNS-01 password": cred.pass,
			"sign-in token":   linkToken,
		}
		if !strings.Contains(linkRaw, linkToken) {
			t.Fatalf("the sign-in link does not hold its token: %s", linkRaw)
		}
		log := s.withT(t).must(200, "GET", "/api/admin/audit?limit=500", s.admin, nil).raw
		dump := storeDump(t, dialectOf(s.dsn), s.dsn)
		if !strings.Contains(dump, "POST /api/v1/hostnames/{id}/acme-credential") || len(seen) == 0 {
			t.Fatal("the store dump lacks the audit log: it does not read the store")
		}
		for what, v := range secrets {
			if strings.Contains(string(log), v) {
				t.Errorf("GET /api/admin/audit holds the %s", what)
			}
			if strings.Contains(dump, v) {
				t.Errorf("the store holds the %s", what)
			}
		}
	})
}

// dialectOf is the dialect of a harness DSN.
func dialectOf(dsn string) storage.Dialect {
	if strings.HasPrefix(dsn, "postgres") {
		return storage.Postgres
	}
	return storage.SQLite
}

// GET /api/admin/audit: every filter selects exactly the entries it names,
// paging walks every entry once at any page size, bad parameters are 400,
// and only the admin token reads it.
func TestAuditQuery(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 1})
	a1, k1 := s.account("pro")
	a2, k2 := s.account("free")
	var hosts []string
	for i, k := range []string{k1, k2, k1, k2, k1} {
		id := s.must(201, "POST", "/api/v1/hostnames", k, map[string]any{"ip": fmt.Sprintf("198.41.0.%d", i+1)}).str("id")
		hosts = append(hosts, id)
		s.must(200, "PUT", "/api/v1/hostnames/"+id, k, map[string]any{"ip": fmt.Sprintf("198.41.1.%d", i+1)})
		s.must(404, "PUT", "/api/v1/hostnames/hn_none"+fmt.Sprint(i), k, map[string]any{"ip": "198.41.2.1"})
		if i == 2 {
			time.Sleep(20 * time.Millisecond) // a gap for since/until to fall in
		}
	}
	s.must(200, "DELETE", "/api/v1/hostnames/"+hosts[0], k1, nil)

	mark := s.auditMark(t)
	all := s.auditWalk(t, "", 500)
	if s.auditMark(t) != mark {
		t.Fatal("reading the audit log was recorded")
	}
	// 2 accounts, 2 keys, 5 creates, 5 updates, 5 refusals, 1 release.
	if len(all) != 20 {
		t.Fatalf("%d entries, want 20:\n%s", len(all), auditText(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID >= all[i-1].ID {
			t.Fatalf("not newest first at %d:\n%s", i, auditText(all))
		}
	}

	// Paging at any size walks every entry exactly once, in order.
	for _, limit := range []int{1, 2, 3, 7, 19, 20, 21} {
		got := s.auditWalk(t, "", limit)
		if auditText(got) != auditText(all) {
			t.Errorf("limit %d walks\n%swant\n%s", limit, auditText(got), auditText(all))
		}
	}
	if p := s.auditList(t, "limit=20"); p.NextCursor != nil || len(p.Entries) != 20 {
		t.Errorf("a page holding the last entry: %d entries, next_cursor %v", len(p.Entries), p.NextCursor != nil)
	}

	at := func(e auditRow) time.Time {
		v, err := time.Parse(time.RFC3339Nano, e.At)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// The gap: the first entry after the sleep.
	var cut time.Time
	for i := len(all) - 1; i > 0; i-- {
		if at(all[i-1]).Sub(at(all[i])) >= 15*time.Millisecond {
			cut = at(all[i-1])
			break
		}
	}
	if cut.IsZero() {
		t.Fatalf("no gap in the entries' times:\n%s", auditText(all))
	}
	rfc := func(v time.Time) string { return url.QueryEscape(v.UTC().Format(time.RFC3339Nano)) }

	filters := []struct {
		query  string
		admits func(e auditRow) bool
	}{
		{"actor=admin", func(e auditRow) bool { return e.Actor == "admin" }},
		{"actor=" + url.QueryEscape("key:"+keyIDOf(t, k1)), func(e auditRow) bool { return e.Actor == "key:"+keyIDOf(t, k1) }},
		{"account_id=" + a2, func(e auditRow) bool { return e.AccountID == a2 }},
		{"action=" + url.QueryEscape("PUT /api/v1/hostnames/{id}"), func(e auditRow) bool { return e.Action == "PUT /api/v1/hostnames/{id}" }},
		{"object=" + url.QueryEscape("hostname:"+hosts[0]), func(e auditRow) bool { return e.Object == "hostname:"+hosts[0] }},
		{"result=ok", func(e auditRow) bool { return e.Result == "ok" }},
		{"result=NOT_FOUND", func(e auditRow) bool { return e.Result == "NOT_FOUND" }},
		{"account_id=" + a1 + "&result=NOT_FOUND", func(e auditRow) bool { return e.AccountID == a1 && e.Result == "NOT_FOUND" }},
		{"since=" + rfc(cut), func(e auditRow) bool { return !at(e).Before(cut) }},
		{"until=" + rfc(cut.Add(-time.Millisecond)), func(e auditRow) bool { return at(e).Before(cut) }},
		{"since=" + rfc(at(all[len(all)-1])) + "&until=" + rfc(at(all[0])), func(auditRow) bool { return true }},
		{"since=" + rfc(time.Now().Add(time.Hour)), func(auditRow) bool { return false }},
		{"actor=nobody", func(auditRow) bool { return false }},
	}
	for _, f := range filters {
		var want []auditRow
		for _, e := range all {
			if f.admits(e) {
				want = append(want, e)
			}
		}
		if got := s.auditWalk(t, f.query, 2); auditText(got) != auditText(want) {
			t.Errorf("%s:\n%swant\n%s", f.query, auditText(got), auditText(want))
		}
	}

	for _, q := range []string{"since=yesterday", "until=2026-13-01T00:00:00Z", "since=1700000000"} {
		s.recFails(t, 400, "BAD_REQUEST", "GET", "/api/admin/audit?"+q, s.admin, nil)
	}
	s.recFails(t, 401, "UNAUTHORIZED", "GET", "/api/admin/audit", k1, nil)
	s.recFails(t, 401, "UNAUTHORIZED", "GET", "/api/admin/audit", "", nil)
	if s.auditMark(t) != mark {
		t.Fatal("refused reads of the audit log were recorded")
	}
}

// audit_retention: entries older than it are deleted when the server
// starts; younger ones stay. Without it, 90 days. Under an hour is refused.
func TestAuditRetention(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			now := time.Now()
			for _, tc := range []struct {
				extra        []string
				purged, kept []time.Duration // ages of entries
			}{
				{[]string{"audit_retention 1h"}, []time.Duration{2 * time.Hour, 24 * time.Hour}, []time.Duration{30 * time.Minute}},
				{nil, []time.Duration{91 * 24 * time.Hour}, []time.Duration{2 * time.Hour, 89 * 24 * time.Hour}},
			} {
				o := options{dialect: d, dir: t.TempDir(), extra: tc.extra}
				o.dsn = storagetest.DSN(t, d)
				if d == storage.SQLite {
					o.dsn = filepath.Join(o.dir, "hostmint.db")
				}
				st, err := storage.Open(context.Background(), d, o.dsn)
				if err != nil {
					t.Fatal(err)
				}
				object := func(age time.Duration) string { return "account:aged_" + age.String() }
				for _, age := range append(append([]time.Duration{}, tc.purged...), tc.kept...) {
					e := &storage.AuditEntry{At: now.Add(-age).UnixMilli(), Actor: "admin", Action: "POST /api/admin/accounts",
						Object: object(age), Result: "ok", Status: 201, Address: "127.0.0.1"}
					if err := st.AddAudit(context.Background(), e); err != nil {
						t.Fatal(err)
					}
				}
				st.Close()

				s := start(t, o)
				count := func(age time.Duration) int {
					return len(s.auditList(t, "object="+url.QueryEscape(object(age))).Entries)
				}
				for _, age := range tc.purged {
					eventually(t, 5*time.Second, func() bool { return count(age) == 0 },
						"%v: an entry %v old is still there after start", tc.extra, age)
				}
				for _, age := range tc.kept {
					if count(age) != 1 {
						t.Errorf("%v: the entry %v old was purged", tc.extra, age)
					}
				}
				s.stop()
			}

			// Under an hour does not start.
			text, _ := corefile(t, &options{dialect: d, extra: []string{"audit_retention 59m"}})
			if inst, err := caddy.Start(caddy.CaddyfileInput{Contents: []byte(text), Filepath: "Corefile", ServerTypeName: "dns"}); err == nil {
				inst.ShutdownCallbacks()
				inst.Stop()
				t.Fatal("audit_retention 59m was accepted")
			} else if !strings.Contains(err.Error(), "audit_retention") {
				t.Errorf("audit_retention 59m refused without naming it: %v", err)
			}
		})
	}
}

// A PUT to a target takes the update's rate token in a transaction of its
// own before the lookup: the request is still one write, and a refused
// lookup is a refusal, not "ok".
func TestAuditTargetUpdate(t *testing.T) {
	t.Parallel()
	p := newPlatformDNS(t, 30)
	p.set("app.platform.test", "198.41.0.10")
	p.set("internal.platform.test", "10.0.0.1")
	s, key := targetServer(t, storage.SQLite, p, "target.example.net")
	keyID := keyIDOf(t, key)
	var hid string
	var acct string
	runAudit(t, s, []auditCase{
		{name: "create", do: func(t *testing.T) []auditWant {
			hid = s.withT(t).must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "subdomain": "web"}).str("id")
			s.live(t, key, hid)
			acct = s.auditList(t, "limit=1").Entries[0].AccountID
			return []auditWant{auditOK("key:"+keyID, acct, "POST /api/v1/hostnames", "hostname:"+hid, 201)}
		}},
		{name: "target refused: no such name", do: func(t *testing.T) []auditWant {
			s.recFails(t, 400, "BAD_REQUEST", "PUT", "/api/v1/hostnames/"+hid, key, map[string]any{"target": "gone.platform.test"})
			return []auditWant{{actor: "key:" + keyID, account: acct, action: "PUT /api/v1/hostnames/{id}", object: "hostname:" + hid, result: "BAD_REQUEST", status: 400}}
		}},
		{name: "target refused: the other class", do: func(t *testing.T) []auditWant {
			s.recFails(t, 409, "CONFLICT", "PUT", "/api/v1/hostnames/"+hid, key, map[string]any{"target": "internal.platform.test"})
			return []auditWant{{actor: "key:" + keyID, account: acct, action: "PUT /api/v1/hostnames/{id}", object: "hostname:" + hid, result: "CONFLICT", status: 409}}
		}},
		{name: "target followed", do: func(t *testing.T) []auditWant {
			s.withT(t).must(200, "PUT", "/api/v1/hostnames/"+hid, key, map[string]any{"target": "app.platform.test"})
			return []auditWant{auditOK("key:"+keyID, acct, "PUT /api/v1/hostnames/{id}", "hostname:"+hid, 200)}
		}},
	})
}

// Behind a trusted proxy the entry's address is the client's, as dyndns2
// takes it; the peer's otherwise (see TestAuditWritesP1).
func TestAuditBehindProxy(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 1, extra: []string{"trusted_proxy 127.0.0.0/8"}})
	acct, key := s.account("pro")
	keyID := keyIDOf(t, key)
	xff := func(body string) (int, response) {
		r := s.acmeSend(t, "POST", "/api/v1/hostnames", map[string]string{"Authorization": "Bearer " + key, "X-Forwarded-For": "203.0.113.9, 10.0.0.1"}, body)
		return r.status, r
	}
	runAudit(t, s, []auditCase{
		{name: "a write", do: func(t *testing.T) []auditWant {
			status, r := xff(`{"ip": "198.41.0.4"}`)
			if status != 201 {
				t.Fatalf("create: %d %s", status, r.raw)
			}
			w := auditOK("key:"+keyID, acct, "POST /api/v1/hostnames", "hostname:"+r.str("id"), 201)
			w.address = "10.0.0.1"
			return []auditWant{w}
		}},
		{name: "a refusal", do: func(t *testing.T) []auditWant {
			if status, r := xff(`{"ip": "nope"}`); status != 400 {
				t.Fatalf("create: %d %s", status, r.raw)
			}
			return []auditWant{{actor: "key:" + keyID, account: acct, action: "POST /api/v1/hostnames", result: "BAD_REQUEST", status: 400, address: "10.0.0.1"}}
		}},
	})
}
