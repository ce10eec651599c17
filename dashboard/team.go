package dashboard

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/storage"
)

// listed is how many hostnames the team view shows at once, newest first;
// "Older hostnames" pages on through the rest.
const listed = 100

type hostnameRow struct {
	storage.Hostname
	State string // as the API reports it at this moment (expired is derived)
}

type keyRow struct {
	storage.APIKey
	Grants []string // "hostnames:read on the whole team"
}

// reachOption is a choice of the key form's reach select.
type reachOption struct{ Value, Label string }

// newKey is a created key, its secret shown once.
type newKey struct{ Name, Token string }

type teamView struct {
	CSRF      string
	Account   *storage.Account
	Hostnames []hostnameRow
	Skip      int // how many newer hostnames the page leaves out
	Pager     pager
	Active    int
	Cap       int
	Keys      []keyRow
	Scopes    []string
	Reaches   []reachOption
	KeyForm   *form
	NewKey    *newKey
	TSIGKeys  []tsigRow
	TSIGForm  *form
	NewTSIG   *newTSIG
	Algs      []string // the TSIG form's algorithms
	HostForm  *form    // the new-hostname form
	Domains   []string // [P2] the team's domains, for that form
	CertModes []string // [P2]
}

// grantsView is what the scope and reach fields of a key form show: the
// API key's and the TSIG key's forms take the same grants.
type grantsView struct {
	ID      string // the fields' id prefix: "key", "tsig"
	Form    *form
	Scopes  []string
	Reaches []reachOption
}

// Grants is the scope and reach fields of the key form f, ids prefixed id.
func (v teamView) Grants(id string, f *form) grantsView {
	return grantsView{ID: id, Form: f, Scopes: v.Scopes, Reaches: v.Reaches}
}

// principal is who a team member acts as: the whole team with every scope,
// as the team's own unscoped keys do.
func principal(s *accounts.Session) *access.Principal {
	return &access.Principal{AccountID: s.AccountID, Scopes: access.All()}
}

func (h *Handler) teamPage(w http.ResponseWriter, r *http.Request, v *visit) {
	skip, ok := skipOf(r.URL.Query().Get("skip"))
	if !ok {
		h.badSkip(w)
		return
	}
	h.renderTeam(w, r, v, http.StatusOK, teamView{Skip: skip})
}

// teamPageURL is the team view's page that skips the newest skip hostnames.
func teamPageURL(skip int) string {
	if skip == 0 {
		return Prefix + "team"
	}
	return Prefix + "team?skip=" + strconv.Itoa(skip)
}

func (h *Handler) renderTeam(w http.ResponseWriter, r *http.Request, v *visit, status int, tv teamView) {
	ctx, p := r.Context(), principal(v.sess)
	acct, err := h.accounts.Get(ctx, v.sess.AccountID)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	tv.Account = acct
	// One more than shown: [P1] lists count nothing, so the extra row is
	// what tells whether older ones follow.
	page, err := h.hostnames.List(ctx, p, listed+1, tv.Skip)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	more := len(page.Hostnames) > listed
	page.Hostnames = page.Hostnames[:min(len(page.Hostnames), listed)]
	total := -1
	if h.cfg.Profile.Teams() {
		total = page.Total
	}
	tv.Pager = newPager(tv.Skip, listed, len(page.Hostnames), total, more, teamPageURL)
	now := time.Now()
	names := map[string]string{}
	for _, hn := range page.Hostnames {
		tv.Hostnames = append(tv.Hostnames, hostnameRow{Hostname: hn, State: h.hostnames.Status(&hn, now)})
		names[hn.ID] = hn.Name
	}
	if tv.Active, tv.Cap, err = h.hostnames.Usage(ctx, acct.ID); err != nil {
		h.failed(w, r, err)
		return
	}
	ks, err := h.accounts.Keys(ctx, acct.ID)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	for _, k := range ks {
		tv.Keys = append(tv.Keys, keyRow{APIKey: k, Grants: grants(access.ParseScopes(k.Scopes), names)})
	}
	ts, err := h.accounts.TSIGKeys(ctx, acct.ID, nil)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	for _, k := range ts {
		tv.TSIGKeys = append(tv.TSIGKeys, tsigRow{TSIGKey: k, Grants: grants(access.ParseScopes(k.Scopes), names)})
	}
	if h.cfg.Profile.Teams() {
		tv.Scopes = []string{access.HostnamesRead, access.HostnamesWrite, access.DNS01Write}
		tv.Reaches = []reachOption{{"team", "The whole team"}}
		ds, err := h.hostnames.TeamDomains(ctx, p)
		if err != nil {
			h.failed(w, r, err)
			return
		}
		tv.CertModes = []string{hostnames.CertSelf, hostnames.CertManaged, hostnames.CertCSR}
		for _, d := range ds {
			tv.Domains = append(tv.Domains, d.Name)
			tv.Reaches = append(tv.Reaches, reachOption{"domain:" + d.Name, "Domain " + d.Name})
		}
		for _, hn := range page.Hostnames {
			tv.Reaches = append(tv.Reaches, reachOption{"hostname:" + hn.ID, "Hostname " + hn.Name})
		}
	}
	if tv.KeyForm == nil {
		tv.KeyForm = newForm()
		tv.KeyForm.Values["scope"] = strings.Join(tv.Scopes, "\n")
		tv.KeyForm.Values["reach"] = "team"
	}
	if tv.TSIGForm == nil {
		tv.TSIGForm = newForm()
		tv.TSIGForm.Values["scope"] = strings.Join(tv.Scopes, "\n")
		tv.TSIGForm.Values["reach"] = "team"
		tv.TSIGForm.Values["algorithm"] = accounts.HMACSHA256
	}
	tv.Algs = []string{accounts.HMACSHA256, accounts.HMACSHA512}
	if tv.HostForm == nil {
		tv.HostForm = newForm()
	}
	tv.CSRF = v.csrf
	h.render(w, status, "team", layout{Title: acct.Name, Who: acct.Name, CSRF: v.csrf, Page: tv})
}

