package hostname

import (
	"hash/maphash"
	"net/netip"

	"github.com/miekg/dns"
)

// addrList is a name's addresses packed end to end, each as one byte
// giving its length (4 or 16) and then its bytes: one small string per
// hostname instead of a slice header and 24 bytes per netip.Addr, which at a
// million names is a sixth of the index.
type addrList string

func packAddrs(as []netip.Addr) addrList {
	b := make([]byte, 0, len(as)*5)
	for _, a := range as {
		s := a.Unmap().AsSlice()
		b = append(append(b, byte(len(s))), s...)
	}
	return addrList(b)
}

// each calls fn with every address's bytes and whether it is IPv4.
func (l addrList) each(fn func(raw string, v4 bool)) {
	for i := 0; i < len(l); {
		n := int(l[i])
		fn(string(l[i+1:i+1+n]), n == 4)
		i += 1 + n
	}
}

// addrs unpacks the list.
func (l addrList) addrs() []netip.Addr {
	var as []netip.Addr
	l.each(func(raw string, _ bool) {
		a, _ := netip.AddrFromSlice([]byte(raw))
		as = append(as, a)
	})
	return as
}

// families reports whether the list holds IPv4 and IPv6 addresses.
func (l addrList) families() (v4, v6 bool) {
	l.each(func(_ string, is4 bool) { v4, v6 = v4 || is4, v6 || !is4 })
	return v4, v6
}

// addrRRs are the A or AAAA records of addrs that answer qtype. A plain
// loop, not each: a closure here would cost the answer path two allocations.
func addrRRs(owner string, qtype uint16, addrs addrList, ttl uint32) []dns.RR {
	var rrs []dns.RR
	for i := 0; i < len(addrs); {
		n := int(addrs[i])
		raw := addrs[i+1 : i+1+n]
		i += 1 + n
		hdr := dns.RR_Header{Name: owner, Rrtype: qtype, Class: dns.ClassINET, Ttl: ttl}
		switch {
		case n == 4 && qtype == dns.TypeA:
			rrs = append(rrs, &dns.A{Hdr: hdr, A: []byte(raw)})
		case n == 16 && qtype == dns.TypeAAAA:
			rrs = append(rrs, &dns.AAAA{Hdr: hdr, AAAA: []byte(raw)})
		}
	}
	return rrs
}

// holder identifies the hostname a node belongs to: a hash of its id
// rather than the id itself, which would be one more string a name. Two ids
// of one process colliding (2^-64 a pair) would at worst leave a released
// name to the next change of the other hostname.
func holder(id string) uint64 { return maphash.String(nameSeed, id) }
