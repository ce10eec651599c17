package dashboard

import (
	"net/http"
	"strings"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/diagnose"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
)

// A hostname's own page, /dashboard/team/hostnames/{id}: repoint, renew
// ([P1]), release, and ([P2]) records, DNS-01 credentials, certificate state
// and diagnose. Each action calls the hostnames.Service method the API's
// handler calls, with the team-wide principal, so rules and messages are
// the API's; another team's id is the service's 404.

type recordRow struct {
	storage.Record
	Value string // the record's data as a zone file writes it
}

// certState is what the page shows of a certificate the service obtains.
type certState struct {
	Status, CA, Error string
	ExpiresAt         int64
	Note              string // why there is no state yet
}

type hostnameView struct {
	CSRF         string
	H            hostnameRow
	Records      []recordRow
	RecordTypes  []recordType
	RecordForms  map[string]*form // by type
	EditID       string           // the record whose edit form is shown
	EditForm     *form            // what was sent to it; nil: its stored value
	Edit         *recordForm      // built from the two above
	UpdateForm   *form
	Confirm      bool // release asked for: show the confirmation
	Cert         *certState
	NewCred      *hostnames.NewCredential
	ServerURL    string
	CredError    string
	Report       *diagnose.Report
	DiagnoseErr  string
	RecordsError string // a record could not be deleted
	ActionError  string // renew or release was refused
}

// hostnameURL is a hostname's page.
func hostnameURL(id string) string { return Prefix + "team/hostnames/" + id }

func (h *Handler) hostnamePage(w http.ResponseWriter, r *http.Request, v *visit) {
	h.renderHostname(w, r, v, http.StatusOK, hostnameView{})
}

// renderHostname reads the hostname through the service (a team's own,
// else 404) and shows its page with what hv already holds.
func (h *Handler) renderHostname(w http.ResponseWriter, r *http.Request, v *visit, status int, hv hostnameView) {
	// Drawn after a form's work too: its reads are not the form's write.
	ctx, p, id := storage.WithoutAudit(r.Context()), principal(v.sess), r.PathValue("id")
	// Get is the API's GET: in profile 1 reading a live hostname counts as
	// use and slides its expiry, as the spec has it for any authenticated read.
	hn, err := h.hostnames.Get(ctx, p, id)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	acct, err := h.accounts.Get(ctx, v.sess.AccountID)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	hv.H = hostnameRow{Hostname: *hn, State: h.hostnames.Status(hn, time.Now())}
	if hv.UpdateForm == nil {
		hv.UpdateForm = newForm()
	}
	if hv.RecordForms == nil {
		hv.RecordForms = map[string]*form{}
	}
	for _, t := range recordTypes {
		if hv.RecordForms[t.Type] == nil {
			hv.RecordForms[t.Type] = newForm()
		}
	}
	hv.RecordTypes = recordTypes
	hv.ServerURL = strings.TrimRight(h.cfg.BaseURL, "/") + "/api/acme"
	if h.cfg.Profile.Teams() {
		_, rs, err := h.records.Records(ctx, p, id)
		if err != nil {
			h.failed(w, r, err)
			return
		}
		for _, rec := range rs {
			hv.Records = append(hv.Records, recordRow{Record: rec, Value: recordValue(&rec)})
		}
		if hn.Certificate == hostnames.CertCSR || hn.Certificate == hostnames.CertManaged {
			hv.Cert = &certState{}
			st, err := h.certs.Certificate(ctx, p, id)
			if pr, ok := apierror.As(err); ok {
				hv.Cert.Note = pr.Message // "no certificate yet: ..."
			} else if err != nil {
				h.failed(w, r, err)
				return
			} else {
				c := st.Row
				hv.Cert.Status, hv.Cert.CA, hv.Cert.Error, hv.Cert.ExpiresAt = c.Status, c.CA, c.Error, c.ExpiresAt
			}
		}
	}
	if hv.EditID != "" { // profile 1 lists no records: any id is unknown
		if hv.Edit, err = editForm(hv.Records, hv.EditID, hv.EditForm); err != nil {
			h.failed(w, r, err)
			return
		}
	}
	hv.CSRF = v.csrf
	h.render(w, status, "hostname", layout{Title: hn.Name, Who: acct.Name, CSRF: v.csrf, Page: hv})
}

// recordValue is a record's data in zone-file form, or its JSON when the
// stored data no longer builds a record.
func recordValue(rec *storage.Record) string {
	d, err := records.Decode(rec.Type, []byte(rec.Data))
	if err != nil {
		return rec.Data
	}
	rr, err := d.RR(rec.Type, records.Owner(rec.Name, ""), records.TTL)
	if err != nil {
		return rec.Data
	}
	return strings.TrimSpace(strings.TrimPrefix(rr.String(), rr.Header().String()))
}

// optional is a form value as the API's JSON would carry it: nil when the
// field was left empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// hostnameFields: the API field a create rule's message starts with, and
// the form field it is shown next to.
var hostnameFields = map[string]string{"ip": "ip", "label": "label", "subdomain": "subdomain", "domain": "domain",
	"certificate": "certificate", "ca": "ca"}

