package adminapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/certs"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/hostmint/hostmint/targets"
)

// fuzzAdmin is the admin token of the fuzzed servers.
const fuzzAdmin = "fuzz-admin-token-0123456789"

// fuzzAPI is a real Server over a fresh store, with the objects the fuzzed
// routes act on already made through the API itself.
type fuzzAPI struct {
	name  string // dialect/profile, for messages
	srv   *Server
	store *storage.Store
	log   *lockedBuffer // the server's log: a panic's value and stack land here
	key   string        // bearer key of the team that owns the objects
	ids   map[string]string
	// user and pass are an acme-dns credential of the "live" hostname.
	user, pass string
}

// lockedBuffer is the server's log sink.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}

// newFuzzAPIs makes one server for each dialect and profile: the rules, and
// what a database accepts (PostgreSQL refuses bytes SQLite stores), differ.
func newFuzzAPIs(tb testing.TB) []*fuzzAPI {
	tb.Helper()
	var out []*fuzzAPI
	for _, d := range storagetest.Dialects {
		for _, p := range []profile.Profile{profile.P1, profile.P2} {
			out = append(out, newFuzzAPI(tb, d, p))
		}
	}
	return out
}

func newFuzzAPI(tb testing.TB, d storage.Dialect, profile profile.Profile) *fuzzAPI {
	tb.Helper()
	store := storagetest.Open(tb, d)
	key := make(seal.Key, 32)
	rand.Read(key)
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	// The CA is configured so that csr and managed are offered, but the
	// manager is never run: nothing is ordered, nothing leaves the process.
	mgr := certs.New(store, certs.Config{CAs: []certs.CA{{Name: certs.LetsEncrypt, Directory: "https://127.0.0.1:9/dir"}}, Key: key}, logger)
	hs := hostnames.New(store, hostnames.Config{
		Profile: profile, IdleExpiry: time.Hour, SealKey: key, Certs: mgr,
		// No resolver servers: a target answers 501, without DNS traffic.
		Resolver: &targets.Resolver{},
	}, logger)
	rules := hostnames.DefaultRules(hs)
	rules.Records = hostnames.NewRecords(hs, 1<<30) // the record rules, not the rate limit, are what is fuzzed
	rules.Certificates.WithACMEDNS("auth.example.org")
	auth := accounts.NewAuthenticator(store)
	srv := New(Config{Profile: profile, BaseURL: "http://127.0.0.1:8080", AdminToken: fuzzAdmin,
		Health: func(context.Context) (Health, error) { return Health{}, nil }}, rules, accounts.New(store, profile, auth).WithTSIG(key, nil), auth, domains.New(store, key), logger)
	a := &fuzzAPI{name: fmt.Sprintf("%s/P%d", d, profile), srv: srv, store: store, log: logs, ids: map[string]string{}}

	team := `{"name":"main","plan":"business"}`
	if profile == 2 {
		team = `{"name":"main","plan":"team"}`
	}
	main := a.setup(tb, "POST", "/api/admin/accounts", fuzzAdmin, team, "id")[0]
	a.ids["spare_account"] = a.setup(tb, "POST", "/api/admin/accounts", fuzzAdmin, `{"name":"spare","plan":"free"}`, "id")[0]
	a.key = a.setup(tb, "POST", "/api/admin/accounts/"+main+"/keys", fuzzAdmin, `{}`, "key")[0]
	owner := "" // profile 1 mints on pool domains, profile 2 on the team's own
	if profile == 2 {
		owner = `,"account_id":"` + main + `"`
	}
	a.setup(tb, "POST", "/api/admin/domains", fuzzAdmin, `{"name":"example.org"`+owner+`}`, "id")
	a.ids["spare_domain"] = a.setup(tb, "POST", "/api/admin/domains", fuzzAdmin, `{"name":"spare.example"}`, "id")[0]
	a.ids["moved"] = a.setup(tb, "POST", "/api/v1/hostnames", a.key, `{"ip":"192.0.2.1"}`, "id")[0]
	a.ids["live"] = a.setup(tb, "POST", "/api/v1/hostnames", a.key, `{"ip":"192.0.2.2"}`, "id")[0]
	if profile == 2 {
		a.ids["csr"] = a.setup(tb, "POST", "/api/v1/hostnames", a.key, `{"ip":"192.0.2.3","certificate":"csr"}`, "id")[0]
		// Live as the pending watcher would make them once the
		// nameservers answer; there are none here.
		a.makeLive(tb, a.ids["live"], a.ids["csr"])
		a.ids["record"] = a.setup(tb, "POST", "/api/v1/hostnames/"+a.ids["live"]+"/records", a.key, `{"type":"TXT","text":"seed"}`, "id")[0]
	}
	cred := a.setup(tb, "POST", "/api/v1/hostnames/"+a.ids["live"]+"/acme-credential", a.key, ``, "username", "password")
	a.user, a.pass = cred[0], cred[1]
	return a
}

