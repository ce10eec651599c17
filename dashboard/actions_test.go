package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// Every post needs the session's own token; a refused post changes nothing.
func TestCSRF(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	op := s.browser()
	opCSRF := op.signInOperator(t)
	team := s.team("Acme", "acme.example.net")
	member := s.browser()
	memberCSRF := member.signInTeam(t, team)
	keysBefore, _ := s.accounts.Keys(t.Context(), team)
	st, k := s.api("POST", "/api/admin/accounts/"+team+"/keys", adminToken, map[string]any{"name": "ci"})
	if st != 201 {
		t.Fatal(st)
	}
	key := k["key"].(string)

	for _, tc := range []struct {
		name   string
		b      *browser
		path   string
		form   url.Values
		tokens []string // refused tokens: missing, forged, another session's
	}{
		{"create account", op, "/dashboard/operator/accounts", url.Values{"name": {"Evil"}, "plan": {"team"}}, []string{"", "forged", memberCSRF}},
		{"create domain", op, "/dashboard/operator/domains", url.Values{"name": {"evil.example"}}, []string{"", "forged", memberCSRF}},
		{"issue link", op, "/dashboard/operator/accounts/" + team + "/signin-link", url.Values{}, []string{"", "forged", memberCSRF}},
		{"create key", member, "/dashboard/team/keys", url.Values{"name": {"evil"}, "scope": {"hostnames:read"}, "reach": {"team"}}, []string{"", "forged", opCSRF}},
		{"revoke key", member, "/dashboard/team/keys/" + k["id"].(string) + "/revoke", url.Values{}, []string{"", "forged", opCSRF}},
		{"sign out", member, "/dashboard/signout", url.Values{}, []string{"", "forged", opCSRF}},
	} {
		for _, tok := range tc.tokens {
			f := url.Values{}
			for k, v := range tc.form {
				f[k] = v
			}
			if tok != "" {
				f.Set("csrf", tok)
			}
			if p := tc.b.post(tc.path, f); p.status != http.StatusForbidden {
				t.Errorf("%s with csrf %q: %d, want 403", tc.name, tok, p.status)
			}
		}
	}
	// Nothing changed.
	if as, _ := s.accounts.List(t.Context()); len(as) != 1 {
		t.Errorf("%d accounts", len(as))
	}
	if st, ds := s.api("GET", "/api/admin/domains", adminToken, nil); st != 200 || len(ds["domains"].([]any)) != 2 {
		t.Errorf("domains: %v", ds)
	}
	if n := s.count("signin_links"); n != 1 { // the one member used
		t.Errorf("%d sign-in links", n)
	}
	if ks, _ := s.accounts.Keys(t.Context(), team); len(ks) != len(keysBefore)+1 {
		t.Errorf("%d keys", len(ks))
	}
	if st, _ := s.api("GET", "/api/v1/hostnames", key, nil); st != 200 {
		t.Errorf("the key stopped working: %d", st)
	}
	if n := s.count("dashboard_sessions"); n != 2 {
		t.Errorf("%d sessions", n)
	}
	// The right token works.
	op.post("/dashboard/operator/accounts", url.Values{"csrf": {opCSRF}, "name": {"Beta"}, "plan": {"team"}}).redirectsTo(t, "/dashboard/operator")
	if as, _ := s.accounts.List(t.Context()); len(as) != 2 {
		t.Errorf("%d accounts after a good post", len(as))
	}
}

// An operator session is not a team's, a team's is not the operator's, and
// a team sees and touches only its own.
func TestRoles(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	op := s.browser()
	opCSRF := op.signInOperator(t)
	if p := op.get("/dashboard/team"); p.status != http.StatusForbidden {
		t.Fatalf("operator on the team view: %d", p.status)
	}
	if p := op.post("/dashboard/team/keys", url.Values{"csrf": {opCSRF}, "name": {"x"}}); p.status != http.StatusForbidden {
		t.Fatalf("operator creating a team key: %d", p.status)
	}

	a, b := s.team("Alpha", "alpha.example.net"), s.team("Bravo", "bravo.example.net")
	st, bk := s.api("POST", "/api/admin/accounts/"+b+"/keys", adminToken, map[string]any{"name": "bravo-secret-key"})
	if st != 201 {
		t.Fatal(st)
	}
	st, h := s.api("POST", "/api/v1/hostnames", bk["key"].(string), map[string]any{"ip": "198.51.100.7", "subdomain": "bravo-web"})
	if st != 201 {
		t.Fatalf("hostname: %d %v", st, h)
	}
	alpha := s.browser()
	csrf := alpha.signInTeam(t, a)
	if p := alpha.get("/dashboard/operator"); p.status != http.StatusForbidden {
		t.Fatalf("team on the operator view: %d", p.status)
	}
	if p := alpha.post("/dashboard/operator/accounts", url.Values{"csrf": {csrf}, "name": {"x"}, "plan": {"team"}}); p.status != http.StatusForbidden {
		t.Fatalf("team creating an account: %d", p.status)
	}
	p := alpha.get("/dashboard/team")
	for _, other := range []string{"Bravo", "bravo-secret-key", bk["id"].(string), "bravo-web", "bravo.example.net"} {
		if strings.Contains(p.body, other) {
			t.Errorf("Alpha's view shows %q", other)
		}
	}
	if p := alpha.post("/dashboard/team/keys/"+bk["id"].(string)+"/revoke", url.Values{"csrf": {csrf}}); p.status != http.StatusNotFound {
		t.Fatalf("revoking another team's key: %d", p.status)
	}
	if st, _ := s.api("GET", "/api/v1/hostnames", bk["key"].(string), nil); st != 200 {
		t.Fatalf("Bravo's key after Alpha's attempt: %d", st)
	}
	if as, _ := s.accounts.List(t.Context()); len(as) != 2 {
		t.Fatalf("%d accounts", len(as))
	}
}

