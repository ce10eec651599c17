package adminapi

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// A trusted proxy's X-Forwarded-For entry may carry the client's port, or
// bracket an IPv6 address: the address is taken all the same. What is no
// address at all stays garbage: no address (clientAddr's false), as
// before.
func TestClientAddrForwardedForms(t *testing.T) {
	t.Parallel()
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.250.0.0/16")}
	tests := []struct {
		xff  string
		want string // "" when no address can be given
	}{
		{"203.0.113.7", "203.0.113.7"},
		{"203.0.113.7:4711", "203.0.113.7"},
		{" 203.0.113.7:4711 ", "203.0.113.7"},
		{"2001:db8::7", "2001:db8::7"},
		{"[2001:db8::7]:4711", "2001:db8::7"},
		{"[2001:db8::7]", "2001:db8::7"},
		{"[::ffff:203.0.113.7]:4711", "203.0.113.7"},
		{"6.6.6.6:1, 203.0.113.7:4711, 10.250.0.1:80", "203.0.113.7"}, // trusted hops with ports skipped
		{"10.250.0.1:80, 10.250.0.2", "10.250.0.1"},                   // only trusted: the left-most
		{"198.51.100.1, 203.0.113.7:notaport", ""},
		{"203.0.113.7:", ""},
		{"203.0.113.7:70000", ""},
		{"[203.0.113.7]:4711", ""},
		{"[203.0.113.7]", ""},
		{"[2001:db8::7", ""},
		{"[fe80::1%eth0]:4711", ""},
		{"unknown", ""},
		{"example.org:443", ""},
	}
	for _, tt := range tests {
		t.Run(tt.xff, func(t *testing.T) {
			t.Parallel()
			s := &Server{cfg: Config{TrustedProxies: trusted}}
			r := httptest.NewRequest("GET", "/api/v1/myip", nil)
			r.RemoteAddr = "127.0.0.1:4000"
			r.Header.Set("X-Forwarded-For", tt.xff)
			got := ""
			if a, ok := s.clientAddr(r); ok {
				got = a.String()
			}
			if got != tt.want {
				t.Errorf("X-Forwarded-For %q: clientAddr %q, want %q", tt.xff, got, tt.want)
			}
		})
	}
}
