package dashboard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/storage"
)

// A team's TSIG keys: credentials for DNS UPDATE beside its API keys, with
// the same scopes and reach. The secret is shown once, in the files that
// nsupdate and certbot-dns-rfc2136 read.

type tsigRow struct {
	storage.TSIGKey
	Grants []string
}

// newTSIG is a created TSIG key, its secret shown once with the files
// that use it.
type newTSIG struct {
	Name, KeyName, Secret string
	KeyFile               string // nsupdate's -k file
	KeyPath               string // a name to save it as
	Server                string // nsupdate's "server" line
	Certbot               string // certbot-dns-rfc2136's credentials INI
}

// tsigFields: the API field a rule's message starts with, and the form field.
var tsigFields = map[string]string{"name": "name", "scopes": "scope", "algorithm": "algorithm"}

func (h *Handler) createTSIGKey(w http.ResponseWriter, r *http.Request, v *visit) {
	f := newForm()
	f.Values["name"] = strings.TrimSpace(r.PostFormValue("name"))
	f.Values["algorithm"] = r.PostFormValue("algorithm")
	in := accounts.TSIGInput{Name: f.Values["name"], Algorithm: f.Values["algorithm"], Scopes: h.scopesOf(r, f)}
	if f.Failed() {
		h.renderTeam(w, r, v, http.StatusBadRequest, teamView{TSIGForm: f})
		return
	}
	// by is nil: the session acts for the whole team, as its API keys'
	// creation does.
	k, err := h.accounts.CreateTSIGKey(r.Context(), v.sess.AccountID, nil, in)
	if err != nil {
		status, ok := f.fail(err, tsigFields)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.renderTeam(w, r, v, status, teamView{TSIGForm: f})
		return
	}
	if h.cfg.TSIGServed != nil {
		// This node's DNS servers take the key before it is shown, so that
		// the first UPDATE signed with it is verified.
		h.cfg.TSIGServed(r.Context(), k.Key.KeyName)
	}
	h.log.Info("dashboard: TSIG key created", "account", v.sess.AccountID, "key", k.Key.ID)
	h.renderTeam(w, r, v, http.StatusCreated, teamView{NewTSIG: h.tsigFiles(k)})
}

func (h *Handler) revokeTSIGKey(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	if err := h.accounts.RevokeTSIGKey(r.Context(), v.sess.AccountID, nil, id); err != nil {
		h.failed(w, r, err)
		return
	}
	h.log.Info("dashboard: TSIG key revoked", "account", v.sess.AccountID, "key", id)
	http.Redirect(w, r, Prefix+"team", http.StatusSeeOther)
}

// tsigFiles writes a new key into nsupdate's key file and certbot's
// credentials. certbot takes the algorithm in upper case only: given
// "hmac-sha256" it falls back to HMAC-MD5 without a word.
func (h *Handler) tsigFiles(k *accounts.NewTSIGKey) *newTSIG {
	name := k.Key.KeyName + "." // stored without the root's dot
	host, port := h.dnsServer()
	return &newTSIG{
		Name: k.Key.Name, KeyName: name, Secret: k.Secret,
		KeyFile: fmt.Sprintf("key %q {\n    algorithm %s;\n    secret %q;\n};\n", name, k.Key.Algorithm, k.Secret),
		KeyPath: k.Key.KeyName + ".key",
		Server:  "server " + host + " " + port,
		Certbot: fmt.Sprintf("dns_rfc2136_server = %s\ndns_rfc2136_port = %s\ndns_rfc2136_name = %s\n"+
			"dns_rfc2136_secret = %s\ndns_rfc2136_algorithm = %s\n",
			host, port, name, k.Secret, strings.ToUpper(k.Key.Algorithm)),
	}
}

// dnsServer is the DNS server's host and port for the snippets: a
// listener's address (":53", "0.0.0.0:53") names no host a client can
// reach, so the placeholder stands in for what is not known.
func (h *Handler) dnsServer() (host, port string) {
	host, port = "NAMESERVER", "53"
	a := h.cfg.DNSAddr
	if a == "" {
		return host, port
	}
	hh, pp, err := net.SplitHostPort(a)
	if err != nil { // a host without a port
		hh, pp = strings.Trim(a, "[]"), ""
	}
	if ip, err := netip.ParseAddr(hh); hh != "" && (err != nil || !ip.IsUnspecified()) {
		host = hh
	}
	if pp != "" {
		port = pp
	}
	return host, port
}
