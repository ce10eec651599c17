package dashboard

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/hostmint/hostmint/storage"
)

// Closing an account from its page: a confirmation page of its own (no
// JavaScript), then the rule DELETE /api/admin/accounts/{id} calls.

type opCloseView struct {
	CSRF    string
	Account *storage.Account
	Active  int
}

func (h *Handler) opConfirmClose(w http.ResponseWriter, r *http.Request, v *visit) {
	a, err := h.accounts.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		h.failed(w, r, err)
		return
	}
	if a.ClosedAt != 0 {
		http.Redirect(w, r, Prefix+"operator/accounts/"+url.PathEscape(a.ID), http.StatusSeeOther)
		return
	}
	h.renderOp(w, http.StatusOK, "operator_close", "Close "+a.Name, v, opCloseView{CSRF: v.csrf, Account: a, Active: a.ActiveHostnames})
}

// opClose closes only when the confirmation page's form was sent; any
// other post is sent to that page first.
func (h *Handler) opClose(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	if r.PostFormValue("confirm") != "yes" {
		http.Redirect(w, r, Prefix+"operator/accounts/"+url.PathEscape(id)+"/close", http.StatusSeeOther)
		return
	}
	_, c, err := h.accounts.Close(r.Context(), id)
	h.opActed(w, r, v, err, fmt.Sprintf("The account is closed: %d hostnames released, %d API keys and %d TSIG keys revoked, %d sessions and %d sign-in links ended.",
		c.HostnamesReleased, c.KeysRevoked, c.TSIGKeysRevoked, c.Sessions, c.SigninLinks))
}
