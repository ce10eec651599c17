package adminapi

import (
	"net/http/httptest"
	"testing"
)

// The HTTP door reads the credential out of Authorization; the rules take
// the credential itself.
func TestBearer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		headers []string
		want    string
	}{
		{[]string{"Bearer svc_a_b"}, "svc_a_b"},
		{[]string{"bearer svc_a_b"}, "svc_a_b"},
		{[]string{"Bearer  svc_a_b "}, "svc_a_b"},
		{nil, ""},
		{[]string{"Bearer"}, ""},
		{[]string{"Basic svc_a_b"}, ""},
		{[]string{"Bearer svc_a_b", "Bearer svc_c_d"}, ""}, // a singleton field sent twice
	} {
		r := httptest.NewRequest("GET", "/", nil)
		for _, h := range tc.headers {
			r.Header.Add("Authorization", h)
		}
		if got := bearer(r); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.headers, got, tc.want)
		}
	}
}
