package addrclass

import (
	"errors"
	"net/netip"
	"testing"
)

// addrSeeds are the shapes callers send and the ones netip is lenient or
// strict about (zones, mapped forms, leading zeros, brackets, prefixes).
var addrSeeds = []string{
	"", "1.2.3.4", "8.8.8.8", "10.0.0.1", "192.0.2.1", "255.255.255.255", "0.0.0.0",
	"01.2.3.4", "1.2.3.4.5", "1.2.3", "256.1.1.1", " 1.2.3.4", "1.2.3.4 ", "1.2.3.4/32",
	"::", "::1", "2606:4700::1111", "2001:db8::1", "fe80::1%eth0", "fe80::1%",
	"::ffff:1.2.3.4", "::ffff:10.0.0.1", "::ffff:0:1.2.3.4", "64:ff9b::1.2.3.4", "[::1]",
	"2001:0db8:0000:0000:0000:0000:0000:0001", "1:2:3:4:5:6:7:8:9", "::ffff:192.0.2.1%1",
	"\x00", "١.٢.٣.٤", "example.org",
}

// FuzzParse checks that Parse accepts exactly the plain, zoneless addresses
// netip accepts, that what it returns survives a round trip through its
// text form, and that the class never calls a range the standard library
// knows to be non-global public: a private address registered as public
// would skip the Business-plan gate.
func FuzzParse(f *testing.F) {
	for _, s := range addrSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		std, stdErr := netip.ParseAddr(s)
		if want := stdErr == nil && std.Zone() == ""; (err == nil) != want {
			t.Fatalf("Parse(%q) err = %v; netip says %v, %v", s, err, std, stdErr)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalid) || a.IsValid() {
				t.Fatalf("Parse(%q) = %v, %v; want the zero Addr and ErrInvalid", s, a, err)
			}
			return
		}
		if !a.IsValid() || a.Zone() != "" || a.Is4In6() || a != std.Unmap() {
			t.Fatalf("Parse(%q) = %v; want %v unmapped, without zone", s, a, std)
		}
		if back, err := Parse(a.String()); err != nil || back != a {
			t.Fatalf("Parse(%q) = %v, but Parse(%q) = %v, %v", s, a, a.String(), back, err)
		}

		class := Of(a)
		if class != Public && class != Private {
			t.Fatalf("Of(%v) = %q", a, class)
		}
		// The mapped form is the same address: same class, and A, not AAAA.
		if a.Is4() {
			mapped := netip.AddrFrom16(a.As16())
			if Of(mapped) != class || RecordType(mapped) != "A" {
				t.Fatalf("%v is %s/A but its mapped form %v is %s/%s", a, class, mapped, Of(mapped), RecordType(mapped))
			}
		}
		if rt := RecordType(a); (rt == "A") != a.Is4() || rt != "A" && rt != "AAAA" {
			t.Fatalf("RecordType(%v) = %q", a, rt)
		}
		if class == Public && (a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
			a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified()) {
			t.Fatalf("Of(%v) = public, but it is not a global unicast address", a)
		}
	})
}
