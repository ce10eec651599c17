package dashboard_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/adminapi"
	"github.com/hostmint/hostmint/audit"
	"github.com/hostmint/hostmint/dashboard"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// newSealedSite is newSite with a cert_encryption_key_file's key, so that
// DNSSEC can be enabled (newSite's deployment has none, as by default).
func newSealedSite(t *testing.T) *site {
	t.Helper()
	dsn := storagetest.DSN(t, storage.SQLite)
	store, err := storage.Open(context.Background(), storage.SQLite, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	db, err := sql.Open(string(storage.SQLite), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	key := make(seal.Key, 32)
	rand.Read(key)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	auth := accounts.NewAuthenticator(store)
	acc := accounts.New(store, 2, auth)
	hs := hostnames.New(store, hostnames.Config{Profile: 2, IdleExpiry: 7 * 24 * time.Hour}, log)
	doms := domains.New(store, key)
	if err := doms.Ensure(context.Background(), []string{"example.org"}); err != nil {
		t.Fatal(err)
	}
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	audits := audit.New(store, log)
	api := adminapi.New(adminapi.Config{Profile: 2, BaseURL: srv.URL, AdminToken: adminToken, Audit: audits}, hostnames.DefaultRules(hs), acc, auth, doms, log)
	dash := dashboard.New(dashboard.Config{Profile: 2, BaseURL: srv.URL, AdminToken: adminToken, Audit: audits}, acc, hostnames.DefaultRules(hs), doms, log)
	h = dashboard.Mount(api, dash)
	return &site{t: t, url: srv.URL, accounts: acc, db: db}
}

// adminDomain reads a domain through the admin API.
func (s *site) adminDomain(name string) map[string]any {
	s.t.Helper()
	st, l := s.api("GET", "/api/admin/domains", adminToken, nil)
	if st != 200 {
		s.t.Fatalf("list domains: %d %v", st, l)
	}
	for _, d := range l["domains"].([]any) {
		if d := d.(map[string]any); d["name"] == name {
			return d
		}
	}
	s.t.Fatalf("no domain %s", name)
	return nil
}

// teamKey makes a key for a team through the admin API and returns its secret and id.
func (s *site) teamKey(team, name string) (string, string) {
	s.t.Helper()
	st, k := s.api("POST", "/api/admin/accounts/"+team+"/keys", adminToken, map[string]any{"name": name})
	if st != 201 {
		s.t.Fatalf("create key: %d %v", st, k)
	}
	return k["key"].(string), k["id"].(string)
}

// hostname mints a hostname with a team key and returns its id and name.
func (s *site) hostname(key, ip string) (string, string) {
	s.t.Helper()
	st, hn := s.api("POST", "/api/v1/hostnames", key, map[string]any{"ip": ip})
	if st != 201 {
		s.t.Fatalf("create hostname: %d %v", st, hn)
	}
	return hn["id"].(string), hn["hostname"].(string)
}

func (s *site) hostnameStatus(key, id string) string {
	s.t.Helper()
	st, hn := s.api("GET", "/api/v1/hostnames/"+id, key, nil)
	if st != 200 {
		s.t.Fatalf("get hostname: %d %v", st, hn)
	}
	return hn["status"].(string)
}

func (p page) has(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(p.body, w) {
			t.Errorf("the page (%d) lacks %q: %s", p.status, w, p.body)
		}
	}
}

// The domain page: DNSSEC on, its DS shown, the DS marked published, the
// CAA policy set, refused with the API's message, and cleared.
func TestOperatorDomain(t *testing.T) {
	t.Parallel()
	s := newSealedSite(t)
	op := s.browser()
	csrf := op.signInOperator(t)
	s.team("Acme", "acme.example.net")
	id := s.adminDomain("acme.example.net")["id"].(string)
	path := "/dashboard/operator/domains/" + id

	if p := op.get("/dashboard/operator"); !strings.Contains(p.body, `href="`+path+`"`) {
		t.Errorf("the operator page does not link the domain's page: %s", p.body)
	}
	p := op.get(path)
	p.has(t, "acme.example.net", "Acme", "unsigned", "Enable DNSSEC")

	op.post(path+"/dnssec", url.Values{"csrf": {csrf}}).redirectsTo(t, path)
	d := s.adminDomain("acme.example.net")
	ds := d["ds"].([]any)
	if d["dnssec"] != true || len(ds) != 1 {
		t.Fatalf("after enabling: %v", d)
	}
	p = op.get(path)
	p.has(t, "signed, DS not yet published", `readonly spellcheck="false">`+ds[0].(string)+`</textarea>`, "Mark DS published")

	op.post(path+"/ds-published", url.Values{"csrf": {csrf}}).redirectsTo(t, path)
	if d := s.adminDomain("acme.example.net"); d["ds_published"] != true {
		t.Fatalf("after marking the DS published: %v", d)
	}
	if p := op.get(path); strings.Contains(p.body, "Mark DS published") || !strings.Contains(p.body, "DS published at the parent") {
		t.Errorf("after marking: %s", p.body)
	}

	op.post(path+"/caa", url.Values{"csrf": {csrf}, "caa": {"0 issue \"letsencrypt.org\"\r\n\r\n0 iodef \"mailto:sec@acme.example.net\"\r\n"}}).redirectsTo(t, path)
	caa := s.adminDomain("acme.example.net")["caa"].([]any)
	if len(caa) != 2 || caa[0] != `0 issue "letsencrypt.org"` {
		t.Fatalf("caa after setting: %v", caa)
	}
	p = op.get(path)
	p.has(t, "0 issue &#34;letsencrypt.org&#34;\n0 iodef")

	// The API's own message, next to the field; the policy is unchanged.
	_, apiErr := s.api("PATCH", "/api/admin/domains/"+id, adminToken, map[string]any{"caa": []string{`0 issue "ok.example"`, "0 bogus \"x\""}})
	p = op.post(path+"/caa", url.Values{"csrf": {csrf}, "caa": {"0 issue \"ok.example\"\n0 bogus \"x\""}})
	if p.status != http.StatusBadRequest {
		t.Fatalf("a bad policy: %d", p.status)
	}
	p.has(t, `id="caa-error" role="alert">`+escaped(apiErr["error"].(string)), `aria-invalid="true"`, "0 bogus")
	if caa := s.adminDomain("acme.example.net")["caa"].([]any); len(caa) != 2 {
		t.Errorf("a refused policy changed it: %v", caa)
	}

	op.post(path+"/caa", url.Values{"csrf": {csrf}, "caa": {"  \n"}}).redirectsTo(t, path)
	if caa, _ := s.adminDomain("acme.example.net")["caa"].([]any); len(caa) != 0 {
		t.Errorf("an empty policy did not clear it: %v", caa)
	}
}

// escaped is text as html/template writes it in an element.
func escaped(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// Without cert_encryption_key_file, the API's refusal is shown by the button.
func TestOperatorDNSSECWithoutKey(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	op := s.browser()
	csrf := op.signInOperator(t)
	id := s.adminDomain("example.org")["id"].(string)
	_, apiErr := s.api("PATCH", "/api/admin/domains/"+id, adminToken, map[string]any{"dnssec": true})
	p := op.post("/dashboard/operator/domains/"+id+"/dnssec", url.Values{"csrf": {csrf}})
	if p.status != http.StatusNotImplemented {
		t.Fatalf("enable without a key: %d", p.status)
	}
	p.has(t, `id="dnssec-error" role="alert">`+escaped(apiErr["error"].(string)), "cert_encryption_key_file")
	if d := s.adminDomain("example.org"); d["dnssec"] != false {
		t.Errorf("enabled anyway: %v", d)
	}
	if p := op.get("/dashboard/operator/domains/dom_nope"); p.status != http.StatusNotFound {
		t.Errorf("an unknown domain: %d", p.status)
	}
}

// Hostnames of every team: listed newest first with the count, filtered by
// team, suspended, restored, and terminated after a confirmation.
func TestOperatorHostnames(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	op := s.browser()
	csrf := op.signInOperator(t)
	acme, globex := s.team("Acme", "acme.example.net"), s.team("Globex", "globex.example.net")
	acmeKey, _ := s.teamKey(acme, "ci")
	globexKey, _ := s.teamKey(globex, "ci")
	a1, a1Name := s.hostname(acmeKey, "192.0.2.1")
	time.Sleep(2 * time.Millisecond) // distinct creation times: the order is checked
	g1, g1Name := s.hostname(globexKey, "192.0.2.2")
	time.Sleep(2 * time.Millisecond)
	a2, a2Name := s.hostname(acmeKey, "192.0.2.3")

	p := op.get("/dashboard/operator/hostnames")
	p.has(t, "Showing 3 of 3")
	if i1, i2, i3 := strings.Index(p.body, a2Name), strings.Index(p.body, g1Name), strings.Index(p.body, a1Name); !(i1 < i2 && i2 < i3) {
		t.Errorf("not newest first: %d %d %d", i1, i2, i3)
	}
	p = op.get("/dashboard/operator/hostnames?team=" + globex)
	p.has(t, "Showing 1 of 1", g1Name)
	if strings.Contains(p.body, a1Name) {
		t.Errorf("another team's hostname in the filtered list")
	}

	p = op.post("/dashboard/operator/hostnames/"+g1+"/suspend", url.Values{"csrf": {csrf}, "team": {globex}})
	if p.status != 200 {
		t.Fatalf("suspend: %d %s", p.status, p.body)
	}
	p.has(t, g1Name+" is suspended.", "Showing 1 of 1", "Restore "+g1Name)
	if st := s.hostnameStatus(globexKey, g1); st != "suspended" {
		t.Errorf("after suspending: %s", st)
	}

	// The rule's refusal, on the row it concerns.
	_, apiErr := s.api("POST", "/api/admin/hostnames/"+a1+"/restore", adminToken, nil)
	p = op.post("/dashboard/operator/hostnames/"+a1+"/restore", url.Values{"csrf": {csrf}})
	if p.status != http.StatusConflict {
		t.Fatalf("restoring a hostname not suspended: %d", p.status)
	}
	p.has(t, escaped(apiErr["error"].(string)))

	p = op.post("/dashboard/operator/hostnames/"+g1+"/restore", url.Values{"csrf": {csrf}, "team": {globex}})
	if p.status != 200 {
		t.Fatalf("restore: %d %s", p.status, p.body)
	}
	if st := s.hostnameStatus(globexKey, g1); st != "pending" {
		t.Errorf("after restoring: %s", st)
	}

	// Terminate: a post without the confirmation changes nothing and asks.
	confirm := "/dashboard/operator/hostnames/" + a2 + "/terminate"
	op.post(confirm, url.Values{"csrf": {csrf}}).redirectsTo(t, confirm)
	op.post(confirm, url.Values{"csrf": {csrf}, "team": {acme}}).redirectsTo(t, confirm+"?team="+acme)
	if st := s.hostnameStatus(acmeKey, a2); st == "terminated" {
		t.Fatal("terminated without confirmation")
	}
	if p := op.get(confirm + "?team=" + globex); p.status != http.StatusNotFound {
		t.Errorf("confirming a hostname not in the filtered list: %d", p.status)
	}
	p = op.get(confirm + "?team=" + acme)
	p.has(t, "Terminate "+a2Name+"?", `name="confirm" value="yes"`, `href="/dashboard/operator/hostnames?team=`+acme+`"`)
	p = op.post(confirm, url.Values{"csrf": {csrf}, "team": {acme}, "confirm": {"yes"}})
	if p.status != 200 {
		t.Fatalf("terminate: %d %s", p.status, p.body)
	}
	p.has(t, a2Name+" is terminated.", "Showing 1 of 1")
	if st := s.hostnameStatus(acmeKey, a2); st != "terminated" {
		t.Errorf("after terminating: %s", st)
	}
	if p := op.get("/dashboard/operator/hostnames/hn_nope/terminate"); p.status != http.StatusNotFound {
		t.Errorf("confirming an unknown hostname: %d", p.status)
	}
}

// An account's keys: listed without secrets, and revoked.
func TestOperatorKeys(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	op := s.browser()
	csrf := op.signInOperator(t)
	acme := s.team("Acme", "acme.example.net")
	secret, id := s.teamKey(acme, "deploy-bot")
	st, k := s.api("POST", "/api/admin/accounts/"+acme+"/keys", adminToken, map[string]any{
		"name": "reader", "scopes": []map[string]string{{"scope": "hostnames:read", "domain": "acme.example.net"}},
		"expires_at": time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)})
	if st != 201 {
		t.Fatalf("scoped key: %d %v", st, k)
	}
	path := "/dashboard/operator/accounts/" + acme
	if p := op.get("/dashboard/operator"); !strings.Contains(p.body, `href="`+path+`"`) {
		t.Errorf("the operator page does not link the account's page")
	}
	p := op.get(path)
	p.has(t, "deploy-bot", id, "reader", k["id"].(string), "hostnames:read on domain acme.example.net", "Revoke key deploy-bot")
	if strings.Contains(p.body, secret) || strings.Contains(p.body, k["key"].(string)) {
		t.Fatal("a key's secret is on the page")
	}

	if st, _ := s.api("GET", "/api/v1/hostnames", secret, nil); st != 200 {
		t.Fatalf("the key before revoking: %d", st)
	}
	p = op.post(path+"/keys/"+id+"/revoke", url.Values{"csrf": {csrf}})
	if p.status != 200 {
		t.Fatalf("revoke: %d %s", p.status, p.body)
	}
	p.has(t, "Key "+id+" is revoked")
	if strings.Contains(p.body, "Revoke key deploy-bot") {
		t.Error("the revoked key is still listed")
	}
	if st, _ := s.api("GET", "/api/v1/hostnames", secret, nil); st != http.StatusUnauthorized {
		t.Errorf("the revoked key: %d, want 401", st)
	}
	_, l := s.api("GET", "/api/admin/accounts/"+acme+"/keys", adminToken, nil)
	if ks := l["keys"].([]any); len(ks) != 1 || ks[0].(map[string]any)["id"] != k["id"] {
		t.Errorf("keys after revoking: %v", ks)
	}
	// Revoking again: the API's 404, on the page.
	if p := op.post(path+"/keys/"+id+"/revoke", url.Values{"csrf": {csrf}}); p.status != http.StatusNotFound {
		t.Errorf("revoking twice: %d", p.status)
	}
}

// Every new operator post needs the session's own token: missing, forged or
// a team session's is 403 and changes nothing.
func TestOperatorCSRF(t *testing.T) {
	t.Parallel()
	s := newSealedSite(t)
	op := s.browser()
	op.signInOperator(t)
	acme := s.team("Acme", "acme.example.net")
	memberCSRF := s.browser().signInTeam(t, acme)
	dom := s.adminDomain("acme.example.net")["id"].(string)
	key, keyID := s.teamKey(acme, "ci")
	hn, _ := s.hostname(key, "192.0.2.1")
	if st, _ := s.api("POST", "/api/admin/hostnames/"+hn+"/suspend", adminToken, nil); st != 200 {
		t.Fatal(st)
	}

	for _, tc := range []struct {
		name string
		path string
		form url.Values
	}{
		{"enable dnssec", "/dashboard/operator/domains/" + dom + "/dnssec", nil},
		{"caa", "/dashboard/operator/domains/" + dom + "/caa", url.Values{"caa": {`0 issue "evil.example"`}}},
		{"revoke key", "/dashboard/operator/accounts/" + acme + "/keys/" + keyID + "/revoke", nil},
		{"restore", "/dashboard/operator/hostnames/" + hn + "/restore", nil},
		{"terminate", "/dashboard/operator/hostnames/" + hn + "/terminate", url.Values{"confirm": {"yes"}}},
	} {
		for _, tok := range []string{"", "forged", memberCSRF} {
			f := url.Values{}
			for k, v := range tc.form {
				f[k] = v
			}
			if tok != "" {
				f.Set("csrf", tok)
			}
			if p := op.post(tc.path, f); p.status != http.StatusForbidden {
				t.Errorf("%s with csrf %q: %d, want 403", tc.name, tok, p.status)
			}
		}
	}
	// The suspend and mark-published posts are refused alike.
	if p := op.post("/dashboard/operator/hostnames/"+hn+"/suspend", url.Values{}); p.status != http.StatusForbidden {
		t.Errorf("suspend without csrf: %d", p.status)
	}
	if p := op.post("/dashboard/operator/domains/"+dom+"/ds-published", url.Values{}); p.status != http.StatusForbidden {
		t.Errorf("ds-published without csrf: %d", p.status)
	}
	// Nothing changed.
	d := s.adminDomain("acme.example.net")
	if d["dnssec"] != false || d["caa"] != nil && len(d["caa"].([]any)) != 0 {
		t.Errorf("domain changed: %v", d)
	}
	if st, _ := s.api("GET", "/api/v1/hostnames", key, nil); st != 200 {
		t.Errorf("the key was revoked: %d", st)
	}
	if st := s.hostnameStatus(key, hn); st != "suspended" {
		t.Errorf("hostname is %s", st)
	}
}

// A team session gets 403 on every operator page and action, and changes nothing.
func TestOperatorPagesTeamForbidden(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	acme := s.team("Acme", "acme.example.net")
	member := s.browser()
	csrf := member.signInTeam(t, acme)
	dom := s.adminDomain("acme.example.net")["id"].(string)
	key, keyID := s.teamKey(acme, "ci")
	hn, _ := s.hostname(key, "192.0.2.1")
	for _, path := range []string{
		"/dashboard/operator/domains/" + dom,
		"/dashboard/operator/accounts/" + acme,
		"/dashboard/operator/hostnames",
		"/dashboard/operator/hostnames?team=" + acme,
		"/dashboard/operator/hostnames/" + hn + "/terminate",
		"/dashboard/operator/find?q=192.0.2.1",
		"/dashboard/operator/accounts/" + acme + "/close",
	} {
		if p := member.get(path); p.status != http.StatusForbidden {
			t.Errorf("GET %s as a team: %d, want 403", path, p.status)
		}
	}
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/dashboard/operator/domains/" + dom + "/dnssec", nil},
		{"/dashboard/operator/domains/" + dom + "/ds-published", nil},
		{"/dashboard/operator/domains/" + dom + "/caa", url.Values{"caa": {`0 issue "evil.example"`}}},
		{"/dashboard/operator/accounts/" + acme + "/keys/" + keyID + "/revoke", nil},
		{"/dashboard/operator/hostnames/" + hn + "/suspend", nil},
		{"/dashboard/operator/hostnames/" + hn + "/restore", nil},
		{"/dashboard/operator/hostnames/" + hn + "/terminate", url.Values{"confirm": {"yes"}}},
		{"/dashboard/operator/accounts/" + acme + "/close", url.Values{"confirm": {"yes"}}},
	} {
		f := url.Values{"csrf": {csrf}}
		for k, v := range tc.form {
			f[k] = v
		}
		if p := member.post(tc.path, f); p.status != http.StatusForbidden {
			t.Errorf("POST %s as a team: %d, want 403", tc.path, p.status)
		}
	}
	if st := s.hostnameStatus(key, hn); st != "pending" && st != "live" {
		t.Errorf("hostname is %s", st)
	}
	if st, _ := s.api("GET", "/api/v1/hostnames", key, nil); st != 200 {
		t.Errorf("the key was revoked: %d", st)
	}
	if d := s.adminDomain("acme.example.net"); d["caa"] != nil && len(d["caa"].([]any)) != 0 {
		t.Errorf("caa changed: %v", d)
	}
}

