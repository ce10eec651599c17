package httperr

import (
	"net/http"
	"testing"
	"time"

	"github.com/hostmint/hostmint/apierror"
)

// Every code the service answers with has its status, as the spec's table
// gives it (METHOD_NOT_ALLOWED is the service's own).
func TestStatus(t *testing.T) {
	t.Parallel()
	for _, code := range apierror.Codes {
		if _, ok := statuses[code]; !ok {
			t.Errorf("code %s has no HTTP status", code)
		}
	}
	for code, want := range map[string]int{apierror.CodeKeyExpired: 401, apierror.CodePaymentRequired: 402,
		apierror.CodeDomainProvisioning: 409, apierror.CodeRateLimited: 429, "NO_SUCH_CODE": 500} {
		if got := Status(code); got != want {
			t.Errorf("Status(%s) = %d, want %d", code, got, want)
		}
	}
}

func TestHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		e             apierror.Error
		retry, locate string
	}{
		{apierror.Error{}, "", ""},
		{apierror.Error{RetryAfter: 1500 * time.Millisecond}, "2", ""},
		{apierror.Error{RetryAfter: time.Millisecond, Location: "/api/v1/domains/d_1"}, "1", "/api/v1/domains/d_1"},
	} {
		h := http.Header{}
		Header(h, &tc.e)
		if h.Get("Retry-After") != tc.retry || h.Get("Location") != tc.locate {
			t.Errorf("%+v: %v", tc.e, h)
		}
	}
}
