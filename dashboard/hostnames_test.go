package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// created follows a create's redirect to the hostname's page and returns its id.
func created(t *testing.T, p page) string {
	t.Helper()
	loc := p.header.Get("Location")
	id, ok := strings.CutPrefix(loc, "/dashboard/team/hostnames/")
	if p.status != http.StatusSeeOther || !ok || id == "" {
		t.Fatalf("create: %d to %q: %s", p.status, loc, p.body)
	}
	return id
}

// apiError is the message the API answers body with at path, so a test can
// check the dashboard shows the very same words.
func (s *site) apiError(method, path, key string, body any) string {
	s.t.Helper()
	st, out := s.api(method, path, key, body)
	msg, _ := out["error"].(string)
	if st < 400 || msg == "" {
		s.t.Fatalf("%s %s %v: %d %v, want an error", method, path, body, st, out)
	}
	return msg
}

// memberKey is an unscoped API key of account, to compare with the API.
func (s *site) memberKey(account string) string {
	s.t.Helper()
	st, k := s.api("POST", "/api/admin/accounts/"+account+"/keys", adminToken, map[string]any{"name": "compare"})
	if st != 201 {
		s.t.Fatalf("key: %d %v", st, k)
	}
	return k["key"].(string)
}

// errorNext checks that the page answered code with msg in the element id.
func errorNext(t *testing.T, p page, code int, id, msg string) {
	t.Helper()
	want := `id="` + id + `" role="alert">` + template(msg) + `</p>`
	if p.status != code || !strings.Contains(p.body, want) {
		t.Errorf("got %d, want %d with %s; body: %s", p.status, code, want, p.body)
	}
}

// template escapes as html/template does the few characters messages hold.
func template(s string) string {
	return strings.NewReplacer(`&`, "&amp;", `"`, "&#34;", `'`, "&#39;", `<`, "&lt;", `>`, "&gt;").Replace(s)
}

