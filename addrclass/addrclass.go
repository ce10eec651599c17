// Package addrclass parses the addresses callers register and sorts them into
// the two classes the spec knows: public (internet-routable) and private
// (RFC 1918, loopback, link-local, unique local and every other
// special-purpose range). It knows nothing of plans or hostnames.
package addrclass

import (
	"errors"
	"net/netip"
)

// Class is an address class.
type Class string

// The classes.
const (
	Public  Class = "public"
	Private Class = "private"
)

// ErrInvalid is returned for text that is not a plain IPv4 or IPv6 address.
var ErrInvalid = errors.New("not an IPv4 or IPv6 address")

// Parse reads an IPv4 or IPv6 address. IPv4-mapped IPv6 addresses are taken as
// the IPv4 address they carry, so the record type follows what the address
// is; zoned addresses (fe80::1%eth0) have no meaning in DNS and are refused.
func Parse(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, ErrInvalid
	}
	return a.Unmap(), nil
}

// IANA special-purpose registries, less the ranges marked globally reachable
// that callers really use. Everything in here is "private" to this service.
var special4 = prefixes(
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24",
	"192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
	"224.0.0.0/4", "240.0.0.0/4",
)

// Only 2000::/3 is global unicast; inside it these are not routable.
var (
	global6  = netip.MustParsePrefix("2000::/3")
	special6 = prefixes("2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20")
)

// Of returns the class of a.
func Of(a netip.Addr) Class {
	a = a.Unmap()
	if a.Is4() {
		if contains(special4, a) {
			return Private
		}
		return Public
	}
	if !global6.Contains(a) || contains(special6, a) {
		return Private
	}
	return Public
}

// RecordType is the DNS type that carries a: "A" or "AAAA".
func RecordType(a netip.Addr) string {
	if a.Unmap().Is4() {
		return "A"
	}
	return "AAAA"
}

func contains(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}
