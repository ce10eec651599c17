package hostname

import (
	"net/netip"
	"strings"
	"time"

	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
)

// TTLs of the records this plugin writes.
const (
	ttlNS      = 3600
	ttlSOA     = 3600
	soaMinimum = 60 // negative caching: a name made after a miss resolves within a minute
	soaRefresh = 3600
	soaRetry   = 600
	soaExpire  = 1209600
)

// answer fills m for a question inside zone z.
func (h *Hostname) answer(m *dns.Msg, z *zone, state request.Request) {
	qname, qtype := state.Name(), state.QType()
	owner := state.QName() // the client's case

	if qname == z.name {
		h.apex(m, z, owner, qtype)
		return
	}
	if addrs, ok := h.static[qname]; ok {
		if m.Answer = addrRRs(owner, qtype, addrs, ttlNS); len(m.Answer) == 0 {
			h.nodata(m, z)
		}
		return
	}
	if e := h.index.host(qname); e != nil {
		if ttl, live := e.ttl(h.cfg.addressTTL, time.Now()); live {
			if m.Answer = addrRRs(owner, qtype, e.addrs, ttl); len(m.Answer) == 0 {
				h.nodata(m, z)
			}
			return
		}
	}
	if h.aboveStatic(qname) {
		h.nodata(m, z)
		return
	}
	m.Rcode = dns.RcodeNameError
	m.Ns = []dns.RR{h.soa(z, soaMinimum)}
}

// ttl is the TTL to serve e with: never past its expiry, so caches drop an
// idle name when we do. live is false once it has expired.
func (e *host) ttl(max uint32, now time.Time) (ttl uint32, live bool) {
	if e.expires == 0 {
		return max, true
	}
	left := e.expires - now.UnixMilli()
	if left <= 0 {
		return 0, false
	}
	return uint32(min(int64(max), (left+999)/1000)), true
}

func (h *Hostname) apex(m *dns.Msg, z *zone, owner string, qtype uint16) {
	switch qtype {
	case dns.TypeSOA:
		m.Answer = []dns.RR{h.soa(z, ttlSOA)}
		m.Answer[0].Header().Name = owner
	case dns.TypeNS:
		m.Answer = h.nsRRs(owner)
		m.Extra = h.glue()
	case dns.TypeANY:
		m.Answer = append([]dns.RR{h.soa(z, ttlSOA)}, h.nsRRs(owner)...)
		m.Answer[0].Header().Name = owner
	default:
		h.nodata(m, z)
	}
}

func (h *Hostname) nodata(m *dns.Msg, z *zone) {
	m.Answer = nil
	m.Ns = []dns.RR{h.soa(z, soaMinimum)}
}

// soa is the zone's SOA with the given TTL. The serial is the newest change
// applied, so every node that has applied the same changes agrees on it.
func (h *Hostname) soa(z *zone, ttl uint32) dns.RR {
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: z.name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: ttl},
		Ns:      h.ns[0],
		Mbox:    "hostmaster." + z.name,
		Serial:  h.index.serial.Load(),
		Refresh: soaRefresh, Retry: soaRetry, Expire: soaExpire, Minttl: soaMinimum,
	}
}

func (h *Hostname) nsRRs(owner string) []dns.RR {
	rrs := make([]dns.RR, len(h.ns))
	for i, n := range h.ns {
		rrs[i] = &dns.NS{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: ttlNS}, Ns: n}
	}
	return rrs
}

// glue is the addresses of the nameservers whose names are in our zones.
func (h *Hostname) glue() []dns.RR {
	var rrs []dns.RR
	for _, n := range h.ns {
		if h.index.zoneOf(n) == nil {
			continue
		}
		rrs = append(rrs, addrRRs(n, dns.TypeA, h.static[n], ttlNS)...)
		rrs = append(rrs, addrRRs(n, dns.TypeAAAA, h.static[n], ttlNS)...)
	}
	return rrs
}

// addrRRs are the A or AAAA records of addrs that answer qtype (ANY: all).
func addrRRs(owner string, qtype uint16, addrs []netip.Addr, ttl uint32) []dns.RR {
	var rrs []dns.RR
	for _, a := range addrs {
		switch {
		case a.Is4() && (qtype == dns.TypeA || qtype == dns.TypeANY):
			rrs = append(rrs, &dns.A{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: ttl}, A: a.AsSlice()})
		case a.Is6() && (qtype == dns.TypeAAAA || qtype == dns.TypeANY):
			rrs = append(rrs, &dns.AAAA{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: ttl}, AAAA: a.AsSlice()})
		}
	}
	return rrs
}

// aboveStatic reports whether qname is an empty non-terminal above a
// nameserver name (ns1.sub.example.org makes sub.example.org exist).
func (h *Hostname) aboveStatic(qname string) bool {
	for n := range h.static {
		if len(n) > len(qname) && n[len(n)-len(qname)-1] == '.' && strings.HasSuffix(n, qname) {
			return true
		}
	}
	return false
}