var tokenField = regexp.MustCompile(`id="new-key" class="mono" type="text" readonly value="(svc_[^"]+)"`)

// A member's key: made in the dashboard with the API's rules, shown once,
// works against the API, and stops when revoked.
func TestTeamKeys(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	team := s.team("Acme", "acme.example.net")
	b := s.browser()
	csrf := b.signInTeam(t, team)

	// Errors stand next to their field, with what was typed kept.
	for _, tc := range []struct {
		form  url.Values
		field string
		code  int
	}{
		{url.Values{"name": {"ci"}, "reach": {"team"}}, "key-scope-error", 400},
		{url.Values{"name": {"ci"}, "scope": {"hostnames:read"}, "reach": {"team"}, "lifetime": {"soon"}}, "key-lifetime-error", 400},
		{url.Values{"name": {strings.Repeat("n", 201)}, "scope": {"hostnames:read"}, "reach": {"team"}}, "key-name-error", 400},
		{url.Values{"name": {"ci"}, "scope": {"hostnames:read"}, "reach": {"hostname:h_none"}}, "key-scope-error", 400},
		{url.Values{"name": {"ci"}, "scope": {"root"}, "reach": {"team"}}, "key-scope-error", 400},
	} {
		tc.form.Set("csrf", csrf)
		p := b.post("/dashboard/team/keys", tc.form)
		if p.status != tc.code || !strings.Contains(p.body, `id="`+tc.field+`"`) {
			t.Errorf("%v: %d, want %d with %s: %s", tc.form, p.status, tc.code, tc.field, p.body)
		}
		if n := tc.form.Get("name"); !strings.Contains(p.body, `value="`+n+`"`) {
			t.Errorf("%v: the name typed is not kept", tc.form)
		}
	}
	if ks, _ := s.accounts.Keys(t.Context(), team); len(ks) != 0 {
		t.Fatalf("%d keys after refused forms", len(ks))
	}

	p := b.post("/dashboard/team/keys", url.Values{"csrf": {csrf}, "name": {"ci"}, "scope": {"hostnames:read", "hostnames:write"},
		"reach": {"domain:acme.example.net"}, "lifetime": {"30"}})
	m := tokenField.FindStringSubmatch(p.body)
	if p.status != http.StatusCreated || m == nil {
		t.Fatalf("create key: %d %s", p.status, p.body)
	}
	key := m[1]
	if !strings.Contains(p.body, "hostnames:write on domain acme.example.net") {
		t.Errorf("the key's scopes are not listed: %s", p.body)
	}
	if st, l := s.api("GET", "/api/v1/hostnames", key, nil); st != 200 {
		t.Fatalf("the new key: %d %v", st, l)
	}
	st, h := s.api("POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.51.100.7", "subdomain": "web"})
	if st != 201 {
		t.Fatalf("minting on the key's domain: %d %v", st, h)
	}
	if st, _ := s.api("POST", "/api/v1/hostnames/"+h["id"].(string)+"/acme-credential", key, nil); st != 403 {
		t.Fatalf("the key has no dns01:write: %d", st)
	}
	ks, _ := s.accounts.Keys(t.Context(), team)
	if len(ks) != 1 || ks[0].ExpiresAt == 0 {
		t.Fatalf("keys: %+v", ks)
	}
	// Shown once: the next view has the key's id, never its secret.
	view := b.get("/dashboard/team")
	if strings.Contains(view.body, key) || !strings.Contains(view.body, ks[0].ID) {
		t.Fatal("the team view shows the secret again, or not the key")
	}
	b.post("/dashboard/team/keys/"+ks[0].ID+"/revoke", url.Values{"csrf": {csrf}}).redirectsTo(t, "/dashboard/team")
	if st, _ := s.api("GET", "/api/v1/hostnames", key, nil); st != 401 {
		t.Fatalf("a revoked key: %d", st)
	}
	if p := b.post("/dashboard/team/keys/"+ks[0].ID+"/revoke", url.Values{"csrf": {csrf}}); p.status != http.StatusNotFound {
		t.Fatalf("revoking twice: %d", p.status)
	}
}

