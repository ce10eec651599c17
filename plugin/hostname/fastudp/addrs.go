package fastudp

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// listenAddrs are the addresses fast_udp opens its sockets on for a server
// on addr (HOST:PORT). A specific address is its own. On a wildcard one
// (a block without bind, as the container's), a socket of the wildcard
// group would answer from whatever source its route picks, not the
// address a query came to: so each address of this host's interfaces in
// the wildcard's family gets sockets of its own instead, bound to it,
// which the kernel prefers to the wildcard's for the datagrams sent there
// (one reads an address added later: the server's own sockets answer it).
// alone is true then: the server has no socket in their groups.
func listenAddrs(addr string, ifaces func() ([]net.Addr, error)) (addrs []string, alone bool, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, false, err
	}
	if host != "" {
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return nil, false, fmt.Errorf("not an address: %q", addr)
		}
		if !ip.IsUnspecified() {
			return []string{addr}, false, nil
		}
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, false, fmt.Errorf("not a port: %q", addr)
	}
	v4only := host != "" && netip.MustParseAddr(host).Is4()
	as, err := ifaces()
	if err != nil {
		return nil, false, err
	}
	for _, a := range as {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		// A link-local IPv6 address needs its interface to be bound to:
		// the server's sockets answer those.
		if v4only && !ip.Is4() || ip.Is6() && ip.IsLinkLocalUnicast() {
			continue
		}
		addrs = append(addrs, netip.AddrPortFrom(ip, uint16(p)).String())
	}
	if len(addrs) == 0 {
		return nil, false, fmt.Errorf("no interface address to bind for the wildcard %q", addr)
	}
	return addrs, true, nil
}