// setup makes an object through the API and returns the fields named of
// its answer.
func (a *fuzzAPI) setup(tb testing.TB, method, path, token, body string, fields ...string) []string {
	tb.Helper()
	status, _, b := a.do(method, path, http.Header{"Authorization": {"Bearer " + token}}, []byte(body))
	var v map[string]any
	json.Unmarshal(b, &v)
	out := make([]string, len(fields))
	for i, f := range fields {
		if out[i], _ = v[f].(string); out[i] == "" || status >= 300 {
			tb.Fatalf("%s: %s %s %s = %d %s\n%s", a.name, method, path, body, status, b, a.log)
		}
	}
	return out
}

func (a *fuzzAPI) makeLive(tb testing.TB, ids ...string) {
	tb.Helper()
	_, err := a.store.Write(context.Background(), func(ctx context.Context, tx *storage.Tx) error {
		for _, id := range ids {
			h, err := tx.Hostname(ctx, id)
			if err != nil {
				return err
			}
			h.Status = storage.StatusLive
			if err := tx.UpdateHostname(ctx, h); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// do sends one request through the server's ServeHTTP, as the listener does.
func (a *fuzzAPI) do(method, path string, h http.Header, body []byte) (int, http.Header, []byte) {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	for k, vs := range h {
		r.Header[k] = vs
	}
	w := httptest.NewRecorder()
	a.srv.ServeHTTP(w, r)
	return w.Code, w.Header(), w.Body.Bytes()
}

// codes are the error codes each status may carry.
var codes = map[int][]string{
	400: {apierror.CodeBadRequest},
	401: {apierror.CodeUnauthorized, apierror.CodeKeyExpired},
	402: {apierror.CodePaymentRequired},
	403: {apierror.CodeForbidden},
	404: {apierror.CodeNotFound},
	405: {apierror.CodeMethodNotAllowed},
	409: {apierror.CodeConflict, apierror.CodeDomainProvisioning, apierror.CodeNoDomainAvailable},
	429: {apierror.CodeRateLimited},
	501: {apierror.CodeNotImplemented},
}

// check holds an answer of route rt to the contract: never a 5xx (but 501
// where the route documents a feature this deployment may lack), every error
// the spec's {error, code} and nothing else, every success JSON.
func (a *fuzzAPI) check(t *testing.T, rt route, req string, status int, h http.Header, body []byte) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s %s\nrequest: %q\n%s\nanswer: %d %s\nlog:\n%s", a.name, rt.method, rt.path, req,
			fmt.Sprintf(format, args...), status, body, a.log)
	}
	if status >= 500 && !(status == http.StatusNotImplemented && slices.Contains(rt.errors, status)) {
		fail("a server error")
	}
	if status == http.StatusNoContent {
		if len(body) != 0 {
			fail("204 with a body")
		}
		return
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		fail("Content-Type %q", ct)
	}
	if status < 400 {
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			fail("not a JSON object: %v", err)
		}
		// DESIGN: names in responses are lowercase, without a trailing dot.
		fields := []string{"hostname", "fulldomain"}
		if strings.Contains(rt.path, "/domains") || strings.Contains(rt.path, "/records") {
			fields = append(fields, "name")
		}
		for _, f := range fields {
			if n, ok := v[f].(string); ok && (n != strings.ToLower(n) || strings.HasSuffix(n, ".")) {
				fail("%s %q is not lowercase without a trailing dot", f, n)
			}
		}
		return
	}
	var e errorBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error == "" || !slices.Contains(codes[status], e.Code) {
		fail("not {error, code} with a code for %d: %v", status, err)
	}
}

