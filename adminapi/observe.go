package adminapi

import (
	"net/http"
	"time"

	"github.com/hostmint/hostmint/audit"
	"github.com/hostmint/hostmint/httperr"
	"github.com/hostmint/hostmint/storage"
)

// Outcome is how the API answered one request, for metrics.
type Outcome struct {
	Route    string // "POST /api/v1/hostnames"; "" when no route matched
	Auth     string // the credential the route takes: key, admin, acme-dns, basic; "" for none
	Status   int
	Code     string // the error code answered; "" for none
	Duration time.Duration
}

// recorder notes what a request was answered, for Outcome and the audit log.
type recorder struct {
	httperr.StatusWriter
	code  string              // the error code answered, "" for none
	words string              // and its message
	route *route              // nil when no route matched
	entry *storage.AuditEntry // nil unless the request is audited
}

// noteRefusal records the error code w answers with and its message, for
// the audit log.
func noteRefusal(w http.ResponseWriter, code, words string) {
	if rec, ok := w.(*recorder); ok && rec.code == "" {
		rec.code, rec.words = code, words
	}
}

// credential names the credential rt takes, for Outcome.Auth.
func (rt *route) credential() string {
	switch {
	case rt.auth == authKey:
		return "key"
	case rt.auth == authAdmin:
		return "admin"
	case rt.path == acmeUpdatePath:
		return "acme-dns"
	case rt.dyndns:
		return "basic"
	}
	return ""
}

// writes reports whether rt changes state, so is audited.
func (rt *route) writes() bool {
	return rt.dyndns || rt.method != http.MethodGet && rt.path != acmeRegisterPath
}

// audit starts r's audit entry: every write committed while it is served
// records it, and finish records a refusal.
func (s *Server) audit(w http.ResponseWriter, r *http.Request, actor, account, object string) *http.Request {
	rec, ok := w.(*recorder)
	if s.cfg.Audit == nil || !ok || rec.route == nil {
		return r
	}
	rt := rec.route
	if object == "" {
		object = httperr.AuditObject(rt.path, r)
	}
	rec.entry = &storage.AuditEntry{Actor: actor, AccountID: account, Action: rt.method + " " + rt.path,
		Object: object, Status: rt.ok, Address: s.ClientAddr(r)}
	return r.WithContext(audit.Begin(r.Context(), rec.entry))
}

// finish records the request's refusal in the audit log and its outcome
// for metrics.
func (s *Server) finish(rec *recorder, start time.Time) {
	if rec.Status == 0 {
		rec.Status = http.StatusOK
	}
	if s.cfg.Audit != nil {
		if rec.entry != nil {
			rec.entry.Detail = rec.words
		}
		s.cfg.Audit.Finish(rec.entry, rec.Status, httperr.AuditCode(rec.Status, rec.code))
	}
	if s.cfg.Observe != nil {
		o := Outcome{Status: rec.Status, Code: rec.code, Duration: time.Since(start)}
		if rt := rec.route; rt != nil {
			o.Route, o.Auth = rt.method+" "+rt.path, rt.credential()
		}
		s.cfg.Observe(o)
	}
}
