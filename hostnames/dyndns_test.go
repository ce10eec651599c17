package hostnames

import (
	"net/netip"
	"testing"

	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/storage"
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

// What a dyndns2 request makes of a hostname's addresses: [P2] the family
// it leaves out is kept, and a prefix keeps the interface identifier; [P1]
// its one address.
func TestFamiliesOf(t *testing.T) {
	t.Parallel()
	a := netip.MustParseAddr
	pfx := netip.MustParsePrefix
	tests := []struct {
		name    string
		profile profile.Profile
		stored  string // the hostname's addresses
		f       Families
		want    string // comma-joined; "!" for a refusal
	}{
		{"IPv4 alone keeps the IPv6", 2, "198.51.100.1,2001:db8::1", Families{V4: a("198.51.100.9")}, "198.51.100.9,2001:db8::1"},
		{"IPv6 alone keeps the IPv4", 2, "198.51.100.1,2001:db8::1", Families{V6: a("2001:db8::9")}, "198.51.100.1,2001:db8::9"},
		{"both", 2, "198.51.100.1", Families{V4: a("198.51.100.9"), V6: a("2001:db8::9")}, "198.51.100.9,2001:db8::9"},
		{"IPv6 added to an IPv4 name", 2, "198.51.100.1", Families{V6: a("2001:db8::9")}, "198.51.100.1,2001:db8::9"},
		{"/64 prefix keeps the interface identifier", 2, "198.51.100.1,2001:db8:1:2:aaaa:bbbb:cccc:dddd",
			Families{V6Prefix: pfx("2001:db8:9:8::/64")}, "198.51.100.1,2001:db8:9:8:aaaa:bbbb:cccc:dddd"},
		{"/56 prefix keeps the subnet and interface bits", 2, "2001:db8:1:2:aaaa:bbbb:cccc:dddd",
			Families{V6Prefix: pfx("2001:db8:9:ff00::/56")}, "2001:db8:9:ff02:aaaa:bbbb:cccc:dddd"},
		{"a whole IPv6 wins over a prefix", 2, "2001:db8::1", Families{V6: a("2001:db8::9"), V6Prefix: pfx("2001:db8:9::/64")}, "2001:db8::9"},
		{"prefix without an IPv6 to keep", 2, "198.51.100.1", Families{V6Prefix: pfx("2001:db8:9::/64")}, "!"},
		{"P1: the IPv4", 1, "2001:db8::1", Families{V4: a("198.51.100.9"), V6: a("2001:db8::9")}, "198.51.100.9"},
		{"P1: the IPv6", 1, "198.51.100.1", Families{V6: a("2001:db8::9")}, "2001:db8::9"},
		{"P1: a prefix on an IPv6 name", 1, "2001:db8:1:2::7", Families{V6Prefix: pfx("2001:db8:9:9::/64")}, "2001:db8:9:9::7"},
	}
	for _, tt := range tests {
		s := &Service{core: &core{profile: tt.profile}}
		got := "!"
		if addrs, err := s.familiesOf(&storage.Hostname{Name: "h.example.net", Addrs: tt.stored}, tt.f); err == nil {
			got = joinAddrs(addrs)
		}
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
