package dashboard_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/storage"
)

var (
	tsigSecret  = regexp.MustCompile(`id="new-tsig-secret" class="mono" type="text" readonly value="([^"]+)"`)
	tsigKeyFile = regexp.MustCompile(`(?s)<textarea id="new-tsig-nsupdate"[^>]*>(.*?)</textarea>`)
	tsigCertbot = regexp.MustCompile(`(?s)<textarea id="new-tsig-certbot"[^>]*>(.*?)</textarea>`)
	tsigCommand = regexp.MustCompile(`<code id="new-tsig-command">([^<]*)</code>`)
)

// shown is the text of the first group of re on p, unescaped; "" if none.
func (p page) shown(re *regexp.Regexp) string {
	if m := re.FindStringSubmatch(p.body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// A member's TSIG key, in both profiles: made with the rules, its secret
// shown once with nsupdate's and certbot's files, listed, and revoked.
func TestTeamTSIGKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		profile profile.Profile
		dnsAddr string
		form    url.Values
		host    string // in the files
		port    string
		grant   string // the listed scope
	}{
		{"P1, no DNS address", 1, "", url.Values{"name": {"router"}, "algorithm": {"hmac-sha256"}},
			"NAMESERVER", "53", "dns01:write on the whole team"},
		{"P2, scoped", 2, "ns1.example.net:5353",
			url.Values{"name": {"certbot"}, "algorithm": {"hmac-sha512"}, "scope": {"dns01:write"}, "reach": {"domain:acme.example.net"}},
			"ns1.example.net", "5353", "dns01:write on domain acme.example.net"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSiteWith(t, storage.SQLite, tc.profile, "", siteOptions{sealed: true, dnsAddr: tc.dnsAddr})
			var team string
			if tc.profile.Teams() {
				team = s.team("Acme", "acme.example.net")
			} else {
				st, a := s.api("POST", "/api/admin/accounts", adminToken, map[string]any{"name": "Home", "plan": "pro"})
				if st != 201 {
					t.Fatalf("create account: %d %v", st, a)
				}
				team = a["id"].(string)
			}
			b := s.browser()
			csrf := b.signInTeam(t, team)
			if p := b.get("/dashboard/team"); !strings.Contains(p.body, "No TSIG keys yet.") {
				t.Errorf("an empty list does not say so: %s", p.body)
			}
			if p := b.post("/dashboard/team/tsig-keys", tc.form); p.status != http.StatusForbidden {
				t.Errorf("create without the form token: %d", p.status)
			}

			f := url.Values{"csrf": {csrf}}
			for k, v := range tc.form {
				f[k] = v
			}
			p := b.post("/dashboard/team/tsig-keys", f)
			secret := p.shown(tsigSecret)
			if p.status != http.StatusCreated || secret == "" {
				t.Fatalf("create: %d %s", p.status, p.body)
			}
			ks, err := s.accounts.TSIGKeys(t.Context(), team, nil)
			if err != nil || len(ks) != 1 {
				t.Fatalf("keys: %v %+v", err, ks)
			}
			k := ks[0]
			alg := tc.form.Get("algorithm")
			if k.Name != tc.form.Get("name") || k.Algorithm != alg {
				t.Errorf("stored %+v", k)
			}
			if opened, err := accounts.OpenTSIGSecret(sealKey, &k); err != nil || opened != secret {
				t.Errorf("the secret shown is not the key's: %v", err)
			}
			wantFile := `key "` + k.KeyName + `." {
    algorithm ` + alg + `;
    secret "` + secret + `";
};
`
			if got := p.shown(tsigKeyFile); got != wantFile {
				t.Errorf("nsupdate key file:\n%s\nwant:\n%s", got, wantFile)
			}
			if got, want := p.shown(tsigCommand), "nsupdate -k "+k.KeyName+".key"; got != want {
				t.Errorf("command %q, want %q", got, want)
			}
			wantINI := "dns_rfc2136_server = " + tc.host + "\ndns_rfc2136_port = " + tc.port +
				"\ndns_rfc2136_name = " + k.KeyName + ".\ndns_rfc2136_secret = " + secret +
				"\ndns_rfc2136_algorithm = " + strings.ToUpper(alg) + "\n"
			if got := p.shown(tsigCertbot); got != wantINI {
				t.Errorf("certbot credentials:\n%s\nwant:\n%s", got, wantINI)
			}

			// Shown once: the next view lists the key, never its secret.
			view := b.get("/dashboard/team")
			if strings.Contains(view.body, secret) || strings.Contains(view.body, "new-tsig-secret") || strings.Contains(view.body, "dns_rfc2136") {
				t.Errorf("the team view shows the secret or its files again: %s", view.body)
			}
			view.has(t, k.KeyName+".", ">"+alg+"<", tc.form.Get("name"), tc.grant,
				`action="/dashboard/team/tsig-keys/`+k.ID+`/revoke"`)

			b.post("/dashboard/team/tsig-keys/"+k.ID+"/revoke", url.Values{"csrf": {csrf}}).redirectsTo(t, "/dashboard/team")
			if ks, _ := s.accounts.TSIGKeys(t.Context(), team, nil); len(ks) != 0 {
				t.Errorf("keys after revoking: %+v", ks)
			}
			if view := b.get("/dashboard/team"); strings.Contains(view.body, k.KeyName) {
				t.Errorf("a revoked key is listed: %s", view.body)
			}
			if p := b.post("/dashboard/team/tsig-keys/"+k.ID+"/revoke", url.Values{"csrf": {csrf}}); p.status != http.StatusNotFound {
				t.Errorf("revoking twice: %d", p.status)
			}
		})
	}
}

