package adminapi

import (
	"crypto/tls"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestOverTLS(t *testing.T) {
	t.Parallel()
	s := &Server{cfg: Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}
	for _, tc := range []struct {
		name   string
		peer   string
		protos []string
		tls    bool
		want   bool
	}{
		{"plain http", "192.0.2.7:5000", nil, false, false},
		{"its own TLS", "192.0.2.7:5000", nil, true, true},
		{"a trusted proxy says https", "10.1.2.3:5000", []string{"https"}, false, true},
		{"a trusted proxy says http", "10.1.2.3:5000", []string{"http"}, false, false},
		{"the proxy's value is the last", "10.1.2.3:5000", []string{"https", "http"}, false, false},
		{"a client forged https before the proxy", "10.1.2.3:5000", []string{"https, http"}, false, false},
		{"an untrusted peer says https", "192.0.2.7:5000", []string{"https"}, false, false},
		{"a trusted proxy says nothing", "10.1.2.3:5000", nil, false, false},
	} {
		r := httptest.NewRequest("GET", "/dashboard/signin", nil)
		r.RemoteAddr = tc.peer
		for _, p := range tc.protos {
			r.Header.Add("X-Forwarded-Proto", p)
		}
		if tc.tls {
			r.TLS = &tls.ConnectionState{}
		}
		if got := s.OverTLS(r); got != tc.want {
			t.Errorf("%s: OverTLS = %v, want %v", tc.name, got, tc.want)
		}
	}
}