// grants describes a key's scopes, hostnames by name where the team view
// knows it.
func grants(scopes []access.Scope, names map[string]string) []string {
	var out []string
	for _, s := range scopes {
		reach := "the whole team"
		switch {
		case s.Hostname != "":
			reach = "hostname " + s.Hostname
			if n := names[s.Hostname]; n != "" {
				reach = "hostname " + n
			}
		case s.Domain != "":
			reach = "domain " + s.Domain
		}
		out = append(out, s.Scope+" on "+reach)
	}
	return out
}

// scopesOf reads the scope checkboxes and the reach select of a key form
// (an API key's, a TSIG key's) into f, and returns the scopes they grant:
// [P2] only; [P1] keys are the whole account's.
func (h *Handler) scopesOf(r *http.Request, f *form) []access.Scope {
	f.Values["reach"] = r.PostFormValue("reach")
	f.Values["scope"] = strings.Join(r.PostForm["scope"], "\n")
	if !h.cfg.Profile.Teams() {
		return nil
	}
	if len(r.PostForm["scope"]) == 0 {
		f.Errors["scope"] = "choose at least one scope"
	}
	var reach access.Scope
	switch kind, val, _ := strings.Cut(f.Values["reach"], ":"); kind {
	case "team":
	case "domain":
		reach.Domain = val
	case "hostname":
		reach.Hostname = val
	default:
		f.Errors["reach"] = "choose the whole team, one domain or one hostname"
	}
	var out []access.Scope
	for _, s := range r.PostForm["scope"] {
		out = append(out, access.Scope{Scope: s, Domain: reach.Domain, Hostname: reach.Hostname})
	}
	return out
}

// keyFields: the API field a rule's message starts with, and the form field.
var keyFields = map[string]string{"name": "name", "scopes": "scope", "expires_at": "lifetime"}

// maxLifetimeDays keeps expires_at within what a date can hold in every
// database and browser; ten years is longer than any key should live.
const maxLifetimeDays = 3650

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, v *visit) {
	f := newForm()
	f.Values["name"] = strings.TrimSpace(r.PostFormValue("name"))
	f.Values["lifetime"] = strings.TrimSpace(r.PostFormValue("lifetime"))
	in := accounts.KeyInput{Name: f.Values["name"], Scopes: h.scopesOf(r, f)}
	if d := f.Values["lifetime"]; d != "" {
		days, err := strconv.Atoi(d)
		if err != nil || days < 1 || days > maxLifetimeDays {
			f.Errors["lifetime"] = "lifetime must be a whole number of days from 1 to 3650, or empty for a key that does not expire"
		} else {
			exp := time.Now().Add(time.Duration(days) * 24 * time.Hour)
			in.ExpiresAt = &exp
		}
	}
	if f.Failed() {
		h.renderTeam(w, r, v, http.StatusBadRequest, teamView{KeyForm: f})
		return
	}
	k, err := h.accounts.CreateKey(r.Context(), v.sess.AccountID, in)
	if err != nil {
		status, ok := f.fail(err, keyFields)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.renderTeam(w, r, v, status, teamView{KeyForm: f})
		return
	}
	h.log.Info("dashboard: API key created", "account", v.sess.AccountID, "key", k.Key.ID)
	h.renderTeam(w, r, v, http.StatusCreated, teamView{NewKey: &newKey{Name: k.Key.Name, Token: k.Token}})
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	if err := h.accounts.RevokeAccountKey(r.Context(), v.sess.AccountID, id); err != nil {
		h.failed(w, r, err)
		return
	}
	h.log.Info("dashboard: API key revoked", "account", v.sess.AccountID, "key", id)
	http.Redirect(w, r, Prefix+"team", http.StatusSeeOther)
}
