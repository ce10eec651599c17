package dashboard

import (
	"net/http"
	"strings"

	"github.com/hostmint/hostmint/audit"
	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/storage"
)

// refused is the result of a dashboard form the rules turned down: the page
// shows the rule's message, the entry its HTTP status.
const refused = "REFUSED"

// audited serves a form post of v's session with an audit entry: every
// write it commits records the entry, and a refusal (a 4xx page) is
// recorded once served. Pages drawn after the form's work read under
// storage.WithoutAudit: showing a page is not the form's write.
func (h *Handler) audited(w http.ResponseWriter, r *http.Request, v *visit, page func(http.ResponseWriter, *http.Request, *visit)) {
	if h.cfg.Audit == nil {
		page(w, r, v)
		return
	}
	actor := "session:" + v.sess.AccountID
	if v.sess.Operator() {
		actor = "session:operator"
	}
	pattern := strings.TrimPrefix(r.Pattern, http.MethodPost+" ")
	e := &storage.AuditEntry{Actor: actor, AccountID: v.sess.AccountID, Action: http.MethodPost + " " + pattern,
		Object: httperr.AuditObject(pattern, r), Status: http.StatusSeeOther}
	if h.cfg.Address != nil {
		e.Address = h.cfg.Address(r)
	}
	sw := &httperr.StatusWriter{ResponseWriter: w}
	page(sw, r.WithContext(audit.Begin(r.Context(), e)), v)
	code := ""
	if sw.Status >= 400 {
		code = refused
	}
	h.cfg.Audit.Finish(e, sw.Status, httperr.AuditCode(sw.Status, code))
}