// [P1] has no abuse actions (nor their API routes): no hostnames page.
func TestOperatorHostnamesP1(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 1, "")
	op := s.browser()
	op.signInOperator(t)
	if p := op.get("/dashboard/operator/hostnames"); p.status != http.StatusNotFound {
		t.Errorf("hostnames page in P1: %d", p.status)
	}
	if p := op.get("/dashboard/operator"); strings.Contains(p.body, "/dashboard/operator/hostnames") {
		t.Error("P1's operator page links the hostnames page")
	}
}

// The list shows the newest 50, merged across teams, says so, and links the rest.
func TestOperatorHostnamesLimit(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	op := s.browser()
	op.signInOperator(t)
	var keys []string
	// Two teams: a team may register 30 a minute (a cap of 100 each).
	for _, name := range []string{"Acme", "Globex"} {
		team := s.team(name, strings.ToLower(name)+".example.net")
		if st, a := s.api("PATCH", "/api/admin/accounts/"+team, adminToken, map[string]any{"cap": 100}); st != 200 {
			t.Fatalf("cap: %d %v", st, a)
		}
		key, _ := s.teamKey(team, "ci")
		keys = append(keys, key)
	}
	_, oldest := s.hostname(keys[0], "192.0.2.1")
	time.Sleep(2 * time.Millisecond) // strictly the oldest
	for i := range 50 {
		s.hostname(keys[i%2], "192.0.2.1")
	}
	p := op.get("/dashboard/operator/hostnames")
	p.has(t, "Showing 1–50 of 51", `href="/dashboard/operator/hostnames?skip=50" rel="next">Older hostnames`)
	if strings.Contains(p.body, oldest+"<") {
		t.Errorf("the oldest hostname is listed past the limit")
	}
}
