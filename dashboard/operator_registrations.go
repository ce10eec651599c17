package dashboard

import (
	"net/http"
	"net/url"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/httperr"
)

// The operator's page of acme-dns registrations for any domain, in
// username order a page at a time, each with a delete button: the same
// rules as GET and DELETE /api/admin/acme-registrations.

// opRegsListed is how many registrations a page shows.
const opRegsListed = 50

type opRegsView struct {
	CSRF          string
	Registrations []hostnames.Registration
	After         string // the page starts after this username; "" is the first
	Next          string // the next page's After; "" on the last page
	Notice, Error string
}

// NextURL is the next page's address.
func (rv opRegsView) NextURL() string {
	return Prefix + "operator/acme-registrations?after=" + url.QueryEscape(rv.Next)
}

func (h *Handler) opRegistrationsPage(w http.ResponseWriter, r *http.Request, v *visit) {
	h.renderOpRegistrations(w, r, v, http.StatusOK, opRegsView{After: r.URL.Query().Get("after")})
}

func (h *Handler) renderOpRegistrations(w http.ResponseWriter, r *http.Request, v *visit, status int, rv opRegsView) {
	rs, err := h.certs.Registrations(r.Context(), rv.After, opRegsListed)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	rv.Registrations, rv.CSRF = rs, v.csrf
	if len(rs) == opRegsListed {
		rv.Next = rs[len(rs)-1].Username
	}
	h.renderOp(w, status, "operator_registrations", "acme-dns registrations", v, rv)
}

func (h *Handler) opDeleteRegistration(w http.ResponseWriter, r *http.Request, v *visit) {
	user, after := r.PathValue("username"), r.PostFormValue("after")
	if err := h.certs.DeleteRegistration(r.Context(), user); err != nil {
		p, ok := apierror.As(err)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.renderOpRegistrations(w, r, v, httperr.Status(p.Code), opRegsView{After: after, Error: p.Message})
		return
	}
	h.log.Info("dashboard: acme-dns registration deleted", "username", user)
	h.renderOpRegistrations(w, r, v, http.StatusOK, opRegsView{After: after,
		Notice: "Registration " + user + " is deleted; its values are no longer served."})
}
