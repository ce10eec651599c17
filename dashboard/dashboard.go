// Package dashboard is Hostmint's web dashboard, served under /dashboard/ on
// the API's listener: the operator's view (accounts, domains, sign-in links)
// and a team's view (hostnames, usage against the cap, API keys, TSIG
// keys). Pages are rendered on the server from embedded templates and work
// without JavaScript; the one script only adds copy buttons.
//
// Every form post calls the same rules the API's handlers call (accounts,
// hostnames, domains), so what is allowed and the error messages are the
// API's. dashboard holds no rules of its own and never touches SQL.
package dashboard

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/audit"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/ratelimit"
)

// Prefix is where the dashboard is served.
const Prefix = "/dashboard/"

// signinLinkPath is the page a sign-in link opens (under Prefix).
const signinLinkPath = accounts.SigninLinkPath

// Config is what the dashboard needs besides the rules.
type Config struct {
	Profile    profile.Profile
	BaseURL    string // an https origin makes the cookies Secure
	AdminToken string
	// Audit records the writes of form posts; nil records nothing.
	Audit *audit.Log
	// Address is the client's address for the audit log (as the API
	// takes it, behind trusted proxies); nil: unknown.
	Address func(*http.Request) string
	// TLS reports whether a request reached the service over TLS (through
	// a trusted proxy too): its cookies are then Secure whatever BaseURL
	// says; nil: only an https BaseURL makes them Secure.
	TLS func(*http.Request) bool
	// Guesses throttles wrong admin tokens at sign-in, with the API's;
	// nil: a throttle of the dashboard's own.
	Guesses *ratelimit.Guesses
	// DNSAddr is the DNS server's "host:port" as a TSIG key's snippets
	// name it; empty: the placeholders NAMESERVER and 53.
	DNSAddr string
	// TSIGServed waits (briefly) until this node's DNS servers verify
	// signatures of the TSIG key named name, as the API's does; nil: the
	// key is shown at once.
	TSIGServed func(ctx context.Context, name string)
}

// Handler serves the dashboard.
type Handler struct {
	cfg       Config
	accounts  *accounts.Service
	hostnames *hostnames.Service // the lifecycle
	records   *hostnames.Records
	certs     *hostnames.Certificates
	abuse     *hostnames.Abuse
	diagnoser *hostnames.Diagnoser
	domains   *domains.Service
	log       *slog.Logger
	mux       *http.ServeMux
	secure    bool
	grants    sync.Map // an operator session's grant -> whether it is this admin token's
}

// maxForm bounds a form post; the largest form is a few hundred bytes.
const maxForm = 16 << 10

// requestTimeout bounds the work of one request, as the API's does.
const requestTimeout = 10 * time.Second