// bodyRoute is a route that decodes a JSON body, with the objects its path
// wildcards are filled with (fuzzAPI.ids keys, in order).
type bodyRoute struct {
	method, path string
	args         []string
}

// bodyRoutes are every route whose handler decodes a JSON body (the route
// table's body schemas; TestFuzzCoversBodyRoutes keeps them in step). The
// fuzz input picks one by index: append, do not reorder, or the corpus
// files ask other routes.
var bodyRoutes = []bodyRoute{
	{"POST", "/api/admin/accounts", nil},
	{"PATCH", "/api/admin/accounts/{id}", []string{"spare_account"}},
	{"POST", "/api/admin/accounts/{id}/keys", []string{"spare_account"}},
	{"POST", "/api/admin/domains", nil},
	{"PATCH", "/api/admin/domains/{id}", []string{"spare_domain"}},
	{"POST", "/api/v1/hostnames", nil},
	{"PUT", "/api/v1/hostnames/{id}", []string{"moved"}},
	{"POST", "/api/v1/hostnames/{id}/records", []string{"live"}},
	{"PUT", "/api/v1/hostnames/{id}/records/{record_id}", []string{"live", "record"}},
	{"POST", "/api/v1/hostnames/{id}/certificate", []string{"csr"}},
	{"POST", "/api/admin/accounts/{id}/tsig-keys", []string{"spare_account"}},
	{"POST", "/api/v1/tsig-keys", nil},
	{"POST", "/api/acme/register", nil},
}

// route is the served route of b, nil when a's profile does not serve it.
func (a *fuzzAPI) route(b bodyRoute) *route {
	for i, r := range a.srv.routes {
		if r.method == b.method && r.path == b.path && (r.profile == 0 || r.profile == a.srv.cfg.Profile) {
			return &a.srv.routes[i]
		}
	}
	return nil
}

// path fills b's wildcards with a's objects.
func (a *fuzzAPI) path(b bodyRoute) string {
	p := b.path
	for _, id := range b.args {
		i, j := strings.IndexByte(p, '{'), strings.IndexByte(p, '}')
		p = p[:i] + a.ids[id] + p[j+1:]
	}
	return p
}

// A NUL in the path reached the database as an id: SQLite's statement ends
// at it and PostgreSQL refuses it, both a 500.
func TestPathWithNUL(t *testing.T) {
	t.Parallel()
	for _, a := range newFuzzAPIs(t) {
		for _, tc := range []struct{ method, path, token string }{
			{"GET", "/api/v1/hostnames/%00", a.key},
			{"PUT", "/api/v1/hostnames/h%00", a.key},
			{"DELETE", "/api/v1/hostnames/%00", a.key},
			{"POST", "/api/v1/hostnames/%00/acme-credential", a.key},
			{"GET", "/api/admin/accounts/%00", fuzzAdmin},
			{"PATCH", "/api/admin/domains/%00", fuzzAdmin},
			{"DELETE", "/api/admin/keys/%00", fuzzAdmin},
			{"DELETE", "/api/admin/tsig-keys/%00", fuzzAdmin},
			{"DELETE", "/api/v1/tsig-keys/%00", a.key},
		} {
			a.log.Reset()
			status, h, body := a.do(tc.method, tc.path, http.Header{"Authorization": {"Bearer " + tc.token}}, []byte(`{"ip":"192.0.2.9"}`))
			if status != http.StatusNotFound {
				t.Errorf("%s: %s %s = %d %s, want 404\n%s", a.name, tc.method, tc.path, status, body, a.log)
				continue
			}
			_, pattern := a.srv.mux.Handler(httptest.NewRequest(tc.method, tc.path, nil))
			method, path, _ := strings.Cut(pattern, " ")
			a.check(t, route{method: method, path: path}, tc.path, status, h, body)
		}
	}
}

