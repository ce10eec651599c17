package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/storage"
)

type accountRow struct {
	storage.Account
	Cap   int    // the override or the plan's
	State string // storage.Account.Access now
}

type domainRow struct {
	storage.Domain
	Owner string // the team's name, "" for a pool domain
}

// issuedLink is a sign-in link, shown once, right after it is made.
type issuedLink struct {
	Account   string
	URL       string
	ExpiresAt time.Time
}

// opAccountsListed is how many accounts the operator's page shows at once,
// newest first.
const opAccountsListed = 100

type operatorView struct {
	CSRF        string
	Accounts    []accountRow
	Filter      accounts.PageQuery // the list's filters and page
	States      []string           // what the status filter offers
	Older       string             // the next page's URL, "" on the last
	Newest      string             // the first page's URL, with the filters
	Domains     []domainRow
	Plans       []string // [P1] the plans to choose from
	AccountForm *form
	DomainForm  *form
	Link        *issuedLink
}

// operatorPage shows accounts and domains; forms in v are kept (with their
// errors) when a post re-renders it.
func (h *Handler) operatorPage(w http.ResponseWriter, r *http.Request, v *visit) {
	h.renderOperator(w, r, v, http.StatusOK, operatorView{})
}

func (h *Handler) renderOperator(w http.ResponseWriter, r *http.Request, v *visit, status int, ov operatorView) {
	q := r.URL.Query()
	ov.Filter = accounts.PageQuery{Name: q.Get("name"), Status: q.Get("status"), Cursor: q.Get("cursor"), Limit: opAccountsListed}
	page, err := h.accounts.Page(r.Context(), ov.Filter)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	ds, err := h.domains.List(r.Context())
	if err != nil {
		h.failed(w, r, err)
		return
	}
	now := time.Now().UnixMilli()
	for _, a := range page.Accounts {
		ov.Accounts = append(ov.Accounts, accountRow{Account: a, Cap: h.hostnames.Cap(&a), State: a.Access(now)})
	}
	ov.Newest = opAccountsURL(ov.Filter, "")
	if page.Next != "" {
		ov.Older = opAccountsURL(ov.Filter, page.Next)
	}
	var ids []string // the teams of dedicated domains
	for _, d := range ds {
		if d.AccountID != "" {
			ids = append(ids, d.AccountID)
		}
	}
	owners, err := h.accounts.Names(r.Context(), ids)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	for _, d := range ds {
		ov.Domains = append(ov.Domains, domainRow{Domain: d, Owner: owners[d.AccountID]})
	}
	ov.States = storage.AccountStates
	ov.Plans = h.plans()
	if ov.AccountForm == nil {
		ov.AccountForm = newForm()
		ov.AccountForm.Values["billing"] = "on"
		if h.cfg.Profile.Teams() {
			ov.AccountForm.Values["plan"] = "team"
		}
	}
	if ov.DomainForm == nil {
		ov.DomainForm = newForm()
	}
	ov.CSRF = v.csrf
	h.render(w, status, "operator", layout{Title: "Operator", Who: "Operator", CSRF: v.csrf, Operator: true, Page: ov})
}

// The API field a rule's message starts with, and the form field it belongs to.
var (
	accountFields = map[string]string{"name": "name", "plan": "plan", "cap": "cap", "billing": "billing"}
	domainFields  = map[string]string{"name": "name", "domain": "name", "status": "name", "account_id": "owner"}
)

func (h *Handler) createAccount(w http.ResponseWriter, r *http.Request, v *visit) {
	f := newForm()
	for _, k := range []string{"name", "plan", "cap", "billing"} {
		f.Values[k] = strings.TrimSpace(r.PostFormValue(k))
	}
	name, plan := f.Values["name"], f.Values["plan"]
	in := accounts.Input{Name: &name, Plan: &plan}
	if h.cfg.Profile.Teams() {
		billing := f.Values["billing"] != ""
		in.Billing = &billing
	}
	if c := f.Values["cap"]; c != "" {
		// 32 bits, as the API takes it: the column is 32 bits on PostgreSQL.
		n, err := strconv.ParseInt(c, 10, 32)
		if err != nil || n < 0 {
			f.Errors["cap"] = "cap must be a whole number from 0 to 2147483647, or empty for the plan's"
			h.renderOperator(w, r, v, http.StatusBadRequest, operatorView{AccountForm: f})
			return
		}
		capacity := int(n)
		in.Cap = &capacity
	}
	if _, err := h.accounts.Create(r.Context(), in); err != nil {
		status, ok := f.fail(err, accountFields)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.renderOperator(w, r, v, status, operatorView{AccountForm: f})
		return
	}
	http.Redirect(w, r, Prefix+"operator", http.StatusSeeOther)
}

func (h *Handler) createDomain(w http.ResponseWriter, r *http.Request, v *visit) {
	f := newForm()
	f.Values["name"] = strings.TrimSpace(r.PostFormValue("name"))
	f.Values["owner"] = r.PostFormValue("owner")
	name, owner := f.Values["name"], f.Values["owner"]
	in := domains.Input{Name: &name}
	if owner != "" {
		in.AccountID = &owner
	}
	if _, err := h.domains.Create(r.Context(), in); err != nil {
		status, ok := f.fail(err, domainFields)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.renderOperator(w, r, v, status, operatorView{DomainForm: f})
		return
	}
	http.Redirect(w, r, Prefix+"operator", http.StatusSeeOther)
}

// issueLink makes a sign-in link and shows it in this answer only, as the
// API's answer is the only place it appears.
func (h *Handler) issueLink(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	a, err := h.accounts.Get(r.Context(), id)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	token, exp, err := h.accounts.CreateSigninLink(r.Context(), id)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	h.log.Info("dashboard: sign-in link issued", "account", id)
	h.renderOperator(w, r, v, http.StatusCreated, operatorView{Link: &issuedLink{Account: a.Name, URL: accounts.SigninURL(h.cfg.BaseURL, token), ExpiresAt: exp}})
}

func (h *Handler) renderOp(w http.ResponseWriter, status int, name, title string, v *visit, page any) {
	h.render(w, status, name, layout{Title: title, Who: "Operator", CSRF: v.csrf, Operator: true, Page: page})
}

// opAccountsURL is the operator page with f's filters, at cursor.
func opAccountsURL(f accounts.PageQuery, cursor string) string {
	q := url.Values{}
	for k, v := range map[string]string{"name": f.Name, "status": f.Status, "cursor": cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if len(q) == 0 {
		return Prefix + "operator"
	}
	return Prefix + "operator?" + q.Encode()
}
