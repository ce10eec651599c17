package hostnames

import (
	"net/netip"
	"testing"

	"github.com/hostmint/hostmint/profile"
)

// What each profile can store: P1 one address, P2 at most one per family.
func TestCheckAddrs(t *testing.T) {
	t.Parallel()
	v4, v4b := netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("198.51.100.2")
	v6 := netip.MustParseAddr("2001:db8::1")
	tests := []struct {
		name    string
		profile profile.Profile
		addrs   []netip.Addr
		ok      bool
	}{
		{"none", 2, nil, false},
		{"one IPv4", 2, []netip.Addr{v4}, true},
		{"one IPv6", 2, []netip.Addr{v6}, true},
		{"dual stack", 2, []netip.Addr{v4, v6}, true},
		{"IPv6 first", 2, []netip.Addr{v6, v4}, false},
		{"two IPv4", 2, []netip.Addr{v4, v4b}, false},
		{"three", 2, []netip.Addr{v4, v6, v4b}, false},
		{"zero address", 2, []netip.Addr{{}}, false},
		{"zoned", 2, []netip.Addr{v6.WithZone("eth0")}, false},
		{"mapped IPv4", 2, []netip.Addr{netip.AddrFrom16(v4.As16())}, false},
		{"P1 one", 1, []netip.Addr{v6}, true},
		{"P1 dual stack", 1, []netip.Addr{v4, v6}, false},
	}
	for _, tt := range tests {
		if err := checkAddrs(tt.profile, tt.addrs); (err == nil) != tt.ok {
			t.Errorf("%s: checkAddrs = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
