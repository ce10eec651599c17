package dashboard

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/records"
)

// Records on a hostname's page ([P2]): one small form per type to add one,
// an edit form per record, and delete. A form is turned into the API's JSON
// body and handed to the service method the API's handler calls, so what
// is refused, and the words, are the API's.

// recordTypes are the types the page has a form for, in the spec's order.
var recordTypes = []recordType{
	{"TXT", "", []recordField{{"text", "Text", "text", "Up to 255 bytes; use the API for longer values."}}},
	{"TLSA", "_<port>._<protocol> under the hostname, e.g. _443._tcp. TLSA needs the domain signed with DNSSEC.",
		[]recordField{{"usage", "Usage", "number", "0 to 3; 3 (DANE-EE) pins the server's own certificate or key."},
			{"selector", "Selector", "number", "0 the whole certificate, 1 its public key."},
			{"matching_type", "Matching type", "number", "0 the data itself, 1 its SHA-256 (64 hex digits), 2 its SHA-512 (128)."},
			{"association", "Association data", "text", "Lowercase hex."}}},
	{"CAA", "", []recordField{{"flags", "Flags", "number", "0, or 128 for critical."},
		{"tag", "Tag", "text", "issue, issuewild or iodef."},
		{"value", "Value", "text", "e.g. letsencrypt.org."}}},
	{"MX", "", []recordField{{"preference", "Preference", "number", "0 to 65535; lower is preferred."},
		{"exchange", "Mail server", "text", "A host name, e.g. mx1.example.com."}}},
	{"SRV", "", []recordField{{"priority", "Priority", "number", "0 to 65535."},
		{"weight", "Weight", "number", "0 to 65535."},
		{"port", "Port", "number", "1 to 65535."},
		{"target", "Target", "text", "A host name, e.g. sip.example.com."}}},
	{"SSHFP", "", []recordField{{"algorithm", "Algorithm", "number", "1 RSA, 2 DSA, 3 ECDSA, 4 Ed25519, 6 Ed448."},
		{"fptype", "Fingerprint type", "number", "1 SHA-1 (40 hex digits), 2 SHA-256 (64)."},
		{"fingerprint", "Fingerprint", "text", "Lowercase hex, as ssh-keygen -r prints it."}}},
	{"HTTPS", "", svcbFields},
	{"SVCB", "", svcbFields},
}

// svcbFields: HTTPS and SVCB share their data. A params.* field is one
// member of the API's params object; lists are typed comma-separated.
var svcbFields = []recordField{
	{"priority", "Priority", "number", "0 is alias mode (no parameters); 1 and up is service mode, lower preferred."},
	{"target", "Target", "text", `A host name, or "." for this name itself.`},
	{"params.alpn", "ALPN", "list", "Optional; protocols, comma-separated, e.g. h2,h3."},
	{"params.noDefaultAlpn", "No default ALPN", "checkbox", "Offer only the protocols listed in ALPN."},
	{"params.port", "Port", "number", "Optional; when not the protocol's default."},
	{"params.ipv4hint", "IPv4 hints", "list", "Optional; IPv4 addresses, comma-separated."},
	{"params.ipv6hint", "IPv6 hints", "list", "Optional; IPv6 addresses, comma-separated."},
	{"params.ech", "ECH", "text", "Optional; an ECHConfigList in standard base64."},
	{"params.mandatory", "Mandatory keys", "list", "Optional; keys a client must understand, e.g. alpn,port."},
}

type recordType struct {
	Type     string
	NameHint string // "": the name may be any label(s)
	Fields   []recordField
}

// recordField is one input of a record form; Name is the API's field, and
// Input is text, number, list or checkbox.
type recordField struct{ Name, Label, Input, Hint string }

// recordForm is a record form as the template shows it: an add form, or
// the edit form of Record.
type recordForm struct {
	recordType
	Prefix string // of the element ids
	F      *form
	Record *recordRow
}

// AddForm is the add form of t.
func (hv hostnameView) AddForm(t recordType) recordForm {
	return recordForm{recordType: t, Prefix: "rec-" + t.Type, F: hv.RecordForms[t.Type]}
}

func typeOf(typ string) (recordType, bool) {
	for _, t := range recordTypes {
		if t.Type == typ {
			return t, true
		}
	}
	return recordType{}, false
}

// recordFields reads what a form of t sent. TXT keeps its spaces: they
// are part of the value.
func recordFields(r *http.Request, t recordType) *form {
	f := newForm()
	for _, fl := range t.Fields {
		val := r.PostFormValue(fl.Name)
		if fl.Name != "text" {
			val = strings.TrimSpace(val)
		}
		f.Values[fl.Name] = val
	}
	return f
}

// recordInput is the API body a form of t makes: an empty field is left
// out (the service says when it is required), a number that is not one is
// the form's own error, as JSON could not carry it either.
func recordInput(t recordType, f *form) records.Input {
	body := map[string]any{"type": t.Type}
	params := map[string]any{}
	for _, fl := range t.Fields {
		val := f.Values[fl.Name]
		if val == "" {
			continue
		}
		var v any = val
		switch fl.Input {
		case "number":
			n, err := strconv.Atoi(val)
			if err != nil {
				f.Errors[fl.Name] = fl.Name + " must be an integer, got " + strconv.Quote(val)
				continue
			}
			v = n
		case "list":
			items := strings.Split(val, ",")
			for i := range items {
				items[i] = strings.TrimSpace(items[i])
			}
			v = items
		case "checkbox":
			v = true
		}
		if p, ok := strings.CutPrefix(fl.Name, "params."); ok {
			params[p] = v
		} else {
			body[fl.Name] = v
		}
	}
	if len(params) > 0 {
		body["params"] = params
	}
	var in records.Input
	b, _ := json.Marshal(body)
	json.Unmarshal(b, &in) // the fields are Input's own, with their types
	if name := f.Values["name"]; name != "" {
		in.Name = &name
	}
	return in
}