// The operator's forms: the API's rules and messages, next to the field.
func TestOperatorForms(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 1, "")
	b := s.browser()
	csrf := b.signInOperator(t)
	for _, tc := range []struct {
		path  string
		form  url.Values
		code  int
		field string
	}{
		{"/dashboard/operator/accounts", url.Values{"name": {"x"}, "plan": {"gold"}}, 400, "account-plan-error"},
		{"/dashboard/operator/accounts", url.Values{"name": {""}, "plan": {"free"}}, 400, "account-name-error"},
		{"/dashboard/operator/accounts", url.Values{"name": {"x"}, "plan": {"free"}, "cap": {"lots"}}, 400, "account-cap-error"},
		{"/dashboard/operator/accounts", url.Values{"name": {"x"}, "plan": {"free"}, "cap": {"99999999999"}}, 400, "account-cap-error"},
		{"/dashboard/operator/domains", url.Values{"name": {"example.org"}}, 409, "domain-name-error"},
		{"/dashboard/operator/domains", url.Values{"name": {"not a domain"}}, 400, "domain-name-error"},
		{"/dashboard/operator/domains", url.Values{"name": {"x.example"}, "owner": {"acc_none"}}, 400, "domain-owner-error"},
	} {
		tc.form.Set("csrf", csrf)
		p := b.post(tc.path, tc.form)
		if p.status != tc.code || !strings.Contains(p.body, `id="`+tc.field+`"`) {
			t.Errorf("%s %v: %d, want %d with %s", tc.path, tc.form, p.status, tc.code, tc.field)
		}
	}
	b.post("/dashboard/operator/accounts", url.Values{"csrf": {csrf}, "name": {"Home"}, "plan": {"pro"}, "cap": {"7"}}).redirectsTo(t, "/dashboard/operator")
	as, _ := s.accounts.List(t.Context())
	if len(as) != 1 || as[0].Plan != "pro" || as[0].Cap == nil || *as[0].Cap != 7 {
		t.Fatalf("accounts: %+v", as)
	}
	b.post("/dashboard/operator/domains", url.Values{"csrf": {csrf}, "name": {"Home.Example.NET"}, "owner": {as[0].ID}}).redirectsTo(t, "/dashboard/operator")
	p := b.get("/dashboard/operator")
	if !strings.Contains(p.body, "home.example.net") || !strings.Contains(p.body, "<td>Home</td>") {
		t.Errorf("operator view: %s", p.body)
	}
	// The link is shown in the answer that made it, and works.
	p = b.post("/dashboard/operator/accounts/"+as[0].ID+"/signin-link", url.Values{"csrf": {csrf}})
	m := regexp.MustCompile(`id="signin-link" class="mono" type="text" readonly value="[^"]+\?token=([^"]+)"`).FindStringSubmatch(p.body)
	if p.status != http.StatusCreated || m == nil {
		t.Fatalf("issue link: %d %s", p.status, p.body)
	}
	if p := b.post("/dashboard/operator/accounts/acc_none/signin-link", url.Values{"csrf": {csrf}}); p.status != http.StatusNotFound {
		t.Fatalf("link for no account: %d", p.status)
	}

	// A profile-1 account's member: keys without scopes (profile 2's), the
	// plan's cap.
	member := s.browser()
	member.signInWithLink(t, m[1])
	view := member.get("/dashboard/team")
	if view.status != 200 || !strings.Contains(view.body, "<strong>0</strong> of <strong>7</strong>") || strings.Contains(view.body, `name="scope"`) {
		t.Fatalf("profile-1 team view: %d %s", view.status, view.body)
	}
	p = member.post("/dashboard/team/keys", url.Values{"csrf": {view.csrf(t)}, "name": {"laptop"}})
	k := tokenField.FindStringSubmatch(p.body)
	if p.status != http.StatusCreated || k == nil {
		t.Fatalf("profile-1 key: %d %s", p.status, p.body)
	}
	if st, h := s.api("POST", "/api/v1/hostnames", k[1], map[string]any{"ip": "93.184.215.14", "label": "my-laptop"}); st != 201 {
		t.Fatalf("profile-1 key minting: %d %v", st, h)
	}
	if view := member.get("/dashboard/team"); !strings.Contains(view.body, "my-laptop.example.org") || !strings.Contains(view.body, "<strong>1</strong> of <strong>7</strong>") {
		t.Fatalf("profile-1 team view after minting: %s", view.body)
	}
}

// Static files, and nothing else under their folder.
func TestStatic(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 1, "")
	b := s.browser()
	for path, want := range map[string]int{"/dashboard/static/style.css": 200, "/dashboard/static/copy.js": 200,
		"/dashboard/static/": 404, "/dashboard/static/none.css": 404, "/dashboard/nothing": 404} {
		p := b.get(path)
		if p.status != want {
			t.Errorf("%s: %d, want %d", path, p.status, want)
		}
		if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
	}
	// The API's own answers are untouched beside the dashboard.
	if st, body := s.api("GET", "/api/nothing", "", nil); st != 404 || body["code"] != "NOT_FOUND" {
		t.Errorf("API 404: %d %v", st, body)
	}
}