// The hostname actions of profile 2, each with the API's rules and words.
func TestTeamHostnameActions(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	team := s.team("Acme", "acme.example.net")
	key := s.memberKey(team)
	b := s.browser()
	csrf := b.signInTeam(t, team)

	// Create: the API's errors next to their fields, what was typed kept.
	for _, tc := range []struct {
		form url.Values
		json map[string]any
		id   string
		code int
	}{
		{url.Values{"ip": {"not-an-ip"}}, map[string]any{"ip": "not-an-ip"}, "host-ip-error", 400},
		{url.Values{"ip": {""}}, map[string]any{"ip": ""}, "host-ip-error", 400},
		{url.Values{"ip": {"198.51.100.7"}, "subdomain": {"-bad-"}}, map[string]any{"ip": "198.51.100.7", "subdomain": "-bad-"}, "host-subdomain-error", 400},
		{url.Values{"ip": {"198.51.100.7"}, "certificate": {"bogus"}}, map[string]any{"ip": "198.51.100.7", "certificate": "bogus"}, "host-certificate-error", 400},
		{url.Values{"ip": {"198.51.100.7"}, "certificate": {"self"}, "ca": {"google"}}, map[string]any{"ip": "198.51.100.7", "certificate": "self", "ca": "google"}, "host-ca-error", 400},
		{url.Values{"ip": {"198.51.100.7"}, "domain": {"other.example.net"}}, map[string]any{"ip": "198.51.100.7", "domain": "other.example.net"}, "host-domain-error", 0},
	} {
		msg := s.apiError("POST", "/api/v1/hostnames", key, tc.json)
		tc.form.Set("csrf", csrf)
		p := b.post("/dashboard/team/hostnames", tc.form)
		code := tc.code
		if code == 0 {
			code = p.status // the API's status, whatever it is
		}
		errorNext(t, p, code, tc.id, msg)
		if ip := tc.form.Get("ip"); !strings.Contains(p.body, `value="`+ip+`"`) {
			t.Errorf("%v: the address typed is not kept", tc.form)
		}
	}
	if n := s.count("hostnames"); n != 0 {
		t.Fatalf("%d hostnames after refused forms", n)
	}

	id := created(t, b.post("/dashboard/team/hostnames", url.Values{"csrf": {csrf}, "ip": {"198.51.100.7"},
		"subdomain": {"web"}, "domain": {"acme.example.net"}, "certificate": {"self"}}))
	p := b.get("/dashboard/team/hostnames/" + id)
	if p.status != 200 || !strings.Contains(p.body, "web.acme.example.net") || !strings.Contains(p.body, "198.51.100.7") {
		t.Fatalf("hostname page: %d %s", p.status, p.body)
	}
	if !strings.Contains(b.get("/dashboard/team").body, `href="/dashboard/team/hostnames/`+id+`"`) {
		t.Error("the team view does not link the hostname's page")
	}
	if st, h := s.api("GET", "/api/v1/hostnames/"+id, key, nil); st != 200 || h["hostname"] != "web.acme.example.net" {
		t.Fatalf("the API does not see it: %d %v", st, h)
	}

	// Repoint: a new address; one of the other class is refused with the API's words.
	b.post("/dashboard/team/hostnames/"+id+"/update", url.Values{"csrf": {csrf}, "ip": {"198.51.100.8"}}).
		redirectsTo(t, "/dashboard/team/hostnames/"+id)
	if _, h := s.api("GET", "/api/v1/hostnames/"+id, key, nil); h["ip"] != "198.51.100.8" {
		t.Fatalf("after the update: %v", h)
	}
	msg := s.apiError("PUT", "/api/v1/hostnames/"+id, key, map[string]any{"ip": "93.184.215.14"})
	errorNext(t, b.post("/dashboard/team/hostnames/"+id+"/update", url.Values{"csrf": {csrf}, "ip": {"93.184.215.14"}}), 409, "update-error", msg)
	msg = s.apiError("PUT", "/api/v1/hostnames/"+id, key, map[string]any{})
	errorNext(t, b.post("/dashboard/team/hostnames/"+id+"/update", url.Values{"csrf": {csrf}}), 400, "update-ip-error", msg)
	msg = s.apiError("PUT", "/api/v1/hostnames/"+id, key, map[string]any{"target": "not a name"})
	errorNext(t, b.post("/dashboard/team/hostnames/"+id+"/update", url.Values{"csrf": {csrf}, "target": {"not a name"}}), 400, "update-target-error", msg)

	// Records, credentials and orders are for live hostnames; nothing runs
	// the nameserver watch here, so mark it live as the watch would.
	msg = s.apiError("POST", "/api/v1/hostnames/"+id+"/records", key, map[string]any{"type": "TXT", "text": "x"})
	errorNext(t, b.post("/dashboard/team/hostnames/"+id+"/records", url.Values{"csrf": {csrf}, "type": {"TXT"}, "text": {"x"}}), 409, "rec-TXT-error", msg)
	if _, err := s.db.Exec("UPDATE hostnames SET status = 'live'"); err != nil {
		t.Fatal(err)
	}

	// Records: one of each type with a form, then one deleted.
	for _, f := range []url.Values{
		{"type": {"TXT"}, "text": {"v=spf1 -all"}},
		{"type": {"MX"}, "preference": {"10"}, "exchange": {"mx1.example.com"}},
		{"type": {"CAA"}, "flags": {"0"}, "tag": {"issue"}, "value": {"letsencrypt.org"}},
		{"type": {"SRV"}, "name": {"_sip._tcp"}, "priority": {"10"}, "weight": {"5"}, "port": {"5060"}, "target": {"sip.example.com"}},
	} {
		f.Set("csrf", csrf)
		b.post("/dashboard/team/hostnames/"+id+"/records", f).redirectsTo(t, "/dashboard/team/hostnames/"+id)
	}
	st, rs := s.api("GET", "/api/v1/hostnames/"+id+"/records", key, nil)
	if st != 200 || len(rs["records"].([]any)) != 4 {
		t.Fatalf("records: %d %v", st, rs)
	}
	p = b.get("/dashboard/team/hostnames/" + id)
	for _, want := range []string{`&#34;v=spf1 -all&#34;`, "10 mx1.example.com.", `0 issue &#34;letsencrypt.org&#34;`, "10 5 5060 sip.example.com.", "_sip._tcp.web.acme.example.net"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the records list lacks %s", want)
		}
	}
	for _, tc := range []struct {
		form url.Values
		json map[string]any
		id   string
	}{
		{url.Values{"type": {"MX"}, "preference": {"70000"}, "exchange": {"mx.example.com"}}, map[string]any{"type": "MX", "preference": 70000, "exchange": "mx.example.com"}, "rec-MX-preference-error"},
		{url.Values{"type": {"MX"}, "preference": {"1"}}, map[string]any{"type": "MX", "preference": 1}, "rec-MX-exchange-error"},
		{url.Values{"type": {"CAA"}, "flags": {"0"}, "tag": {"bogus"}, "value": {"x"}}, map[string]any{"type": "CAA", "flags": 0, "tag": "bogus", "value": "x"}, "rec-CAA-tag-error"},
		{url.Values{"type": {"SRV"}, "name": {"bad name!"}, "priority": {"1"}, "weight": {"1"}, "port": {"1"}, "target": {"a.example"}}, map[string]any{"type": "SRV", "name": "bad name!", "priority": 1, "weight": 1, "port": 1, "target": "a.example"}, "rec-SRV-name-error"},
	} {
		msg := s.apiError("POST", "/api/v1/hostnames/"+id+"/records", key, tc.json)
		tc.form.Set("csrf", csrf)
		errorNext(t, b.post("/dashboard/team/hostnames/"+id+"/records", tc.form), 400, tc.id, msg)
	}
	p = b.post("/dashboard/team/hostnames/"+id+"/records", url.Values{"csrf": {csrf}, "type": {"SRV"}, "port": {"eighty"}})
	if p.status != 400 || !strings.Contains(p.body, `id="rec-SRV-port-error"`) {
		t.Errorf("a port that is not a number: %d", p.status)
	}
	rid := rs["records"].([]any)[0].(map[string]any)["id"].(string)
	b.post("/dashboard/team/hostnames/"+id+"/records/"+rid+"/delete", url.Values{"csrf": {csrf}}).redirectsTo(t, "/dashboard/team/hostnames/"+id)
	if _, rs := s.api("GET", "/api/v1/hostnames/"+id+"/records", key, nil); len(rs["records"].([]any)) != 3 {
		t.Fatalf("after delete: %v", rs)
	}

	// A DNS-01 credential, shown once, that an acme-dns client can use.
	p = b.post("/dashboard/team/hostnames/"+id+"/credential", url.Values{"csrf": {csrf}})
	user := regexp.MustCompile(`id="cred-username" class="mono" type="text" readonly value="([^"]+)"`).FindStringSubmatch(p.body)
	pass := regexp.MustCompile(`id="cred-password" class="mono" type="text" readonly value="([^"]+)"`).FindStringSubmatch(p.body)
	if p.status != http.StatusCreated || user == nil || pass == nil || !strings.Contains(p.body, "_acme-challenge.web.acme.example.net") {
		t.Fatalf("credential: %d %s", p.status, p.body)
	}
	req, _ := http.NewRequest("POST", s.url+"/api/acme/update",
		strings.NewReader(`{"subdomain":"`+user[1]+`","txt":"`+strings.Repeat("a", 43)+`"}`))
	req.Header.Set("X-Api-User", user[1])
	req.Header.Set("X-Api-Key", pass[1])
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the credential does not publish: %v %v", resp, err)
	}
	if p := b.get("/dashboard/team/hostnames/" + id); strings.Contains(p.body, pass[1]) {
		t.Error("the password is shown again")
	}

	// Diagnose: the report's checks and verdicts.
	p = b.post("/dashboard/team/hostnames/"+id+"/diagnose", url.Values{"csrf": {csrf}})
	if p.status != 200 || !strings.Contains(p.body, `id="report-summary"`) || !strings.Contains(p.body, "Address record on every nameserver") ||
		!regexp.MustCompile(`verdict-(pass|fail|unknown)`).MatchString(p.body) {
		t.Fatalf("diagnose: %d %s", p.status, p.body)
	}
	if !strings.Contains(p.body, "the key and certificate are your own") {
		t.Error("a self hostname's certificate state is not said")
	}

	// Release: the first post only asks; the second releases.
	p = b.post("/dashboard/team/hostnames/"+id+"/release", url.Values{"csrf": {csrf}})
	if p.status != 200 || !strings.Contains(p.body, "Yes, release web.acme.example.net") {
		t.Fatalf("release asks first: %d %s", p.status, p.body)
	}
	if _, h := s.api("GET", "/api/v1/hostnames/"+id, key, nil); h["status"] != "live" {
		t.Fatalf("released without the confirmation: %v", h)
	}
	b.post("/dashboard/team/hostnames/"+id+"/release", url.Values{"csrf": {csrf}, "confirm": {"yes"}}).redirectsTo(t, "/dashboard/team")
	if _, h := s.api("GET", "/api/v1/hostnames/"+id, key, nil); h["status"] != "released" {
		t.Fatalf("after release: %v", h)
	}
	msg = s.apiError("POST", "/api/v1/hostnames/"+id+"/acme-credential", key, nil)
	errorNext(t, b.post("/dashboard/team/hostnames/"+id+"/credential", url.Values{"csrf": {csrf}}), 409, "cred-error", msg)
}

