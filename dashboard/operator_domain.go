package dashboard

import (
	"context"
	"net/http"
	"strings"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/storage"
)

// The operator's page of a domain: DNSSEC, the DS at the parent, the CAA
// policy. Each action calls the method the admin API's handler for it
// calls, so the rules and the messages are the API's.

type opDomainView struct {
	CSRF      string
	Domain    *storage.Domain
	Owner     string
	DS        []string
	DNSSEC    *form // the enable and mark-published buttons' errors
	CAAForm   *form
	CAANotice string
}

// opDomain finds a domain by id; the rules have no single read, the API lists.
func (h *Handler) opDomain(ctx context.Context, id string) (*storage.Domain, error) {
	ds, err := h.domains.List(ctx)
	if err != nil {
		return nil, err
	}
	for i := range ds {
		if ds[i].ID == id {
			return &ds[i], nil
		}
	}
	return nil, apierror.NotFound("Domain not found")
}

func (h *Handler) opDomainPage(w http.ResponseWriter, r *http.Request, v *visit) {
	h.renderOpDomain(w, r, v, http.StatusOK, opDomainView{})
}

func (h *Handler) renderOpDomain(w http.ResponseWriter, r *http.Request, v *visit, status int, dv opDomainView) {
	d, err := h.opDomain(r.Context(), r.PathValue("id"))
	if err != nil {
		h.failed(w, r, err)
		return
	}
	dv.Domain, dv.DS = d, domains.DS(d)
	if d.AccountID != "" {
		if a, err := h.accounts.Get(r.Context(), d.AccountID); err == nil {
			dv.Owner = a.Name
		} else {
			dv.Owner = d.AccountID
		}
	}
	if dv.DNSSEC == nil {
		dv.DNSSEC = newForm()
	}
	if dv.CAAForm == nil {
		dv.CAAForm = newForm()
		dv.CAAForm.Values["caa"] = strings.Join(domains.CAA(d), "\n")
	}
	dv.CSRF = v.csrf
	h.renderOp(w, status, "operator_domain", d.Name, v, dv)
}

// opPatchDomain sends one change through the rules PATCH /api/admin/domains/{id}
// calls; a rule's error is shown in f, under the field fields names.
func (h *Handler) opPatchDomain(w http.ResponseWriter, r *http.Request, v *visit, in domains.Input, f *form, fields map[string]string, dv opDomainView) {
	id := r.PathValue("id")
	if _, err := h.domains.Patch(r.Context(), id, in); err != nil {
		status, ok := f.fail(err, fields)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.renderOpDomain(w, r, v, status, dv)
		return
	}
	h.log.Info("dashboard: domain changed", "domain", id)
	http.Redirect(w, r, Prefix+"operator/domains/"+id, http.StatusSeeOther)
}

// Every DNSSEC error belongs next to its buttons, whatever field it names.
var dnssecFields = map[string]string{}

func (h *Handler) enableDNSSEC(w http.ResponseWriter, r *http.Request, v *visit) {
	on, f := true, newForm()
	h.opPatchDomain(w, r, v, domains.Input{DNSSEC: &on}, f, dnssecFields, opDomainView{DNSSEC: f})
}

func (h *Handler) markDSPublished(w http.ResponseWriter, r *http.Request, v *visit) {
	on, f := true, newForm()
	h.opPatchDomain(w, r, v, domains.Input{DSPublished: &on}, f, dnssecFields, opDomainView{DNSSEC: f})
}

// setCAA replaces the CAA policy with the textarea's lines; no lines clears it.
func (h *Handler) setCAA(w http.ResponseWriter, r *http.Request, v *visit) {
	f := newForm()
	f.Values["caa"] = r.PostFormValue("caa")
	caa := []string{}
	for _, line := range strings.Split(f.Values["caa"], "\n") {
		if line = strings.TrimSpace(line); line != "" {
			caa = append(caa, line)
		}
	}
	h.opPatchDomain(w, r, v, domains.Input{CAA: &caa}, f, map[string]string{"caa": "caa"}, opDomainView{CAAForm: f})
}