func (h *Handler) createHostname(w http.ResponseWriter, r *http.Request, v *visit) {
	f := newForm()
	for _, k := range []string{"ip", "label", "subdomain", "domain", "certificate", "ca"} {
		f.Values[k] = strings.TrimSpace(r.PostFormValue(k))
	}
	ip := f.Values["ip"] // always sent, as the API's body must hold ip
	in := hostnames.CreateInput{IP: &ip}
	if !h.cfg.Profile.Teams() {
		in.Label = optional(f.Values["label"])
	} else {
		in.Subdomain, in.Domain = optional(f.Values["subdomain"]), optional(f.Values["domain"])
		in.Certificate, in.CA = optional(f.Values["certificate"]), optional(f.Values["ca"])
	}
	hn, err := h.hostnames.Create(r.Context(), principal(v.sess), in)
	if err != nil {
		status, ok := f.fail(err, hostnameFields)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.renderTeam(w, r, v, status, teamView{HostForm: f})
		return
	}
	h.log.Info("dashboard: hostname created", "account", v.sess.AccountID, "hostname", hn.ID)
	http.Redirect(w, r, hostnameURL(hn.ID), http.StatusSeeOther)
}

func (h *Handler) updateHostname(w http.ResponseWriter, r *http.Request, v *visit) {
	f := newForm()
	f.Values["ip"] = strings.TrimSpace(r.PostFormValue("ip"))
	f.Values["target"] = strings.TrimSpace(r.PostFormValue("target"))
	in := hostnames.UpdateInput{IP: optional(f.Values["ip"])}
	if !h.cfg.Profile.Teams() {
		ip := f.Values["ip"] // profile 1's update has only ip: empty is "ip is required"
		in.IP = &ip
	} else {
		in.Target = optional(f.Values["target"])
	}
	id := r.PathValue("id")
	if _, err := h.hostnames.Update(r.Context(), principal(v.sess), id, in); err != nil {
		h.actionFailed(w, r, v, err, f, map[string]string{"ip": "ip", "target": "target", "send": "ip"},
			func(hv *hostnameView) { hv.UpdateForm = f })
		return
	}
	h.log.Info("dashboard: hostname updated", "account", v.sess.AccountID, "hostname", id)
	http.Redirect(w, r, hostnameURL(id), http.StatusSeeOther)
}

func (h *Handler) renewHostname(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	if _, err := h.hostnames.Renew(r.Context(), principal(v.sess), id); err != nil {
		f := newForm()
		h.actionFailed(w, r, v, err, f, nil, func(hv *hostnameView) { hv.ActionError = f.Errors[""] })
		return
	}
	http.Redirect(w, r, hostnameURL(id), http.StatusSeeOther)
}

// releaseHostname releases only when the confirmation was given; without
// it, it shows the page asking for it. A second step rather than script:
// the page works without JavaScript.
func (h *Handler) releaseHostname(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	if r.PostFormValue("confirm") != "yes" {
		h.renderHostname(w, r, v, http.StatusOK, hostnameView{Confirm: true})
		return
	}
	if err := h.hostnames.Release(r.Context(), principal(v.sess), id); err != nil {
		f := newForm()
		h.actionFailed(w, r, v, err, f, nil, func(hv *hostnameView) { hv.ActionError = f.Errors[""] })
		return
	}
	h.log.Info("dashboard: hostname released", "account", v.sess.AccountID, "hostname", id)
	http.Redirect(w, r, Prefix+"team", http.StatusSeeOther)
}

// actionFailed shows a rule's error on the hostname page next to its field
// (put by set into the view); any other error is a status page.
func (h *Handler) actionFailed(w http.ResponseWriter, r *http.Request, v *visit, err error, f *form,
	fields map[string]string, set func(*hostnameView)) {
	status, ok := f.fail(err, fields)
	if !ok || status == http.StatusNotFound {
		h.failed(w, r, err) // another team's hostname: the 404 page, nothing else shown
		return
	}
	hv := hostnameView{}
	set(&hv)
	h.renderHostname(w, r, v, status, hv)
}

// createCredential makes a DNS-01 credential and shows its password once.
func (h *Handler) createCredential(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	cred, err := h.certs.CreateCredential(r.Context(), principal(v.sess), id)
	if err != nil {
		f := newForm()
		h.actionFailed(w, r, v, err, f, nil, func(hv *hostnameView) { hv.CredError = f.Errors[""] })
		return
	}
	h.log.Info("dashboard: DNS-01 credential created", "account", v.sess.AccountID, "hostname", id)
	h.renderHostname(w, r, v, http.StatusCreated, hostnameView{NewCred: cred})
}

// runDiagnose runs the report and shows it; it is not stored, as the API's
// is not.
func (h *Handler) runDiagnose(w http.ResponseWriter, r *http.Request, v *visit) {
	rep, err := h.diagnoser.Diagnose(r.Context(), principal(v.sess), r.PathValue("id"))
	if err != nil {
		f := newForm()
		h.actionFailed(w, r, v, err, f, nil, func(hv *hostnameView) { hv.DiagnoseErr = f.Errors[""] })
		return
	}
	h.renderHostname(w, r, v, http.StatusOK, hostnameView{Report: rep})
}