func TestFuzzCoversBodyRoutes(t *testing.T) {
	t.Parallel()
	s := New(Config{Profile: 2}, hostnames.Rules{}, nil, nil, nil, slog.New(slog.DiscardHandler))
	for _, r := range s.routes {
		if r.body == "" {
			continue
		}
		if !slices.ContainsFunc(bodyRoutes, func(b bodyRoute) bool { return b.method == r.method && b.path == r.path }) {
			t.Errorf("%s %s takes a JSON body (%s) but FuzzRequestBody does not send it any", r.method, r.path, r.body)
		}
	}
}

// bodySeeds are bodies sent to every route: JSON that is broken, of the
// wrong shape, too big, or valid with bytes a database may refuse.
var bodySeeds = []string{
	``, `null`, `{}`, `[]`, `"x"`, `1e999`, `{`, `{}{}`, `{} x`, `{"unknown":1}`, "\xff\xfe", `{"a":"\ud800"}`,
	strings.Repeat("[", 3000) + strings.Repeat("]", 3000), `{"name":` + strings.Repeat(" ", 4100) + `"x"}`,
	`{"name":"a\u0000b","plan":"free"}`, `{"name":"\u00ff\uffff","plan":"team"}`,
}

// routeSeeds are bodies for one route each: valid ones, and each field
// with the wrong type, out of range, or holding awkward bytes.
var routeSeeds = map[int][]string{
	0: {`{"name":"a","plan":"free"}`, `{"name":"a","plan":"pro","cap":3,"billing":false}`, `{"name":"a","plan":"free","cap":-1}`,
		`{"name":"a","plan":"free","cap":99999999999999999999}`, `{"name":"a","plan":"free","cap":9223372036854775807}`,
		`{"name":"a","plan":"free","cap":1.5}`, `{"name":1,"plan":"free"}`, `{"name":"` + strings.Repeat("n", 201) + `","plan":"free"}`,
		`{"name":"a","plan":"Free"}`, `{"name":"a","plan":"team_x-1"}`, `{"name":"a","plan":null}`, `{"name":"a","plan":"free","billing":"yes"}`},
	1: {`{"plan":"business"}`, `{"cap":0}`, `{"cap":2147483648}`, `{"billing":false}`, `{"name":""}`, `{"name":"a\u0000"}`},
	2: {`{"name":"ci"}`, `{"scopes":[{"scope":"hostnames:read"}]}`, `{"scopes":[{"scope":"dns01:write","domain":"example.org"}]}`,
		`{"scopes":[{"scope":"hostnames:write","hostname":"h_nope"}]}`, `{"scopes":[{"scope":"root"}]}`, `{"scopes":[]}`,
		`{"scopes":null}`, `{"scopes":[{}]}`, `{"expires_at":"2999-01-01T00:00:00Z"}`, `{"expires_at":"2000-01-01T00:00:00Z"}`,
		`{"expires_at":"tomorrow"}`, `{"expires_at":"10000-01-01T00:00:00Z"}`, `{"expires_at":"2999-01-01T00:00:00+99:00"}`,
		`{"expires_at":1}`, `{"name":"\u0000"}`},
	3: {`{"name":"new.example"}`, `{"name":"example.org"}`, `{"name":"EXAMPLE.org."}`, `{"name":"example.org.."}`,
		`{"name":"x.example","status":"provisioning"}`, `{"name":"y.example","status":"gone"}`, `{"name":"z.example","account_id":"nope"}`,
		`{"name":"z.example","account_id":"a\u0000"}`, `{"name":"c.example","caa":["0 issue \"letsencrypt.org\""]}`,
		`{"name":"d.example","dnssec":true}`, `{"name":"\u212aelvin.example"}`, `{"name":"org"}`},
	4: {`{"status":"provisioning"}`, `{"status":"active"}`, `{"caa":["0 issue \"ca.example\"","128 iodef \"mailto:a@b.example\""]}`,
		`{"caa":[]}`, `{"caa":["0 issue ca.example"]}`, `{"caa":["0 issue \"a\\\\b\""]}`, `{"caa":["0 issue \"x\" ; y"]}`,
		`{"dnssec":true}`, `{"dnssec":false}`, `{"ds_published":true}`, `{"name":"rename.example"}`, `{"account_id":""}`},
	5: {`{"ip":"192.0.2.9"}`, `{"ip":"203.0.113.9","label":"custom-1"}`, `{"ip":"10.0.0.1","subdomain":"my-app"}`,
		`{"ip":"2001:db8::9","certificate":"managed","ca":"google"}`, `{"ip":"192.0.2.9","certificate":"csr"}`,
		`{"ip":"fe80::1%eth0"}`, `{"ip":"::ffff:192.0.2.9"}`, `{"ip":""}`, `{"ip":null}`, `{"ip":"192.0.2.9","domain":"nope.example"}`,
		`{"ip":"192.0.2.9","subdomain":"Ab\u0000"}`, `{"ip":"192.0.2.9","label":"xn--abc"}`},
	6: {`{"ip":"192.0.2.10"}`, `{"ip":"10.1.1.1"}`, `{"target":"svc.example.net"}`, `{"ip":"192.0.2.10","target":"x.example"}`,
		`{"target":"-bad-"}`, `{"ip":"1.2.3"}`, `{"ip":["192.0.2.10"]}`},
	7: {`{"type":"TXT","text":"v=spf1 -all"}`, `{"type":"MX","preference":10,"exchange":"mail.example.org"}`,
		`{"type":"TLSA","name":"_443._tcp","usage":3,"selector":1,"matching_type":1,"association":"` + strings.Repeat("0f", 32) + `"}`,
		`{"type":"CAA","tag":"issue","value":"ca.example"}`, `{"type":"TXT","name":"sub","text":["a","b"]}`,
		`{"type":"TXT","text":"a\u0000"}`, `{"type":"TXT","name":"a\u0000","text":"x"}`, `{"type":"HTTPS","priority":1,"target":".","params":{"alpn":["h2"]}}`,
		`{"type":"SRV","name":"_sip._tcp","priority":1,"weight":1,"port":5060,"target":"sip.example.net"}`,
		`{"type":"SSHFP","algorithm":4,"fptype":2,"fingerprint":"` + strings.Repeat("ab", 32) + `"}`, `{"type":"A"}`},
	8: {`{"type":"TXT","text":"changed"}`, `{"type":"TXT","name":"","text":"changed"}`, `{"type":"TXT","name":"other","text":"x"}`,
		`{"type":"MX","preference":1,"exchange":"m.example.org"}`, `{"type":"TXT","text":["a","b"]}`, `{"type":"TXT","text":"` + strings.Repeat("x", 256) + `"}`},
	9: {`{"csr":""}`, `{"csr":"-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n"}`, `{"csr":"not pem"}`,
		`{"csr":1}`, `{"csr":"\u0000"}`},
}

// FuzzRequestBody sends arbitrary bodies to every route that decodes JSON,
// through the real handler, on SQLite and PostgreSQL, profile 1 and 2, with
// the caller authorised and the objects in the path existing, so the body
// gets past authentication to the decoder and the rules behind it.
func FuzzRequestBody(f *testing.F) {
	for i := range bodyRoutes {
		for _, b := range bodySeeds {
			f.Add(uint8(i), []byte(b))
		}
		for _, b := range routeSeeds[i] {
			f.Add(uint8(i), []byte(b))
		}
	}
	apis := newFuzzAPIs(f)
	f.Fuzz(func(t *testing.T, pick uint8, body []byte) {
		b := bodyRoutes[int(pick)%len(bodyRoutes)]
		for _, a := range apis {
			rt := a.route(b)
			if rt == nil {
				continue
			}
			token := a.key
			if rt.auth == authAdmin {
				token = fuzzAdmin
			}
			a.log.Reset()
			status, h, resp := a.do(b.method, a.path(b), http.Header{
				"Authorization": {"Bearer " + token}, "Content-Type": {"application/json"}}, body)
			a.check(t, *rt, string(body), status, h, resp)
		}
	})
}
