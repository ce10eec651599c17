package dashboard_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/adminapi"
	"github.com/hostmint/hostmint/audit"
	"github.com/hostmint/hostmint/dashboard"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

const adminToken = "admin-token-for-the-dashboard-tests"

// site is the API and the dashboard on one listener, as the plugin mounts
// them, over a fresh store.
type site struct {
	t        *testing.T
	url      string
	accounts *accounts.Service
	db       *sql.DB // the same database, to age rows past their expiry
}

func newSite(t *testing.T, d storage.Dialect, profile profile.Profile, baseURL string) *site {
	t.Helper()
	return newSiteWith(t, d, profile, baseURL, siteOptions{})
}

// newSiteAudited is newSite with (audited) or without an audit log, as a
// deployment is built with one or not.
func newSiteAudited(t *testing.T, d storage.Dialect, profile profile.Profile, baseURL string, audited bool) *site {
	t.Helper()
	return newSiteWith(t, d, profile, baseURL, siteOptions{unaudited: !audited})
}

// siteOptions are the ways a deployment may differ from newSite's.
type siteOptions struct {
	unaudited bool   // no audit log
	sealed    bool   // with sealKey as the certificate encryption key (none: TSIG keys answer 501)
	dnsAddr   string // dashboard.Config.DNSAddr
}

// sealKey is a sealed site's certificate encryption key.
var sealKey = seal.Key(bytes.Repeat([]byte{7}, 32))

func newSiteWith(t *testing.T, d storage.Dialect, profile profile.Profile, baseURL string, o siteOptions) *site {
	t.Helper()
	dsn := storagetest.DSN(t, d)
	store, err := storage.Open(context.Background(), d, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	db, err := sql.Open(string(d), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	auth := accounts.NewAuthenticator(store)
	var key seal.Key
	if o.sealed {
		key = sealKey
	}
	acc := accounts.New(store, profile, auth).WithTSIG(key, nil)
	hs := hostnames.New(store, hostnames.Config{Profile: profile, IdleExpiry: 7 * 24 * time.Hour}, log)
	doms := domains.New(store, key)
	if err := doms.Ensure(context.Background(), []string{"example.org"}); err != nil {
		t.Fatal(err)
	}
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	if baseURL == "" {
		baseURL = srv.URL
	}
	var audits *audit.Log
	if !o.unaudited {
		audits = audit.New(store, log)
	}
	// The test client is a trusted proxy: a request says it came over TLS
	// with X-Forwarded-Proto.
	rules := hostnames.DefaultRules(hs)
	rules.Certificates.WithACMEDNS("auth.example.org")
	api := adminapi.New(adminapi.Config{Profile: profile, BaseURL: baseURL, AdminToken: adminToken, Audit: audits,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, rules, acc, auth, doms, log)
	dash := dashboard.New(dashboard.Config{Profile: profile, BaseURL: baseURL, AdminToken: adminToken, Audit: audits,
		TLS: api.OverTLS, DNSAddr: o.dnsAddr}, acc, rules, doms, log)
	h = dashboard.Mount(api, dash)
	return &site{t: t, url: srv.URL, accounts: acc, db: db}
}

// api calls the JSON API and decodes the answer.
func (s *site) api(method, path, token string, body any) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// team makes a team with a dedicated domain and returns its id.
func (s *site) team(name, domain string) string {
	s.t.Helper()
	st, a := s.api("POST", "/api/admin/accounts", adminToken, map[string]any{"name": name, "plan": "team"})
	if st != 201 {
		s.t.Fatalf("create team: %d %v", st, a)
	}
	id := a["id"].(string)
	if st, d := s.api("POST", "/api/admin/domains", adminToken, map[string]any{"name": domain, "account_id": id}); st != 201 {
		s.t.Fatalf("create domain: %d %v", st, d)
	}
	return id
}

// link issues a sign-in link through the admin API and returns its token.
func (s *site) link(account string) string {
	s.t.Helper()
	st, l := s.api("POST", "/api/admin/accounts/"+account+"/signin-links", adminToken, nil)
	if st != 201 {
		s.t.Fatalf("signin-links: %d %v", st, l)
	}
	u, err := url.Parse(l["url"].(string))
	if err != nil {
		s.t.Fatal(err)
	}
	return u.Query().Get("token")
}

// browser is one browser: its own cookies, and it does not follow
// redirects, so that tests see each answer.
type browser struct {
	s      *site
	client *http.Client
}

func (s *site) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{s: s, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.s.t.Helper()
	resp, err := b.client.Do(req)
	if err != nil {
		b.s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

func (b *browser) get(path string) page {
	req, _ := http.NewRequest("GET", b.s.url+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) page {
	req, _ := http.NewRequest("POST", b.s.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the form token on a page.
func (p page) csrf(t *testing.T) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf field on the page (%d): %s", p.status, p.body)
	}
	return m[1]
}

func (p page) redirectsTo(t *testing.T, want string) {
	t.Helper()
	if p.status != http.StatusSeeOther || p.header.Get("Location") != want {
		t.Fatalf("got %d to %q, want 303 to %s: %s", p.status, p.header.Get("Location"), want, p.body)
	}
}

// signInOperator signs b in as the operator and returns the session's form token.
func (b *browser) signInOperator(t *testing.T) string {
	t.Helper()
	tok := b.get("/dashboard/signin").csrf(t)
	b.post("/dashboard/signin", url.Values{"csrf": {tok}, "token": {adminToken}}).redirectsTo(t, "/dashboard/operator")
	p := b.get("/dashboard/operator")
	if p.status != 200 {
		t.Fatalf("operator page: %d", p.status)
	}
	return p.csrf(t)
}

// signInWithLink signs b in with a sign-in link's token.
func (b *browser) signInWithLink(t *testing.T, token string) {
	t.Helper()
	tok := b.get("/dashboard/signin/link?token=" + token).csrf(t)
	b.post("/dashboard/signin/link", url.Values{"csrf": {tok}, "token": {token}}).redirectsTo(t, "/dashboard/team")
}

// signInTeam signs b in with a new link for account and returns the form token.
func (b *browser) signInTeam(t *testing.T, account string) string {
	t.Helper()
	b.signInWithLink(t, b.s.link(account))
	p := b.get("/dashboard/team")
	if p.status != 200 {
		t.Fatalf("team page: %d", p.status)
	}
	return p.csrf(t)
}

// age moves every row of table past its expiry.
func (s *site) age(table string) {
	s.t.Helper()
	if _, err := s.db.Exec("UPDATE " + table + " SET expires_at = 1"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *site) count(table string) int {
	s.t.Helper()
	var n int
	if err := s.db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}
