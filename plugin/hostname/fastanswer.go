package hostname

import (
	"net/netip"
	"sync"

	"github.com/miekg/dns"
)

// fastAnswerer gives fast_udp's plain queries to the answerer, for one
// server: routes are its zone keys, true where this block is the one the
// server gives the key's names to. What it does not take (a name of
// another block or plugin, a type a plugin before this one acts on), the
// CoreDNS server answers.
type fastAnswerer struct {
	h      *Handler
	routes map[string]bool
	ours   sync.Map // zone name -> bool: the server gives every name of the zone here
}

// Answer implements udpbatch.Answerer: the answerer's answer to a plain
// query of a name the index answers (ServeDNS's, byte for byte); nil and
// false for every other query, which the CoreDNS server answers; nil and
// true when response_rate_limit drops it.
func (a *fastAnswerer) Answer(buf, q []byte, client netip.AddrPort) ([]byte, bool) {
	h := a.h
	nb := names.Get().(*[256]byte)
	defer names.Put(nb)
	p, ok := parseQuery(q, nb)
	if !ok || !h.index.Loaded() || !fromBytes(p.qtype) {
		return nil, false
	}
	z := h.index.zoneOf(p.name)
	if z == nil || z.unservable() || h.inCatalog(p.name, z) || !a.routed(z) {
		return nil, false
	}
	b, _ := h.answers.respond(buf, &p, z, client.Addr())
	return b, b == nil
}

// names hold the lowercase name of a query being answered: the answerer's
// ask points at it (and keeps a copy of what it keeps).
var names = sync.Pool{New: func() any { return new([256]byte) }}

// fromBytes reports whether a query of qtype may be answered beside the
// server: not the types a plugin before this one may take (transfer takes
// AXFR and IXFR, any takes ANY), DS (the server gives it to a parent
// zone's block when it has one), nor the meta-types ServeDNS refuses.
func fromBytes(qtype uint16) bool {
	switch qtype {
	case dns.TypeAXFR, dns.TypeIXFR, dns.TypeTKEY, dns.TypeTSIG, dns.TypeMAILA, dns.TypeMAILB, dns.TypeANY, dns.TypeDS:
		return false
	}
	return true
}

// routed reports whether the server gives every name of z to this block:
// the nearest of its keys at or above z is this block's, and none of its
// keys is below z (another block's zone inside it).
func (a *fastAnswerer) routed(z *zone) bool {
	if v, ok := a.ours.Load(z.name); ok {
		return v.(bool)
	}
	ours := a.routes["."] // the server's last resort
	for k := range a.routes {
		if k != z.name && dns.IsSubDomain(z.name, k) {
			a.ours.Store(z.name, false)
			return false
		}
	}
	for off, end := 0, false; !end; off, end = dns.NextLabel(z.name, off) {
		if v, ok := a.routes[z.name[off:]]; ok {
			ours = v
			break
		}
	}
	a.ours.Store(z.name, ours)
	return ours
}