// A certificate the service would obtain needs an ACME CA; without one
// the API's refusal stands next to the certificate field.
func TestTeamHostnameCertificate(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	team := s.team("Acme", "acme.example.net")
	key := s.memberKey(team)
	b := s.browser()
	csrf := b.signInTeam(t, team)
	msg := s.apiError("POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.51.100.7", "certificate": "csr"})
	errorNext(t, b.post("/dashboard/team/hostnames", url.Values{"csrf": {csrf}, "ip": {"198.51.100.7"}, "certificate": {"csr"}}),
		http.StatusNotImplemented, "host-certificate-error", msg)
}

// Every hostname action: without the session's token it is refused before
// anything changes; on another team's hostname it is a 404 that changes
// nothing.
func TestTeamHostnameGuards(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 2, "")
	alpha, bravo := s.team("Alpha", "alpha.example.net"), s.team("Bravo", "bravo.example.net")
	bkey := s.memberKey(bravo)
	st, h := s.api("POST", "/api/v1/hostnames", bkey, map[string]any{"ip": "198.51.100.7", "subdomain": "bravo-web"})
	if st != 201 {
		t.Fatalf("hostname: %d %v", st, h)
	}
	bid := h["id"].(string)
	if _, err := s.db.Exec("UPDATE hostnames SET status = 'live'"); err != nil {
		t.Fatal(err)
	}
	st, rec := s.api("POST", "/api/v1/hostnames/"+bid+"/records", bkey, map[string]any{"type": "TXT", "text": "bravo"})
	if st != 201 {
		t.Fatalf("record: %d %v", st, rec)
	}
	rid := rec["id"].(string)

	b := s.browser()
	csrf := b.signInTeam(t, alpha)
	// Alpha's own hostname, for the CSRF half.
	aid := created(t, b.post("/dashboard/team/hostnames", url.Values{"csrf": {csrf}, "ip": {"198.51.100.9"}, "subdomain": {"alpha-web"}}))
	if _, err := s.db.Exec("UPDATE hostnames SET status = 'live'"); err != nil {
		t.Fatal(err)
	}
	st, arec := s.api("POST", "/api/v1/hostnames/"+aid+"/records", s.memberKey(alpha), map[string]any{"type": "TXT", "text": "alpha"})
	if st != 201 {
		t.Fatalf("record: %d %v", st, arec)
	}
	arid := arec["id"].(string)
	snapshot := func() string {
		var out strings.Builder
		for _, q := range []string{
			"SELECT id || status || ip || addrs || target FROM hostnames ORDER BY id",
			"SELECT id || data FROM records ORDER BY id",
			"SELECT id FROM acme_credentials ORDER BY id",
		} {
			rows, err := s.db.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var v string
				rows.Scan(&v)
				out.WriteString(v + "\n")
			}
			rows.Close()
		}
		return out.String()
	}
	before := snapshot()

	posts := func(id, rid string) map[string]url.Values {
		return map[string]url.Values{
			"/dashboard/team/hostnames/" + id + "/update":                     {"ip": {"198.51.100.99"}},
			"/dashboard/team/hostnames/" + id + "/renew":                      {},
			"/dashboard/team/hostnames/" + id + "/release":                    {"confirm": {"yes"}},
			"/dashboard/team/hostnames/" + id + "/records":                    {"type": {"TXT"}, "text": {"evil"}},
			"/dashboard/team/hostnames/" + id + "/records/" + rid + "/delete": {},
			"/dashboard/team/hostnames/" + id + "/records/" + rid + "/edit":   {"type": {"TXT"}, "text": {"evil"}},
			"/dashboard/team/hostnames/" + id + "/credential":                 {},
			"/dashboard/team/hostnames/" + id + "/diagnose":                   {},
		}
	}
	for path, f := range posts(aid, arid) {
		for _, tok := range []string{"", "forged"} {
			g := url.Values{}
			for k, v := range f {
				g[k] = v
			}
			if tok != "" {
				g.Set("csrf", tok)
			}
			if p := b.post(path, g); p.status != http.StatusForbidden {
				t.Errorf("%s with csrf %q: %d, want 403", path, tok, p.status)
			}
		}
	}
	if p := b.post("/dashboard/team/hostnames", url.Values{"ip": {"198.51.100.10"}}); p.status != http.StatusForbidden {
		t.Errorf("create without csrf: %d", p.status)
	}
	// The forms of the other record types post to the same path, each
	// refused alike.
	for _, f := range []url.Values{
		{"type": {"TLSA"}, "name": {"_443._tcp"}, "usage": {"3"}, "selector": {"1"}, "matching_type": {"0"}, "association": {"abcd"}},
		{"type": {"SSHFP"}, "algorithm": {"4"}, "fptype": {"2"}, "fingerprint": {strings.Repeat("a", 64)}},
		{"type": {"HTTPS"}, "priority": {"1"}, "target": {"."}, "params.alpn": {"h2"}},
		{"type": {"SVCB"}, "priority": {"1"}, "target": {"."}},
	} {
		for _, tok := range []string{"", "forged"} {
			if tok != "" {
				f.Set("csrf", tok)
			}
			if p := b.post("/dashboard/team/hostnames/"+aid+"/records", f); p.status != http.StatusForbidden {
				t.Errorf("%s record with csrf %q: %d, want 403", f.Get("type"), tok, p.status)
			}
		}
	}
	for path, f := range posts(bid, rid) {
		f.Set("csrf", csrf)
		p := b.post(path, f)
		if p.status != http.StatusNotFound || strings.Contains(p.body, "bravo") {
			t.Errorf("%s on Bravo's hostname: %d, want 404 saying nothing of it", path, p.status)
		}
	}
	if p := b.get("/dashboard/team/hostnames/" + bid); p.status != http.StatusNotFound || strings.Contains(p.body, "bravo") {
		t.Errorf("Bravo's hostname page: %d", p.status)
	}
	if p := b.get("/dashboard/team/hostnames/" + bid + "/records/" + rid + "/edit"); p.status != http.StatusNotFound || strings.Contains(p.body, "bravo") {
		t.Errorf("Bravo's record's edit page: %d", p.status)
	}
	// Alpha's own hostname with Bravo's record: as unknown as none.
	p := b.post("/dashboard/team/hostnames/"+aid+"/records/"+rid+"/edit", url.Values{"csrf": {csrf}, "type": {"TXT"}, "text": {"evil"}})
	if p.status != http.StatusNotFound || strings.Contains(p.body, "bravo") {
		t.Errorf("editing Bravo's record under Alpha's hostname: %d", p.status)
	}
	if p := b.get("/dashboard/team/hostnames/" + aid + "/records/" + rid + "/edit"); p.status != http.StatusNotFound || strings.Contains(p.body, "bravo") {
		t.Errorf("Bravo's record's edit page under Alpha's hostname: %d", p.status)
	}
	if after := snapshot(); after != before {
		t.Errorf("refused posts changed something:\nbefore %s\nafter %s", before, after)
	}
}

