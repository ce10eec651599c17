package adminapi

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// The client's address: the peer, unless a trusted proxy vouches for
// someone; then the right-most X-Forwarded-For hop it does not trust.
func TestClientAddr(t *testing.T) {
	t.Parallel()
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	tests := []struct {
		name    string
		trusted []netip.Prefix
		peer    string
		xff     []string
		want    string // "" when no address can be given
	}{
		{"peer, nothing trusted", nil, "192.0.2.1:4000", nil, "192.0.2.1"},
		{"header from an untrusted peer ignored", nil, "192.0.2.1:4000", []string{"198.51.100.1"}, "192.0.2.1"},
		{"header from a peer outside the list ignored", trusted, "192.0.2.1:4000", []string{"198.51.100.1"}, "192.0.2.1"},
		{"trusted peer without header", trusted, "127.0.0.1:4000", nil, "127.0.0.1"},
		{"trusted peer: the hop it saw", trusted, "127.0.0.1:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"forged left entries skipped", trusted, "127.0.0.1:4000", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1"},
		{"trusted hops skipped", trusted, "127.0.0.1:4000", []string{"6.6.6.6, 198.51.100.1, 127.0.0.9"}, "198.51.100.1"},
		{"several fields are one list", trusted, "127.0.0.1:4000", []string{"6.6.6.6", "198.51.100.2"}, "198.51.100.2"},
		{"only trusted hops: the left-most", trusted, "[fd00::1]:4000", []string{"fd00::2, 127.0.0.2"}, "fd00::2"},
		{"IPv6 peer", nil, "[2001:db8::1]:4000", nil, "2001:db8::1"},
		{"mapped IPv4 peer unmapped", nil, "[::ffff:192.0.2.7]:4000", nil, "192.0.2.7"},
		{"garbage hop from a trusted proxy", trusted, "127.0.0.1:4000", []string{"198.51.100.1, nonsense"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &Server{cfg: Config{TrustedProxies: tt.trusted}}
			r := httptest.NewRequest("GET", "/api/v1/myip", nil)
			r.RemoteAddr = tt.peer
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			a, ok := s.clientAddr(r)
			got := ""
			if ok {
				got = a.String()
			}
			if got != tt.want {
				t.Errorf("clientAddr = %q, want %q", got, tt.want)
			}
		})
	}
}

// myip and myipv6: the first IPv4, the first IPv6 and an IPv6 prefix, as
// sent; what they mean for the hostname is the rule's (SetFamilies).
func TestDynFamilies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		want  string // v4|v6|prefix; "!" for badagent
	}{
		{"myip=198.51.100.1", "198.51.100.1||"},
		{"myip=198.51.100.1,198.51.100.2,2001:db8::1,2001:db8::2", "198.51.100.1|2001:db8::1|"},
		{"myip=2001:db8::1&myipv6=2001:db8::2", "|2001:db8::1|"},
		{"myip=198.51.100.1&myipv6=2001:db8::2", "198.51.100.1|2001:db8::2|"},
		{"myipv6=2001:db8:1:2::/64", "||2001:db8:1:2::/64"}, // a Fritz!Box's <ip6lanprefix>
		{"myip=198.51.100.1&myipv6=2001:db8:1:2::/56", "198.51.100.1||2001:db8:1:2::/56"},
		{"", "192.0.2.9||"}, // the peer
		{"myip=198.51.100.300", "!"},
		{"myip=198.51.100.1,", "!"},
		{"myipv6=fe80::1%25eth0", "!"},
		{"myipv6=198.51.100.0/24", "!"},
		{"myipv6=2001:db8::/x", "!"},
	}
	for _, tt := range tests {
		s := &Server{}
		r := httptest.NewRequest("GET", "/nic/update?"+tt.query, nil)
		r.RemoteAddr = "192.0.2.9:5000"
		f, ok := s.dynFamilies(r)
		got := "!"
		if ok {
			got = addrText(f.V4) + "|" + addrText(f.V6) + "|"
			if f.V6Prefix.IsValid() {
				got += f.V6Prefix.String()
			}
		}
		if got != tt.want {
			t.Errorf("%q: %q, want %q", tt.query, got, tt.want)
		}
	}
}

func addrText(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}
