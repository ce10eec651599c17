package dashboard

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/plans"
	"github.com/hostmint/hostmint/storage"
)

// changeFields: the API field a rule's message starts with, and the account
// form's field; any other (name) is shown for the form as a whole.
var changeFields = map[string]string{"plan": "plan", "cap": "cap", "billing": "billing"}

// changeForm is the account form as the account stands: the cap field holds
// only an override, as an empty one changes nothing.
func changeForm(plan string, capOverride *int, billing bool) *form {
	f := newForm()
	f.Values["plan"] = plan
	if capOverride != nil {
		f.Values["cap"] = strconv.Itoa(*capOverride)
	}
	if billing {
		f.Values["billing"] = "on"
	}
	return f
}

// plans are the [P1] plans to choose from; a [P2] plan is typed.
func (h *Handler) plans() []string {
	if !h.cfg.Profile.NamedPlans() {
		return plans.Profile1
	}
	return nil
}

// opChangeAccount changes an account's plan, cap and ([P2]) billing through
// the rule PATCH /api/admin/accounts/{id} calls. An empty cap is not sent:
// the API has no way to go back to the plan's cap either.
func (h *Handler) opChangeAccount(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	f := newForm()
	for _, k := range []string{"plan", "cap", "billing"} {
		f.Values[k] = strings.TrimSpace(r.PostFormValue(k))
	}
	plan := f.Values["plan"]
	in := accounts.Input{Plan: &plan}
	if h.cfg.Profile.Teams() {
		billing := f.Values["billing"] != ""
		in.Billing = &billing
	}
	if c := f.Values["cap"]; c != "" {
		// 32 bits, as the API takes it; a negative number is the rule's to refuse.
		n, err := strconv.ParseInt(c, 10, 32)
		if err != nil {
			f.Errors["cap"] = "cap must be a whole number from 0 to 2147483647, or empty to keep it"
			h.renderOpAccount(w, r, v, http.StatusBadRequest, opAccountView{Form: f})
			return
		}
		capacity := int(n)
		in.Cap = &capacity
	}
	if _, err := h.accounts.Patch(r.Context(), id, in); err != nil {
		status, ok := f.fail(err, changeFields)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.renderOpAccount(w, r, v, status, opAccountView{Form: f})
		return
	}
	h.log.Info("dashboard: account changed", "account", id)
	http.Redirect(w, r, Prefix+"operator/accounts/"+id, http.StatusSeeOther)
}

type opKeyRow struct {
	storage.APIKey
	Grants  []string
	Expired bool
}

type opAccountView struct {
	CSRF       string
	Account    *storage.Account
	Cap        int // the override or the plan's
	Form       *form
	AccessForm *form
	State      string // storage.Account.Access now
	Access     *accounts.Access
	// AccessTables are Access as the page lists it.
	AccessTables []accessTable
	Plans        []string // [P1]
	Keys         []opKeyRow
	Notice       string
	Error        string
}

// CapHint says what an empty cap field does: keep the cap as it is.
func (av opAccountView) CapHint() string {
	hint := "Empty keeps the cap as it is (" + strconv.Itoa(av.Cap)
	if av.Account.Cap == nil {
		hint += ", the plan's"
	}
	return hint + ")."
}

func (h *Handler) opAccountPage(w http.ResponseWriter, r *http.Request, v *visit) {
	h.renderOpAccount(w, r, v, http.StatusOK, opAccountView{})
}

func (h *Handler) renderOpAccount(w http.ResponseWriter, r *http.Request, v *visit, status int, av opAccountView) {
	a, err := h.accounts.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		h.failed(w, r, err)
		return
	}
	ks, err := h.accounts.Keys(r.Context(), a.ID)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	now := time.Now().UnixMilli()
	for _, k := range ks {
		row := opKeyRow{APIKey: k, Expired: k.ExpiresAt != 0 && k.ExpiresAt <= now}
		for _, s := range access.ParseScopes(k.Scopes) {
			reach := "the whole team"
			switch {
			case s.Hostname != "":
				reach = "hostname " + s.Hostname
			case s.Domain != "":
				reach = "domain " + s.Domain
			}
			row.Grants = append(row.Grants, s.Scope+" on "+reach)
		}
		av.Keys = append(av.Keys, row)
	}
	if av.Form == nil {
		av.Form = changeForm(a.Plan, a.Cap, a.Billing)
	}
	if av.AccessForm == nil {
		av.AccessForm = accessForm(a)
	}
	if av.Access, err = h.accounts.TeamAccess(r.Context(), a.ID); err != nil {
		h.failed(w, r, err)
		return
	}
	av.State, av.AccessTables = a.Access(now), accessTables(av.Access)
	av.Account, av.Cap, av.Plans, av.CSRF = a, h.hostnames.Cap(a), h.plans(), v.csrf
	h.renderOp(w, status, "operator_account", a.Name, v, av)
}

// opRevokeKey revokes through the rule DELETE /api/admin/keys/{key_id} calls.
func (h *Handler) opRevokeKey(w http.ResponseWriter, r *http.Request, v *visit) {
	key := r.PathValue("key")
	h.opActed(w, r, v, h.accounts.RevokeKey(r.Context(), key), "Key "+key+" is revoked; it no longer authenticates.")
}

// opActed shows the account page after an operator's action on it: the
// rule's refusal, or notice (also logged).
func (h *Handler) opActed(w http.ResponseWriter, r *http.Request, v *visit, err error, notice string) {
	if err != nil {
		p, ok := apierror.As(err)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.renderOpAccount(w, r, v, httperr.Status(p.Code), opAccountView{Error: p.Message})
		return
	}
	h.log.Info("dashboard: operator action on an account", "account", r.PathValue("id"), "done", notice)
	h.renderOpAccount(w, r, v, http.StatusOK, opAccountView{Notice: notice})
}
