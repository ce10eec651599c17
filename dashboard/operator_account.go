package dashboard

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/hostnames"
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
	if h.cfg.Profile == 1 {
		return []string{hostnames.PlanFree, hostnames.PlanPro, hostnames.PlanBusiness}
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
	if h.cfg.Profile == 2 {
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
