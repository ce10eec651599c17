package adminapi

import (
	"net/netip"
	"strings"

	"github.com/hostmint/hostmint/addrclass"
)

// hopAddr reads one X-Forwarded-For entry. Besides a bare address, proxies
// write the port the client came from (192.0.2.7:4711, [2001:db8::7]:4711:
// Azure's gateways, some IIS set-ups) or an IPv6 address in brackets
// (RFC 7239's form carried over): the address is the client either way.
// Anything else (a name, "unknown", a zone) is not an address.
func hopAddr(s string) (netip.Addr, error) {
	s = strings.TrimSpace(s)
	if a, err := addrclass.Parse(s); err == nil {
		return a, nil
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return addrclass.Parse(ap.Addr().String())
	}
	if inner, ok := strings.CutPrefix(s, "["); ok {
		if inner, ok := strings.CutSuffix(inner, "]"); ok && strings.Contains(inner, ":") {
			return addrclass.Parse(inner)
		}
	}
	return netip.Addr{}, addrclass.ErrInvalid
}