// recordErrorFields: the API field a record rule's message starts with,
// and the form field it is shown next to; others go above the form.
func recordErrorFields(t recordType) map[string]string {
	fields := map[string]string{"name": "name"}
	for _, fl := range t.Fields {
		fields[fl.Name] = fl.Name
	}
	return fields
}

// formValues is a stored record's data as its form's fields hold it.
func formValues(t recordType, data string) *form {
	f := newForm()
	var d map[string]any
	if json.Unmarshal([]byte(data), &d) != nil {
		return f
	}
	params, _ := d["params"].(map[string]any)
	for _, fl := range t.Fields {
		v := d[fl.Name]
		if p, ok := strings.CutPrefix(fl.Name, "params."); ok {
			v = params[p]
		}
		switch v := v.(type) {
		case string:
			f.Values[fl.Name] = v
		case float64:
			f.Values[fl.Name] = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			f.Values[fl.Name] = strconv.FormatBool(v)
		case []any:
			items := make([]string, len(v))
			for i, item := range v {
				items[i], _ = item.(string)
			}
			f.Values[fl.Name] = strings.Join(items, ",")
		}
	}
	return f
}

// editForm is the edit form of the record id among rs: with f when a
// change was refused, else with the stored value.
func editForm(rs []recordRow, id string, f *form) (*recordForm, error) {
	for i := range rs {
		if rs[i].ID != id {
			continue
		}
		t, ok := typeOf(rs[i].Type)
		if !ok {
			return nil, apierror.BadRequest("this page has no form for record type %s; use the API", rs[i].Type)
		}
		if f == nil {
			f = formValues(t, rs[i].Data)
		}
		return &recordForm{recordType: t, Prefix: "edit", F: f, Record: &rs[i]}, nil
	}
	return nil, apierror.NotFound("Record not found") // the service's words for it
}

func (h *Handler) createRecord(w http.ResponseWriter, r *http.Request, v *visit) {
	typ := r.PostFormValue("type")
	t, ok := typeOf(typ)
	if !ok {
		h.status(w, http.StatusBadRequest, "Bad Request", "This page has no form for record type "+strconv.Quote(typ)+"; use the API.")
		return
	}
	f := recordFields(r, t)
	f.Values["name"] = strings.TrimSpace(r.PostFormValue("name"))
	in := recordInput(t, f)
	set := func(hv *hostnameView) { hv.RecordForms = map[string]*form{typ: f} }
	if f.Failed() {
		hv := hostnameView{}
		set(&hv)
		h.renderHostname(w, r, v, http.StatusBadRequest, hv)
		return
	}
	id := r.PathValue("id")
	if _, err := h.records.CreateRecord(r.Context(), principal(v.sess), id, in); err != nil {
		h.actionFailed(w, r, v, err, f, recordErrorFields(t), set)
		return
	}
	h.log.Info("dashboard: record created", "account", v.sess.AccountID, "hostname", id, "type", typ)
	http.Redirect(w, r, hostnameURL(id), http.StatusSeeOther)
}

// editRecordPage is the hostname's page with a record's edit form.
func (h *Handler) editRecordPage(w http.ResponseWriter, r *http.Request, v *visit) {
	h.renderHostname(w, r, v, http.StatusOK, hostnameView{EditID: r.PathValue("record")})
}

// updateRecord changes a record's value as the API's PUT does. The name is
// not sent, so the record keeps its own; the type is, as the API's body
// must carry it, and the service refuses one that is not the record's.
func (h *Handler) updateRecord(w http.ResponseWriter, r *http.Request, v *visit) {
	typ := r.PostFormValue("type")
	t, ok := typeOf(typ)
	if !ok {
		h.status(w, http.StatusBadRequest, "Bad Request", "This page has no form for record type "+strconv.Quote(typ)+"; use the API.")
		return
	}
	id, rid := r.PathValue("id"), r.PathValue("record")
	f := recordFields(r, t)
	in := recordInput(t, f)
	set := func(hv *hostnameView) { hv.EditID, hv.EditForm = rid, f }
	if f.Failed() {
		hv := hostnameView{}
		set(&hv)
		h.renderHostname(w, r, v, http.StatusBadRequest, hv)
		return
	}
	if _, err := h.records.UpdateRecord(r.Context(), principal(v.sess), id, rid, in); err != nil {
		h.actionFailed(w, r, v, err, f, recordErrorFields(t), set)
		return
	}
	h.log.Info("dashboard: record changed", "account", v.sess.AccountID, "hostname", id, "record", rid)
	http.Redirect(w, r, hostnameURL(id), http.StatusSeeOther)
}

func (h *Handler) deleteRecord(w http.ResponseWriter, r *http.Request, v *visit) {
	id, rid := r.PathValue("id"), r.PathValue("record")
	if err := h.records.DeleteRecord(r.Context(), principal(v.sess), id, rid); err != nil {
		f := newForm()
		h.actionFailed(w, r, v, err, f, nil, func(hv *hostnameView) { hv.RecordsError = f.Errors[""] })
		return
	}
	h.log.Info("dashboard: record deleted", "account", v.sess.AccountID, "hostname", id, "record", rid)
	http.Redirect(w, r, hostnameURL(id), http.StatusSeeOther)
}
