package httperr

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hostmint/hostmint/apierror"
)

func TestAuditObject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern string
		values  map[string]string
		want    string
	}{
		{"/api/v1/hostnames", nil, ""},
		{"/api/v1/hostnames/{id}", map[string]string{"id": "h_1"}, "hostname:h_1"},
		{"/api/v1/hostnames/{id}/records/{record_id}", map[string]string{"id": "h_1", "record_id": "r_2"}, "record:r_2"},
		{"/api/v1/hostnames/{id}/renew", map[string]string{"id": "h_1"}, "hostname:h_1"},
		{"/dashboard/operator/accounts/{id}/sessions/{session}/end", map[string]string{"id": "a_1", "session": "s_3"}, "session:s_3"},
		{"/api/v1/broken/{id", nil, ""},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		for k, v := range tc.values {
			r.SetPathValue(k, v)
		}
		if got := AuditObject(tc.pattern, r); got != tc.want {
			t.Errorf("AuditObject(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}

// A 401's caller is not known and a 503's store could not take the entry:
// neither is handed to the audit log as a refusal; every other answer's
// code is, as it was given.
func TestAuditCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		code   string
		want   string
	}{
		{http.StatusOK, "", ""},
		{http.StatusOK, apierror.CodeForbidden, apierror.CodeForbidden}, // dyndns2 refuses with 200
		{http.StatusBadRequest, apierror.CodeBadRequest, apierror.CodeBadRequest},
		{http.StatusForbidden, "REFUSED", "REFUSED"},
		{http.StatusUnauthorized, apierror.CodeUnauthorized, ""},
		{http.StatusUnauthorized, "REFUSED", ""},
		{http.StatusServiceUnavailable, apierror.CodeUnavailable, ""},
		{http.StatusServiceUnavailable, "REFUSED", ""},
		{http.StatusInternalServerError, apierror.CodeInternal, apierror.CodeInternal},
	} {
		if got := AuditCode(tc.status, tc.code); got != tc.want {
			t.Errorf("AuditCode(%d, %q) = %q, want %q", tc.status, tc.code, got, tc.want)
		}
	}
}

// The first status written is the one noted; a body without a header is a 200.
func TestStatusWriter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		write func(w http.ResponseWriter)
		want  int
	}{
		{"nothing", func(http.ResponseWriter) {}, 0},
		{"body only", func(w http.ResponseWriter) { w.Write([]byte("x")) }, http.StatusOK},
		{"header", func(w http.ResponseWriter) { w.WriteHeader(http.StatusConflict) }, http.StatusConflict},
		{"header twice", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusForbidden)
			w.WriteHeader(http.StatusOK)
		}, http.StatusForbidden},
		{"header then body", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusSeeOther)
			w.Write([]byte("x"))
		}, http.StatusSeeOther},
	} {
		rec := httptest.NewRecorder()
		sw := &StatusWriter{ResponseWriter: rec}
		tc.write(sw)
		if sw.Status != tc.want {
			t.Errorf("%s: noted %d, want %d", tc.name, sw.Status, tc.want)
		}
		if sw.Status != 0 && rec.Code != sw.Status {
			t.Errorf("%s: wrote %d, noted %d", tc.name, rec.Code, sw.Status)
		}
		if sw.Unwrap() != rec {
			t.Errorf("%s: Unwrap does not give the writer underneath", tc.name)
		}
	}
}
