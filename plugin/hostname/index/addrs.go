package index

import (
	"hash/maphash"
	"net/netip"

	"github.com/miekg/dns"
)

// AddrList is a name's addresses packed end to end, each as one byte
// giving its length (4 or 16) and then its bytes: one small string per
// hostname instead of a slice header and 24 bytes per netip.Addr, which at a
// million names is a sixth of the index.
type AddrList string

func PackAddrs(as []netip.Addr) AddrList {
	b := make([]byte, 0, len(as)*5)
	for _, a := range as {
		s := a.Unmap().AsSlice()
		b = append(append(b, byte(len(s))), s...)
	}
	return AddrList(b)
}

// Each calls fn with every address's bytes and whether it is IPv4.
func (l AddrList) Each(fn func(raw string, v4 bool)) {
	for i := 0; i < len(l); {
		n := int(l[i])
		fn(string(l[i+1:i+1+n]), n == 4)
		i += 1 + n
	}
}

// List unpacks the list.
func (l AddrList) List() []netip.Addr {
	var as []netip.Addr
	l.Each(func(raw string, _ bool) {
		a, _ := netip.AddrFromSlice([]byte(raw))
		as = append(as, a)
	})
	return as
}

// Families reports whether the list holds IPv4 and IPv6 addresses.
func (l AddrList) Families() (v4, v6 bool) {
	l.Each(func(_ string, is4 bool) { v4, v6 = v4 || is4, v6 || !is4 })
	return v4, v6
}

// AddrRRs are the A or AAAA records of addrs that answer qtype. A plain
// loop, not each: a closure here would cost the answer path two allocations.
func AddrRRs(owner string, qtype uint16, addrs AddrList, ttl uint32) []dns.RR {
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

// Holder identifies the hostname a node belongs to: a hash of its id
// rather than the id itself, which would be one more string a name. Two ids
// of one process colliding (2^-64 a pair) would at worst leave a released
// name to the next change of the other hostname.
func Holder(id string) uint64 { return maphash.String(nameSeed, id) }