// New builds the dashboard's handler.
func New(cfg Config, a *accounts.Service, h hostnames.Rules, d *domains.Service, log *slog.Logger) *Handler {
	if cfg.Guesses == nil {
		cfg.Guesses = ratelimit.NewGuesses()
	}
	dh := &Handler{cfg: cfg, accounts: a, hostnames: h.Lifecycle, records: h.Records, certs: h.Certificates, abuse: h.Abuse,
		diagnoser: h.Diagnoser, domains: d, log: log, mux: http.NewServeMux(),
		secure: strings.HasPrefix(strings.ToLower(cfg.BaseURL), "https://")}
	m := dh.mux
	m.HandleFunc("GET "+Prefix+"{$}", dh.home)
	// One file name, never a directory: the file server would list one.
	m.Handle("GET "+Prefix+"static/{file}", http.StripPrefix(Prefix+"static/", http.FileServerFS(staticFS)))
	m.HandleFunc("GET "+Prefix+"signin", dh.signinPage)
	m.HandleFunc("POST "+Prefix+"signin", dh.operatorSignin)
	m.HandleFunc("GET "+signinLinkPath, dh.linkPage)
	m.HandleFunc("POST "+signinLinkPath, dh.redeemLink)
	m.HandleFunc("POST "+Prefix+"signout", dh.session(anyone, dh.signout))
	m.HandleFunc("GET "+Prefix+"operator", dh.session(operatorOnly, dh.operatorPage))
	m.HandleFunc("POST "+Prefix+"operator/accounts", dh.session(operatorOnly, dh.createAccount))
	m.HandleFunc("POST "+Prefix+"operator/domains", dh.session(operatorOnly, dh.createDomain))
	m.HandleFunc("POST "+Prefix+"operator/accounts/{id}/signin-link", dh.session(operatorOnly, dh.issueLink))
	m.HandleFunc("GET "+Prefix+"operator/domains/{id}", dh.session(operatorOnly, dh.opDomainPage))
	m.HandleFunc("POST "+Prefix+"operator/domains/{id}/dnssec", dh.session(operatorOnly, dh.enableDNSSEC))
	m.HandleFunc("POST "+Prefix+"operator/domains/{id}/ds-published", dh.session(operatorOnly, dh.markDSPublished))
	m.HandleFunc("POST "+Prefix+"operator/domains/{id}/caa", dh.session(operatorOnly, dh.setCAA))
	m.HandleFunc("GET "+Prefix+"operator/accounts/{id}", dh.session(operatorOnly, dh.opAccountPage))
	m.HandleFunc("POST "+Prefix+"operator/accounts/{id}", dh.session(operatorOnly, dh.opChangeAccount))
	m.HandleFunc("POST "+Prefix+"operator/accounts/{id}/keys/{key}/revoke", dh.session(operatorOnly, dh.opRevokeKey))
	m.HandleFunc("POST "+Prefix+"operator/accounts/{id}/access", dh.session(operatorOnly, dh.opChangeAccess))
	m.HandleFunc("GET "+Prefix+"operator/accounts/{id}/close", dh.session(operatorOnly, dh.opConfirmClose))
	m.HandleFunc("POST "+Prefix+"operator/accounts/{id}/close", dh.session(operatorOnly, dh.opClose))
	m.HandleFunc("POST "+Prefix+"operator/accounts/{id}/sessions/end", dh.session(operatorOnly, dh.opEndAll))
	m.HandleFunc("POST "+Prefix+"operator/accounts/{id}/sessions/{session}/end", dh.session(operatorOnly, dh.opEndSession))
	m.HandleFunc("POST "+Prefix+"operator/accounts/{id}/signin-links/{link}/end", dh.session(operatorOnly, dh.opEndLink))
	m.HandleFunc("GET "+Prefix+"operator/find", dh.session(operatorOnly, dh.opFindPage))
	m.HandleFunc("GET "+Prefix+"operator/audit", dh.session(operatorOnly, dh.opAuditPage))
	m.HandleFunc("GET "+Prefix+"operator/acme-registrations", dh.session(operatorOnly, dh.opRegistrationsPage))
	m.HandleFunc("POST "+Prefix+"operator/acme-registrations/{username}/delete", dh.session(operatorOnly, dh.opDeleteRegistration))
	if cfg.Profile.Teams() { // the abuse actions are [P2], as their API routes are
		m.HandleFunc("GET "+Prefix+"operator/hostnames", dh.session(operatorOnly, dh.opHostnamesPage))
		m.HandleFunc("POST "+Prefix+"operator/hostnames/{id}/suspend", dh.session(operatorOnly, dh.opSuspend))
		m.HandleFunc("POST "+Prefix+"operator/hostnames/{id}/restore", dh.session(operatorOnly, dh.opRestore))
		m.HandleFunc("GET "+Prefix+"operator/hostnames/{id}/terminate", dh.session(operatorOnly, dh.opConfirmTerminate))
		m.HandleFunc("POST "+Prefix+"operator/hostnames/{id}/terminate", dh.session(operatorOnly, dh.opTerminate))
	}
	m.HandleFunc("GET "+Prefix+"team", dh.session(teamOnly, dh.teamPage))
	m.HandleFunc("POST "+Prefix+"team/keys", dh.session(teamOnly, dh.createKey))
	m.HandleFunc("POST "+Prefix+"team/keys/{id}/revoke", dh.session(teamOnly, dh.revokeKey))
	m.HandleFunc("POST "+Prefix+"team/tsig-keys", dh.session(teamOnly, dh.createTSIGKey))
	m.HandleFunc("POST "+Prefix+"team/tsig-keys/{id}/revoke", dh.session(teamOnly, dh.revokeTSIGKey))
	m.HandleFunc("POST "+Prefix+"team/hostnames", dh.session(teamOnly, dh.createHostname))
	m.HandleFunc("GET "+Prefix+"team/hostnames/{id}", dh.session(teamOnly, dh.hostnamePage))
	m.HandleFunc("POST "+Prefix+"team/hostnames/{id}/update", dh.session(teamOnly, dh.updateHostname))
	m.HandleFunc("POST "+Prefix+"team/hostnames/{id}/renew", dh.session(teamOnly, dh.renewHostname))
	m.HandleFunc("POST "+Prefix+"team/hostnames/{id}/release", dh.session(teamOnly, dh.releaseHostname))
	m.HandleFunc("POST "+Prefix+"team/hostnames/{id}/records", dh.session(teamOnly, dh.createRecord))
	m.HandleFunc("GET "+Prefix+"team/hostnames/{id}/records/{record}/edit", dh.session(teamOnly, dh.editRecordPage))
	m.HandleFunc("POST "+Prefix+"team/hostnames/{id}/records/{record}/edit", dh.session(teamOnly, dh.updateRecord))
	m.HandleFunc("POST "+Prefix+"team/hostnames/{id}/records/{record}/delete", dh.session(teamOnly, dh.deleteRecord))
	m.HandleFunc("POST "+Prefix+"team/hostnames/{id}/credential", dh.session(teamOnly, dh.createCredential))
	m.HandleFunc("POST "+Prefix+"team/hostnames/{id}/diagnose", dh.session(teamOnly, dh.runDiagnose))
	return dh
}

// ServeHTTP answers a dashboard request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	// Nothing from elsewhere: no CDN, no inline script, no framing; a sign-in
	// link in the address bar is not sent on as a Referer.
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	if _, pattern := h.mux.Handler(r); pattern == "" {
		h.status(w, http.StatusNotFound, "Not found", "There is no dashboard page at "+r.URL.Path+".")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Mount serves the dashboard under Prefix and every other path from api,
// whose answers (its own 404s and 405s included) stay exactly as they were.
func Mount(api, dash http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == strings.TrimSuffix(Prefix, "/") || strings.HasPrefix(p, Prefix) {
			dash.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// home sends a browser where its session belongs.
func (h *Handler) home(w http.ResponseWriter, r *http.Request) {
	sess, _, err := h.current(r)
	switch {
	case err != nil && err != accounts.ErrNoSession:
		h.failed(w, r, err)
	case sess == nil:
		http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
	case sess.Operator():
		http.Redirect(w, r, Prefix+"operator", http.StatusSeeOther)
	default:
		http.Redirect(w, r, Prefix+"team", http.StatusSeeOther)
	}
}
