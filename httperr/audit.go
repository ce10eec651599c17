package httperr

import (
	"net/http"
	"strings"
)

// What the HTTP doors tell the audit log of a request. The audit log
// speaks no HTTP: it records the status a door gives it as it is and reads
// only the refusal's code, so what a status means for the log is decided
// here.

// StatusWriter notes the status a handler answered with, which a refusal's
// entry records.
type StatusWriter struct {
	http.ResponseWriter
	Status int // 0 until the handler writes
}

func (w *StatusWriter) WriteHeader(status int) {
	if w.Status == 0 {
		w.Status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// AuditCode is the refusal code to hand the audit log for an answer of
// status that refused with code: none for a 401, whose caller is not known,
// nor for a 503, whose store could not have taken the entry either.
func AuditCode(status int, code string) string {
	if status == http.StatusUnauthorized || status == http.StatusServiceUnavailable {
		return ""
	}
	return code
}

// AuditObject names the most specific object of r's path under pattern:
// the segment before its last {param}, singular, and the value
// ("/api/v1/hostnames/{id}/records/{record_id}" -> "record:<record_id>").
func AuditObject(pattern string, r *http.Request) string {
	open := strings.LastIndexByte(pattern, '{')
	if open < 0 {
		return ""
	}
	end := strings.IndexByte(pattern[open:], '}')
	if end < 0 {
		return ""
	}
	before := strings.TrimSuffix(pattern[:open], "/")
	kind := strings.TrimSuffix(before[strings.LastIndexByte(before, '/')+1:], "s")
	return kind + ":" + r.PathValue(pattern[open+1:open+end])
}