// Profile 1: an opaque or custom label, renew, and the plan's rules.
func TestTeamHostnamesProfile1(t *testing.T) {
	t.Parallel()
	s := newSite(t, storage.SQLite, 1, "")
	newAccount := func(plan string) (string, string) {
		st, a := s.api("POST", "/api/admin/accounts", adminToken, map[string]any{"name": "me-" + plan, "plan": plan})
		if st != 201 {
			t.Fatalf("account: %d %v", st, a)
		}
		return a["id"].(string), s.memberKey(a["id"].(string))
	}
	free, freeKey := newAccount("free")
	b := s.browser()
	csrf := b.signInTeam(t, free)
	msg := s.apiError("POST", "/api/v1/hostnames", freeKey, map[string]any{"ip": "93.184.215.14", "label": "my-laptop"})
	errorNext(t, b.post("/dashboard/team/hostnames", url.Values{"csrf": {csrf}, "ip": {"93.184.215.14"}, "label": {"my-laptop"}}), 403, "host-error", msg)

	pro, key := newAccount("pro")
	b = s.browser()
	csrf = b.signInTeam(t, pro)
	if p := b.get("/dashboard/team"); strings.Contains(p.body, `name="subdomain"`) || !strings.Contains(p.body, `name="label"`) {
		t.Error("profile 1's form has subdomain or lacks label")
	}
	id := created(t, b.post("/dashboard/team/hostnames", url.Values{"csrf": {csrf}, "ip": {"93.184.215.14"}, "label": {"my-laptop"}}))
	opaque := created(t, b.post("/dashboard/team/hostnames", url.Values{"csrf": {csrf}, "ip": {"93.184.215.14"}}))
	if _, h := s.api("GET", "/api/v1/hostnames/"+opaque, key, nil); !strings.HasSuffix(h["hostname"].(string), ".example.org") {
		t.Fatalf("opaque: %v", h)
	}
	b.post("/dashboard/team/hostnames/"+id+"/update", url.Values{"csrf": {csrf}, "ip": {"2606:2800:21f:cb07:6820:80da:af6b:8b2c"}}).
		redirectsTo(t, "/dashboard/team/hostnames/"+id)
	if _, h := s.api("GET", "/api/v1/hostnames/"+id, key, nil); h["ip"] != "2606:2800:21f:cb07:6820:80da:af6b:8b2c" || h["hostname"] != "my-laptop.example.org" {
		t.Fatalf("after the update: %v", h)
	}
	msg = s.apiError("PUT", "/api/v1/hostnames/"+id, key, map[string]any{})
	errorNext(t, b.post("/dashboard/team/hostnames/"+id+"/update", url.Values{"csrf": {csrf}, "ip": {""}}), 400, "update-ip-error", msg)
	s.age("hostnames")
	b.post("/dashboard/team/hostnames/"+id+"/renew", url.Values{"csrf": {csrf}}).redirectsTo(t, "/dashboard/team/hostnames/"+id)
	if _, h := s.api("GET", "/api/v1/hostnames/"+id, key, nil); h["status"] != "live" {
		t.Fatalf("after renew: %v", h)
	}
	p := b.get("/dashboard/team/hostnames/" + id)
	if strings.Contains(p.body, "Records") || strings.Contains(p.body, "Run diagnose") || !strings.Contains(p.body, ">Renew<") {
		t.Error("profile 1's page shows profile 2's sections or lacks Renew")
	}
	b.post("/dashboard/team/hostnames/"+id+"/release", url.Values{"csrf": {csrf}, "confirm": {"yes"}}).redirectsTo(t, "/dashboard/team")
	if _, h := s.api("GET", "/api/v1/hostnames/"+id, key, nil); h["status"] != "released" {
		t.Fatalf("after release: %v", h)
	}
}
