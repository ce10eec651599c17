// Package httperr is how the HTTP doors (the API and the dashboard) answer
// a rule's refusal: the status each code of the rules stands for, and the
// headers that say when to come back. The rules speak no HTTP; this is the
// one place their codes become it, and where the doors' answers become what
// the audit log records (audit.go).
package httperr

import (
	"net/http"
	"strconv"
	"time"

	"github.com/hostmint/hostmint/apierror"
)

var statuses = map[string]int{
	apierror.CodeBadRequest:         http.StatusBadRequest,
	apierror.CodeUnauthorized:       http.StatusUnauthorized,
	apierror.CodeKeyExpired:         http.StatusUnauthorized,
	apierror.CodePaymentRequired:    http.StatusPaymentRequired,
	apierror.CodeForbidden:          http.StatusForbidden,
	apierror.CodeNotFound:           http.StatusNotFound,
	apierror.CodeMethodNotAllowed:   http.StatusMethodNotAllowed,
	apierror.CodeConflict:           http.StatusConflict,
	apierror.CodeDomainProvisioning: http.StatusConflict,
	apierror.CodeNoDomainAvailable:  http.StatusConflict,
	apierror.CodeRateLimited:        http.StatusTooManyRequests,
	apierror.CodeInternal:           http.StatusInternalServerError,
	apierror.CodeNotImplemented:     http.StatusNotImplemented,
	apierror.CodeUnavailable:        http.StatusServiceUnavailable,
}

// Status is the HTTP status of code (500 for a code it does not know).
func Status(code string) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Header sets on h what e says about coming back: Retry-After in whole
// seconds (rounded up, at least 1) and Location.
func Header(h http.Header, e *apierror.Error) {
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(RetrySeconds(e.RetryAfter)))
	}
	if e.Location != "" {
		h.Set("Location", e.Location)
	}
}

// RetrySeconds is d as Retry-After counts it: whole seconds, rounded up,
// at least 1.
func RetrySeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}
