package hostname

import (
	"net/netip"

	"github.com/hostmint/hostmint/plugin/hostname/fastudp"
	"github.com/miekg/dns"
)

// fastAnswers is the plugin's side of fast_udp: a plain query of a name
// the index answers, in a zone the server gives this block, goes to the
// answerer, as ServeDNS gives it.
type fastAnswers struct{ h *Handler }

// Answer implements fastudp.Answerer.
func (a fastAnswers) Answer(buf []byte, fq fastudp.Query, client netip.Addr, mine func(zone string) bool) ([]byte, bool) {
	h := a.h
	if !h.index.Loaded() {
		return nil, false
	}
	z := h.index.ZoneOf(fq.Name)
	if z == nil || z.Unservable() || h.inCatalog(fq.Name, z) || !mine(z.Name) {
		return nil, false
	}
	q := ask{name: fq.Name, wire: fq.Wire, qtype: fq.Qtype, class: dns.ClassINET, id: fq.ID, rd: fq.RD, cd: fq.CD, limit: fq.Limit}
	if fq.EDNS {
		q.flags |= askEDNS
	}
	if fq.DO {
		q.flags |= askDO
	}
	b, _ := h.answers.respond(buf, &q, z, client)
	return b, true
}
