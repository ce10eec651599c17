package hostname

import (
	"net/netip"

	"github.com/hostmint/hostmint/plugin/hostname/answer"
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
	if !h.index.Loaded() || refusedType(fq.Qtype) != dns.RcodeSuccess { // ServeDNS's refusals
		return nil, false
	}
	z := h.index.ZoneOf(fq.Name)
	if z == nil || z.Unservable() || h.inCatalog(fq.Name, z) || !mine(z.Name) {
		return nil, false
	}
	q := answer.Ask{Name: fq.Name, Wire: fq.Wire, Qtype: fq.Qtype, Class: dns.ClassINET, ID: fq.ID, RD: fq.RD, Limit: fq.Limit}
	if fq.EDNS {
		q.Flags |= answer.EDNS
	}
	if fq.DO {
		q.Flags |= answer.DO
	}
	if fq.CO {
		q.Flags |= answer.CO
	}
	b, _ := h.answers.Respond(buf, &q, z, client)
	return b, true
}