// A refused form: the rule's message by its field, what was typed kept,
// nothing created.
func TestTeamTSIGRefused(t *testing.T) {
	t.Parallel()
	s := newSiteWith(t, storage.SQLite, 2, "", siteOptions{sealed: true})
	team := s.team("Acme", "acme.example.net")
	b := s.browser()
	csrf := b.signInTeam(t, team)
	for _, tc := range []struct {
		name  string
		form  url.Values
		code  int
		field string
	}{
		{"bad algorithm", url.Values{"name": {"ci"}, "algorithm": {"hmac-md5"}, "scope": {"dns01:write"}, "reach": {"team"}}, 400, "tsig-algorithm-error"},
		{"long name", url.Values{"name": {strings.Repeat("n", 201)}, "scope": {"dns01:write"}, "reach": {"team"}}, 400, "tsig-name-error"},
		{"no scope", url.Values{"name": {"ci"}, "reach": {"team"}}, 400, "tsig-scope-error"},
		{"no reach", url.Values{"name": {"ci"}, "scope": {"dns01:write"}}, 400, "tsig-reach-error"},
		{"unknown scope", url.Values{"name": {"ci"}, "scope": {"root"}, "reach": {"team"}}, 400, "tsig-scope-error"},
		{"no such domain", url.Values{"name": {"ci"}, "scope": {"dns01:write"}, "reach": {"domain:bravo.example.net"}}, 400, "tsig-scope-error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.form.Set("csrf", csrf)
			p := b.post("/dashboard/team/tsig-keys", tc.form)
			if p.status != tc.code || !strings.Contains(p.body, `id="`+tc.field+`"`) {
				t.Errorf("%d, want %d with %s: %s", p.status, tc.code, tc.field, p.body)
			}
			if n := tc.form.Get("name"); !strings.Contains(p.body, `id="tsig-name" name="name" type="text" maxlength="200" value="`+n+`"`) {
				t.Errorf("the name typed is not kept")
			}
			if strings.Contains(p.body, "new-tsig-secret") {
				t.Errorf("a refused form shows a secret")
			}
		})
	}
	p := b.post("/dashboard/team/tsig-keys", url.Values{"csrf": {csrf}, "name": {"ci"}, "algorithm": {"hmac-md5"}, "scope": {"dns01:write"}, "reach": {"team"}})
	errorNext(t, p, 400, "tsig-algorithm-error", s.apiError("POST", "/api/admin/accounts/"+team+"/tsig-keys", adminToken,
		map[string]any{"name": "ci", "algorithm": "hmac-md5"}))
	if ks, _ := s.accounts.TSIGKeys(t.Context(), team, nil); len(ks) != 0 {
		t.Fatalf("%d TSIG keys after refused forms", len(ks))
	}

	// Refusals and the writes are audited as the API keys' are.
	if _, err := s.accounts.CreateTSIGKey(t.Context(), team, nil, accounts.TSIGInput{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	ks, _ := s.accounts.TSIGKeys(t.Context(), team, nil)
	b.post("/dashboard/team/tsig-keys/"+ks[0].ID+"/revoke", url.Values{"csrf": {csrf}}).redirectsTo(t, "/dashboard/team")
	p = b.post("/dashboard/team/tsig-keys", url.Values{"csrf": {csrf}, "name": {"ci"}, "scope": {"dns01:write"}, "reach": {"team"}})
	secret := p.shown(tsigSecret)
	if p.status != http.StatusCreated || secret == "" {
		t.Fatalf("create: %d", p.status)
	}
	ks, _ = s.accounts.TSIGKeys(t.Context(), team, nil)
	op := s.browser()
	op.signInOperator(t)
	audited := op.get(auditPath + "?account=" + team)
	rows := audited.rows(t)
	for _, w := range []auditEntry{
		{actor: "session:" + team, action: "POST /dashboard/team/tsig-keys", result: "REFUSED", status: "400"},
		{actor: "session:" + team, action: "POST /dashboard/team/tsig-keys/{id}/revoke", result: "ok"},
		{actor: "session:" + team, action: "POST /dashboard/team/tsig-keys", object: "tsig_key:" + ks[0].ID, result: "ok", status: "201"},
	} {
		if !hasEntry(rows, w) {
			t.Errorf("no entry like %+v among %+v", w, rows)
		}
	}
	if strings.Contains(audited.body, secret) {
		t.Error("the audit log shows a TSIG secret")
	}
}

// Another team's TSIG key is not found, and stays; its name is not shown.
func TestTeamTSIGIsolation(t *testing.T) {
	t.Parallel()
	s := newSiteWith(t, storage.SQLite, 2, "", siteOptions{sealed: true})
	a, bravo := s.team("Alpha", "alpha.example.net"), s.team("Bravo", "bravo.example.net")
	k, err := s.accounts.CreateTSIGKey(t.Context(), bravo, nil,
		accounts.TSIGInput{Name: "bravo-updater", Scopes: []access.Scope{{Scope: access.DNS01Write}}})
	if err != nil {
		t.Fatal(err)
	}
	alpha := s.browser()
	csrf := alpha.signInTeam(t, a)
	if p := alpha.get("/dashboard/team"); strings.Contains(p.body, "bravo-updater") || strings.Contains(p.body, k.Key.KeyName) {
		t.Errorf("Alpha's view shows Bravo's TSIG key: %s", p.body)
	}
	if p := alpha.post("/dashboard/team/tsig-keys/"+k.Key.ID+"/revoke", url.Values{"csrf": {csrf}}); p.status != http.StatusNotFound {
		t.Errorf("revoking another team's TSIG key: %d", p.status)
	}
	if ks, _ := s.accounts.TSIGKeys(t.Context(), bravo, nil); len(ks) != 1 {
		t.Errorf("Bravo's keys after Alpha's attempt: %+v", ks)
	}
}

// Without a certificate encryption key the rule's 501 is shown by the form.
func TestTeamTSIGWithoutKey(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	team := s.team("Acme", "acme.example.net")
	b := s.browser()
	csrf := b.signInTeam(t, team)
	body := map[string]any{"name": "ci"}
	msg := s.apiError("POST", "/api/admin/accounts/"+team+"/tsig-keys", adminToken, body)
	p := b.post("/dashboard/team/tsig-keys", url.Values{"csrf": {csrf}, "name": {"ci"}, "scope": {"dns01:write"}, "reach": {"team"}})
	errorNext(t, p, http.StatusNotImplemented, "tsig-error", msg)
	if ks, _ := s.accounts.TSIGKeys(t.Context(), team, nil); len(ks) != 0 {
		t.Errorf("keys: %+v", ks)
	}
}
